package gitx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/zergrush/zerg/internal/pathx"
)

// ErrUntrustedGit marks a trusted workspace whose .git entry is no longer
// zerg's: a worker replaced or redirected it.
var ErrUntrustedGit = errors.New("workspace git metadata is not zerg's")

// TrustWorkspace trusts dir (see Runner.Trusted) for this runner and every
// runner copied from it with In or Trust, including the Repo it belongs to,
// until UntrustWorkspace. Safe for concurrent use. Runners not made by New
// cannot trust at run time.
func (r *Runner) TrustWorkspace(dir string) error {
	if r.shared == nil {
		return errors.New("gitx: runner not created by New cannot trust workspaces")
	}
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("gitx: trusted workspace %q is not absolute", dir)
	}
	r.shared.mu.Lock()
	defer r.shared.mu.Unlock()
	r.shared.dirs = append(r.shared.dirs, filepath.Clean(dir))
	return nil
}

// UntrustWorkspace undoes TrustWorkspace (after the workspace is removed).
func (r *Runner) UntrustWorkspace(dir string) {
	if r.shared == nil {
		return
	}
	r.shared.mu.Lock()
	defer r.shared.mu.Unlock()
	r.shared.dirs = slices.DeleteFunc(r.shared.dirs, func(d string) bool { return d == filepath.Clean(dir) })
}

func (r *Runner) trustedList() []string {
	out := slices.Clone(r.Trusted)
	if r.shared != nil {
		r.shared.mu.Lock()
		out = append(out, r.shared.dirs...)
		r.shared.mu.Unlock()
	}
	return out
}

// trustedFor returns the trusted workspaces a call touches: the one
// containing r.Dir and any named exactly as an argument.
func (r *Runner) trustedFor(args []string) []string {
	list := r.trustedList()
	if len(list) == 0 {
		return nil
	}
	dir, _ := filepath.Abs(r.Dir)
	var out []string
	for _, t := range list {
		t = filepath.Clean(t)
		hit := false
		if pathx.Within(t, dir) {
			hit = true
		}
		for _, a := range args {
			hit = hit || (filepath.IsAbs(a) && filepath.Clean(a) == t)
		}
		if hit && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// safeForms are the spellings git may compare safe.directory with: the path
// as given and with symlinks resolved.
func safeForms(dir string) []string {
	out := []string{dir}
	if r, err := filepath.EvalSymlinks(dir); err == nil && r != dir {
		out = append(out, r)
	}
	return out
}

// checkGitEntry verifies that dir/.git is zerg's own: not a symlink, owned
// by our effective uid, and either a git directory whose config is ours or a
// worktree's "gitdir:" file pointing outside dir at a directory that is ours.
func checkGitEntry(dir string) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrUntrustedGit, fmt.Sprintf(format, a...))
	}
	gp := filepath.Join(dir, ".git")
	st, err := os.Lstat(gp)
	if err != nil {
		return bad("%v", err)
	}
	if !ownedByUs(st) {
		return bad("%s is owned by uid %d, not by zerg (uid %d)", gp, uidOf(st), os.Geteuid())
	}
	switch {
	case st.Mode()&os.ModeSymlink != 0:
		return bad("%s is a symlink", gp)
	case st.IsDir():
		cfg := filepath.Join(gp, "config")
		if cst, err := os.Lstat(cfg); err == nil && (!ownedByUs(cst) || !cst.Mode().IsRegular()) {
			return bad("%s is not zerg's", cfg)
		}
		return nil
	case st.Mode().IsRegular():
		data, err := os.ReadFile(gp)
		if err != nil {
			return bad("%v", err)
		}
		line := strings.TrimSpace(string(data))
		target, ok := strings.CutPrefix(line, "gitdir: ")
		if !ok || strings.Contains(target, "\n") {
			return bad("%s is not a gitdir file", gp)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		target = filepath.Clean(target)
		if pathx.Within(dir, target) {
			return bad("%s points inside the workspace", gp)
		}
		tst, err := os.Lstat(target)
		if err != nil {
			return bad("%v", err)
		}
		if !tst.IsDir() || !ownedByUs(tst) {
			return bad("%s is not a directory owned by zerg", target)
		}
		return nil
	}
	return bad("%s is not a file or directory", gp)
}

func ownedByUs(st os.FileInfo) bool { return uidOf(st) == os.Geteuid() }

func uidOf(st os.FileInfo) int {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(sys.Uid)
	}
	return -1
}
