package gitx

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestWorkTreeRoot(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	sub := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(repo)
	if err != nil {
		t.Fatal(err)
	}
	got, err := WorkTreeRoot(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := filepath.EvalSymlinks(got); g != want {
		t.Errorf("root of %s = %s, want %s", sub, got, want)
	}

	// Outside any repository the error says to run git init.
	outside := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(outside))
	_, err = WorkTreeRoot(ctx, outside)
	if err == nil || !strings.Contains(err.Error(), outside+" is not inside a git repository; run `git init` first") {
		t.Errorf("outside a repository: %v", err)
	}

	// Git missing from PATH is named as such.
	t.Setenv("PATH", t.TempDir())
	_, err = WorkTreeRoot(ctx, repo)
	if err == nil || !strings.HasPrefix(err.Error(), "git is not installed") {
		t.Errorf("without git: %v", err)
	}
}
