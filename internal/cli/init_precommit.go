package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gitx"
)

// precommitMarker is the comment that identifies the hook as zerg's: only a
// hook carrying it is ever rewritten.
const precommitMarker = "# zerg: pre-commit secret scan"

// precommitExecutable locates the zerg binary the hook runs; tests replace it.
var precommitExecutable = os.Executable

// precommitStep is the init step that installs the pre-commit hook running
// `zerg scan --staged` in the hooks directory git uses (core.hooksPath when
// set). It never replaces a hook that is not zerg's: it reports it and the
// line to add instead.
func precommitStep() initStep {
	return initStep{name: "pre-commit hook", check: checkPrecommitHook, apply: installPrecommitHook}
}

// gitHooksDir asks git where hooks live: .git/hooks, the common directory's
// hooks in a linked worktree, or core.hooksPath. This call must not override
// core.hooksPath (zerg's usual -c core.hooksPath=/dev/null) or the answer
// would be /dev/null; rev-parse runs no hook.
func gitHooksDir(env *initEnv) (string, error) {
	dir, err := gitx.HooksDir(env.ctx, env.root)
	if err != nil {
		return "", fmt.Errorf("find the git hooks directory: %w", err)
	}
	return dir, nil
}

func checkPrecommitHook(env *initEnv) error {
	if _, err := gitHooksDir(env); err != nil {
		return usageErrorf("%v", err)
	}
	return nil
}

// precommitScript is the hook's content. The absolute path pins the zerg that
// ran init; if it disappears (upgrade, go run), zerg on PATH is used.
func precommitScript(exe string) string {
	return "#!/bin/sh\n" +
		precommitMarker + " (installed by zerg init; see docs/secrets.md)\n" +
		"# Refuses the commit when the staged changes add a secret (API key, token,\n" +
		"# private key). False positives go in .zerg/secrets-allow.\n" +
		"zerg=" + shellQuote(exe) + "\n" +
		"[ -x \"$zerg\" ] || zerg=zerg\n" +
		"exec \"$zerg\" scan --staged --quiet\n"
}

// precommitBinary is the zerg path written into the hook: the running binary,
// unless it is a temporary build (go run, go test) that will not outlive this
// process.
func precommitBinary() string {
	exe, err := precommitExecutable()
	if err != nil || exe == "" || !filepath.IsAbs(exe) {
		return "zerg"
	}
	// go run and go test build into go-build directories; a binary built
	// anywhere else (a clone under /tmp included) is a real install.
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "zerg"
	}
	return exe
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func installPrecommitHook(env *initEnv, r *initReport) error {
	dir, err := gitHooksDir(env)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "pre-commit")
	show := relOrAbs(env.root, path)
	exe := precommitBinary()
	want := precommitScript(exe)
	addLine := shellQuote(exe) + " scan --staged"

	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		// core.hooksPath=/dev/null and the like: hooks are off on purpose.
		r.add(&r.Existing, "skipped", show, "the hooks path is not a directory, so git runs no hooks; nothing installed")
		return nil
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := writeHookExcl(path, want); err != nil {
			return err
		}
		r.add(&r.Created, "created", show, "runs zerg scan --staged")
		return nil
	case err != nil:
		return err
	}
	var old []byte
	if fi.Mode().IsRegular() {
		if old, err = os.ReadFile(path); err != nil {
			return err
		}
	}
	switch {
	case bytes.Contains(old, []byte(precommitMarker)) && string(old) == want && fi.Mode().Perm()&0o111 != 0:
		r.add(&r.Existing, "exists", show, "zerg's secret scan")
	case bytes.Contains(old, []byte(precommitMarker)):
		// Ours, from another zerg binary or version: safe to rewrite.
		if err := replaceHook(path, want); err != nil {
			return err
		}
		r.add(&r.Updated, "updated", show, "zerg's secret scan")
	case bytes.Contains(old, []byte("scan --staged")):
		r.add(&r.Existing, "exists", show, "your hook already runs zerg scan --staged")
	default:
		// The user's hook (or a hook manager's symlink): never touched.
		r.add(&r.Existing, "kept", show, "not zerg's, left as is; to scan commits for secrets add this line to it: "+addLine)
	}
	return nil
}

// writeHookExcl creates the hook, executable; O_EXCL so a hook that appeared
// since the check is never overwritten.
func writeHookExcl(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
	}
	return err
}

// replaceHook rewrites zerg's own hook through a temporary file and a rename,
// so a commit running concurrently sees the old or the new hook, never half.
func replaceHook(path, content string) error {
	return fsx.WriteFileAtomicMode(path, []byte(content), 0o755)
}
