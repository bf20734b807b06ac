package gitx

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
)

// IsAncestor reports whether ancestor is an ancestor of (or equal to)
// descendant. git answers with its exit code: 0 yes, 1 no, anything else is
// an error (an unknown commit, a broken repository) and never a "no".
func (r *Runner) IsAncestor(ctx context.Context, ancestor, descendant string) (bool, error) {
	for _, rev := range []string{ancestor, descendant} {
		if rev == "" || strings.HasPrefix(rev, "-") {
			return false, &Error{Args: []string{"merge-base", "--is-ancestor"}, Dir: r.Dir, ExitCode: -1, Stderr: "invalid revision " + rev}
		}
	}
	_, err := r.Run(ctx, "merge-base", "--is-ancestor", ancestor, descendant)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return false, nil
	}
	return err == nil, err
}

// CommonDir is the repository's common git directory (the main .git of
// every linked worktree), absolute.
func (r *Runner) CommonDir(ctx context.Context) (string, error) {
	dir, err := trim(r.Run(ctx, "rev-parse", "--git-common-dir"))
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(r.Dir, dir)
	}
	return filepath.Clean(dir), nil
}

// TopLevel is the working tree's top directory.
func (r *Runner) TopLevel(ctx context.Context) (string, error) {
	return trim(r.Run(ctx, "rev-parse", "--show-toplevel"))
}

// CurrentBranch is the branch checked out in the working tree, "" when HEAD
// is detached.
func (r *Runner) CurrentBranch(ctx context.Context) (string, error) {
	out, err := r.Run(ctx, "symbolic-ref", "--quiet", "--short", "HEAD")
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return "", nil
	}
	return strings.TrimSpace(out), err
}

// Worktree is one entry of `git worktree list`.
type Worktree struct {
	Path     string
	Head     string
	Branch   string // short name, "" when detached
	Bare     bool
	Detached bool
	Locked   bool
	Prunable bool // its directory is gone
}

// Worktrees lists the repository's working trees, the main one first.
func (r *Runner) Worktrees(ctx context.Context) ([]Worktree, error) {
	out, err := r.Run(ctx, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	return parseWorktreesZ(out), nil
}

func parseWorktreesZ(out string) []Worktree {
	var list []Worktree
	var cur *Worktree
	for _, field := range strings.Split(out, "\x00") {
		if field == "" {
			cur = nil
			continue
		}
		key, val, _ := strings.Cut(field, " ")
		if key == "worktree" {
			list = append(list, Worktree{Path: val})
			cur = &list[len(list)-1]
			continue
		}
		if cur == nil {
			continue
		}
		switch key {
		case "HEAD":
			cur.Head = val
		case "branch":
			cur.Branch = strings.TrimPrefix(val, "refs/heads/")
		case "bare":
			cur.Bare = true
		case "detached":
			cur.Detached = true
		case "locked":
			cur.Locked = true
		case "prunable":
			cur.Prunable = true
		}
	}
	return list
}

// WorktreeOf returns the working tree where branch is checked out, or "".
func (r *Runner) WorktreeOf(ctx context.Context, branch string) (string, error) {
	list, err := r.Worktrees(ctx)
	if err != nil {
		return "", err
	}
	for _, w := range list {
		if w.Branch == branch {
			return w.Path, nil
		}
	}
	return "", nil
}

// HooksDir is the directory git runs the repository's hooks from: .git/hooks,
// the common directory's hooks in a linked worktree, or core.hooksPath. It is
// the one call that must not carry zerg's core.hooksPath=/dev/null (the
// answer would be /dev/null); rev-parse runs no hook.
func HooksDir(ctx context.Context, root string) (string, error) {
	r := New(root)
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	args := []string{"rev-parse", "--git-path", "hooks"}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = root
	cmd.Env = r.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", &Error{Args: args, Dir: root, ExitCode: cmd.ProcessState.ExitCode(), Stderr: stderr.String(), Err: err}
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", &Error{Args: args, Dir: root, ExitCode: 0, Stderr: "git printed nothing"}
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	return filepath.Clean(dir), nil
}
