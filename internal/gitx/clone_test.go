package gitx

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A private clone holds the base commit and nothing else of the user's
// repository; its work comes back through a bundle and a quarantine as a
// commit zerg makes.
func TestCloneCommitQuarantineImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	base, _ := repo.RevParse(ctx, "HEAD")
	// Things the worker must not see: another branch and a stash-like ref.
	if _, err := repo.Run(ctx, "commit", "-q", "--allow-empty", "-m", "secret branch work"); err != nil {
		t.Fatal(err)
	}
	secret, _ := repo.RevParse(ctx, "HEAD")
	repo.SetBranch(ctx, "other", secret, "")
	repo.Run(ctx, "reset", "-q", "--hard", base)

	ws := filepath.Join(t.TempDir(), "ws")
	if err := repo.CloneCommit(ctx, ws, base); err != nil {
		t.Fatal(err)
	}
	w := New(ws)
	if head, _ := w.RevParse(ctx, "HEAD"); head != base {
		t.Errorf("clone HEAD %s, want %s", head, base)
	}
	if _, err := w.Run(ctx, "cat-file", "-e", secret); err == nil {
		t.Error("the clone holds an object of another branch")
	}
	if refs, _ := w.Run(ctx, "for-each-ref"); strings.Contains(refs, "other") {
		t.Errorf("the clone has the user's refs: %s", refs)
	}
	if refs, _ := repo.Run(ctx, "for-each-ref", "refs/zerg/"); refs != "" {
		t.Errorf("temporary refs left in the user's repository: %s", refs)
	}

	// The worker's work, committed and bundled in the clone.
	os.WriteFile(filepath.Join(ws, "new.txt"), []byte("work\n"), 0o644)
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "worker's own message"}, {"bundle", "create", "--quiet", filepath.Join(ws, "..", "out.bundle"), base + "..HEAD"}} {
		if _, err := w.Run(ctx, args...); err != nil {
			t.Fatal(args, err)
		}
	}
	q, err := repo.NewQuarantine(ctx, filepath.Join(t.TempDir(), "q"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := q.FetchBundle(ctx, filepath.Join(ws, "..", "out.bundle"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Run(ctx, "cat-file", "-e", got); err == nil {
		t.Error("the worker's commit reached the user's repository before the import")
	}
	if p, _ := q.Parents(ctx, got); len(p) != 1 || p[0] != base {
		t.Errorf("parents %v", p)
	}
	imported, err := q.Import(ctx, got, base, "T1: a task", map[string]string{"Task-Id": "T1"}, "zerg/f/task/T1/1")
	if err != nil {
		t.Fatal(err)
	}
	if at, _ := repo.RevParse(ctx, "refs/heads/zerg/f/task/T1/1"); at != imported {
		t.Errorf("the attempt's branch is at %q, want the imported %s", at, imported)
	}
	msg, _ := repo.Run(ctx, "log", "-1", "--format=%an%n%B", imported)
	if !strings.Contains(msg, "zerg\nT1: a task") || !strings.Contains(msg, "Task-Id: T1") || strings.Contains(msg, "worker's own") {
		t.Errorf("imported commit:\n%s", msg)
	}
	if content, _ := repo.FileAt(ctx, imported, "new.txt"); string(content) != "work\n" {
		t.Errorf("imported tree lacks the work: %q", content)
	}
	// The worker's own commit object (its message is the worker's) never
	// reaches the user's object store.
	if _, err := repo.Run(ctx, "cat-file", "-e", got); err == nil {
		t.Error("the worker's commit object reached the user's repository")
	}
	if refs, _ := repo.Run(ctx, "for-each-ref", "refs/zerg/"); refs != "" {
		t.Errorf("temporary refs left: %s", refs)
	}
	// A broken bundle is refused.
	bad := filepath.Join(t.TempDir(), "bad.bundle")
	os.WriteFile(bad, []byte("# v2 git bundle\nnot a bundle\n"), 0o644)
	if _, err := q.FetchBundle(ctx, bad); err == nil {
		t.Error("a forged bundle was accepted")
	}
	// So is one whose prerequisite the repository lacks.
	orphan := t.TempDir()
	o := New(orphan)
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "one"}, {"commit", "-q", "--allow-empty", "-m", "two"}, {"bundle", "create", "--quiet", filepath.Join(orphan, "thin.bundle"), "HEAD~1..HEAD"}} {
		if _, err := o.Run(ctx, args...); err != nil {
			t.Fatal(args, err)
		}
	}
	if _, err := q.FetchBundle(ctx, filepath.Join(orphan, "thin.bundle")); err == nil {
		t.Error("a bundle whose prerequisite the repository lacks was accepted")
	}
}

// A clone takes its commit by id, with no ref of its own in the user's
// repository: a commit that no ref names (a merged head, an imported
// result) is cloned all the same, even when the user's git config asks
// for the old protocol, which refuses to send what it did not advertise.
func TestCloneCommitNeedsNoRef(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[protocol]\n\tversion = 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	ctx := context.Background()
	repo := newRepo(t)
	loose, err := repo.Run(ctx, "commit-tree", "-m", "no ref names me", "HEAD^{tree}")
	if err != nil {
		t.Fatal(err)
	}
	loose = strings.TrimSpace(loose)
	ws := filepath.Join(t.TempDir(), "ws")
	if err := repo.CloneCommit(ctx, ws, loose); err != nil {
		t.Fatal(err)
	}
	if head, _ := New(ws).RevParse(ctx, "HEAD"); head != loose {
		t.Errorf("clone HEAD %s, want %s", head, loose)
	}
	if refs, _ := repo.Run(ctx, "for-each-ref", "refs/zerg/"); refs != "" {
		t.Errorf("the clone wrote refs to the user's repository: %s", refs)
	}
}

// Import lands the commit on the attempt's branch itself, creating it or
// moving it (a recovered attempt imported again), also while a worktree has
// the branch checked out, as subprocess mode's attempts do.
func TestImportMovesTheBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	base, _ := repo.RevParse(ctx, "HEAD")
	q, err := repo.NewQuarantine(ctx, filepath.Join(t.TempDir(), "q"))
	if err != nil {
		t.Fatal(err)
	}
	const branch = "zerg/f/task/T1/1"
	if err := repo.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), branch, base); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		made, err := q.Import(ctx, base, base, fmt.Sprintf("T1: try %d", i), nil, branch)
		if err != nil {
			t.Fatalf("import %d: %v", i, err)
		}
		if at, _ := repo.RevParse(ctx, "refs/heads/"+branch); at != made {
			t.Fatalf("import %d: the branch is at %s, want %s", i, at, made)
		}
	}
	if _, err := q.Import(ctx, base, base, "T1", nil, "-bad"); err == nil {
		t.Error("an invalid branch name was accepted")
	}
}
