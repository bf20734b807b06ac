package gitx

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nobody is an unprivileged uid that needs no account: the kernel only
// compares numbers.
const nobody = 65534

func chownTree(t *testing.T, dir string, keep string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == keep {
			return nil
		}
		return os.Lchown(p, nobody, nobody)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTrustedWorkspace: a worktree handed to another user is refused by git
// (dubious ownership) unless zerg trusts that exact path, and then only while
// its .git file is still zerg's. Hooks still never run.
func TestTrustedWorkspace(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root to change file owners (CI runs as root)")
	}
	r := newRepo(t)
	ctx := context.Background()
	ws := filepath.Join(t.TempDir(), "ws")
	if err := r.AddWorktree(ctx, ws, "task", "main"); err != nil {
		t.Fatal(err)
	}
	chownTree(t, ws, filepath.Join(ws, ".git"))
	write(t, filepath.Join(ws, "new.txt"), "x\n")
	if err := os.Lchown(filepath.Join(ws, "new.txt"), nobody, nobody); err != nil {
		t.Fatal(err)
	}

	plain := r.In(ws)
	if _, err := plain.Run(ctx, "status", "--porcelain"); err == nil || !strings.Contains(err.Error(), "dubious ownership") {
		t.Fatalf("untrusted foreign workspace: %v", err)
	}
	trusted := r.Trust(ws).In(ws)
	// A hook the worker planted in the main repo would need root; one in a
	// hooksPath it could name is ignored anyway.
	marker := filepath.Join(t.TempDir(), "ran")
	write(t, filepath.Join(r.Dir, ".git", "hooks", "pre-commit"), "#!/bin/sh\ntouch "+marker+"\n")
	if err := os.Chmod(filepath.Join(r.Dir, ".git", "hooks", "pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := trusted.Commit(ctx, "task work", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a hook ran")
	}
	if out := mustRun(t, trusted.In(filepath.Join(ws)), "log", "--format=%s", "-1"); strings.TrimSpace(out) != "task work" {
		t.Fatalf("log %q", out)
	}

	// A nested repository the worker made inside is not trusted.
	nested := filepath.Join(ws, "sub")
	if err := os.Mkdir(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	mustRun(t, New(nested), "init", "--quiet")
	chownTree(t, nested, "")
	if _, err := r.Trust(ws).In(nested).Run(ctx, "status"); err == nil {
		t.Fatal("nested worker repository trusted")
	}

	// The worker replaces .git with its own file pointing at a gitdir it
	// controls: zerg refuses to run git there at all.
	evil := filepath.Join(t.TempDir(), "evilgit")
	if err := os.MkdirAll(evil, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(evil, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	gitFile := filepath.Join(ws, ".git")
	orig, err := os.ReadFile(gitFile)
	if err != nil {
		t.Fatal(err)
	}
	for name, tamper := range map[string]func(){
		"foreign owner": func() {
			os.Remove(gitFile)
			write(t, gitFile, string(orig))
			os.Lchown(gitFile, nobody, nobody)
		},
		"points at a foreign gitdir": func() {
			os.Remove(gitFile)
			write(t, gitFile, "gitdir: "+evil+"\n")
		},
		"points inside the workspace": func() {
			os.Remove(gitFile)
			write(t, gitFile, "gitdir: sub/.git\n")
		},
		"symlink": func() {
			os.Remove(gitFile)
			os.Symlink(filepath.Join(r.Dir, ".git"), gitFile)
		},
	} {
		tamper()
		_, err := trusted.Run(ctx, "status")
		if !errors.Is(err, ErrUntrustedGit) {
			t.Errorf("%s: %v", name, err)
		}
	}
	os.Remove(gitFile)
	write(t, gitFile, string(orig))
	if _, err := trusted.Run(ctx, "status"); err != nil {
		t.Fatalf("restored: %v", err)
	}
	// Trust does not change the original runner.
	if len(r.Trusted) != 0 {
		t.Fatal("Trust modified its receiver")
	}

	// Run-time trust on the Repo: its worktree removal (which runs git
	// status inside the workspace) works, and nothing is trusted after.
	if _, err := r.In(ws).Run(ctx, "status"); err == nil {
		t.Fatal("trusted before TrustWorkspace")
	}
	if err := r.TrustWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(nested); err != nil {
		t.Fatal(err)
	}
	if _, err := r.In(ws).Run(ctx, "add", "-A"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.In(ws).Commit(ctx, "more", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveWorktree(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ws); err == nil {
		t.Fatal("worktree not removed")
	}
	r.UntrustWorkspace(ws)
	if got := r.trustedList(); len(got) != 0 {
		t.Fatalf("still trusted: %v", got)
	}
	if err := (&Runner{}).TrustWorkspace(ws); err == nil {
		t.Fatal("a runner without New trusted")
	}
}

// A worker's .git file naming a gitdir inside the workspace is refused
// even when the directory's name starts with ".." (a name, not a way out):
// the workspace's own files would say what git runs.
func TestGitEntryPointingAtDotDotNameInside(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, "..x"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"..x", filepath.Join(ws, "..x")} {
		write(t, filepath.Join(ws, ".git"), "gitdir: "+target+"\n")
		if err := checkGitEntry(ws); !errors.Is(err, ErrUntrustedGit) || !strings.Contains(err.Error(), "points inside the workspace") {
			t.Errorf("gitdir %s: %v, want it refused as inside the workspace", target, err)
		}
	}
	// A gitdir beside the workspace is still outside it.
	out := ws + "x"
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(out) })
	write(t, filepath.Join(ws, ".git"), "gitdir: "+out+"\n")
	if err := checkGitEntry(ws); err != nil {
		t.Errorf("gitdir beside the workspace: %v", err)
	}
}
