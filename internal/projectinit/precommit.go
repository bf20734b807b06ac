package projectinit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/textx"
)

// PrecommitMarker is the comment that identifies the hook as zerg's: only a
// hook carrying it is ever rewritten.
const PrecommitMarker = "# zerg: pre-commit secret scan"

// HooksDir asks git where hooks live: .git/hooks, the common directory's
// hooks in a linked worktree, or core.hooksPath. This call must not override
// core.hooksPath (zerg's usual -c core.hooksPath=/dev/null) or the answer
// would be /dev/null; rev-parse runs no hook.
func HooksDir(ctx context.Context, root string) (string, error) {
	dir, err := gitx.HooksDir(ctx, root)
	if err != nil {
		return "", fmt.Errorf("find the git hooks directory: %w", err)
	}
	return dir, nil
}

// CheckPrecommitHook fails when git cannot say where its hooks live.
func CheckPrecommitHook(ctx context.Context, root string) error {
	_, err := HooksDir(ctx, root)
	return err
}

// PrecommitScript is the hook's content. The absolute path pins the zerg that
// ran init; if it disappears (upgrade, go run), zerg on PATH is used.
func PrecommitScript(exe string) string {
	return "#!/bin/sh\n" +
		PrecommitMarker + " (installed by zerg init; see docs/secrets.md)\n" +
		"# Refuses the commit when the staged changes add a secret (API key, token,\n" +
		"# private key). False positives go in .zerg/secrets-allow.\n" +
		"zerg=" + textx.ShellQuote(exe) + "\n" +
		"[ -x \"$zerg\" ] || zerg=zerg\n" +
		"exec \"$zerg\" scan --staged --quiet\n"
}

// PrecommitBinary is the zerg path written into the hook: exe, the running
// binary (os.Executable's answer and error), unless it is unknown, relative
// or a temporary build (go run, go test) that will not outlive this process.
func PrecommitBinary(exe string, err error) string {
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

// InstallPrecommitHook installs the hook running `zerg scan --staged` (exe
// being the zerg it runs, see PrecommitBinary) in the hooks directory git
// uses. It rewrites only zerg's own hook; a hook that is not zerg's is kept
// and the outcome names the line to add to it instead.
func InstallPrecommitHook(ctx context.Context, root, exe string) (Outcome, error) {
	dir, err := HooksDir(ctx, root)
	if err != nil {
		return Outcome{}, err
	}
	path := filepath.Join(dir, "pre-commit")
	show := pathx.RelOrAbs(root, path)
	want := PrecommitScript(exe)
	addLine := textx.ShellQuote(exe) + " scan --staged"

	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		// core.hooksPath=/dev/null and the like: hooks are off on purpose.
		return Outcome{Existing, "skipped", show, "the hooks path is not a directory, so git runs no hooks; nothing installed"}, nil
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return Outcome{}, err
		}
		if err := writeHookExcl(path, want); err != nil {
			return Outcome{}, err
		}
		return created(show, "runs zerg scan --staged"), nil
	case err != nil:
		return Outcome{}, err
	}
	var old []byte
	if fi.Mode().IsRegular() {
		if old, err = os.ReadFile(path); err != nil {
			return Outcome{}, err
		}
	}
	switch {
	case bytes.Contains(old, []byte(PrecommitMarker)) && string(old) == want && fi.Mode().Perm()&0o111 != 0:
		return exists(show, "zerg's secret scan"), nil
	case bytes.Contains(old, []byte(PrecommitMarker)):
		// Ours, from another zerg binary or version: safe to rewrite,
		// through a temporary file and a rename, so a commit running
		// concurrently sees the old or the new hook, never half.
		if err := fsx.WriteFileAtomicMode(path, []byte(want), 0o755); err != nil {
			return Outcome{}, err
		}
		return Outcome{Updated, "updated", show, "zerg's secret scan"}, nil
	case bytes.Contains(old, []byte("scan --staged")):
		return exists(show, "your hook already runs zerg scan --staged"), nil
	default:
		// The user's hook (or a hook manager's symlink): never touched.
		return Outcome{Existing, "kept", show, "not zerg's, left as is; to scan commits for secrets add this line to it: " + addLine}, nil
	}
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
