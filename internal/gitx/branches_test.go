package gitx

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestBranches(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	base, _ := r.RevParse(ctx, "HEAD")
	for _, b := range []string{"zerg/f/integration", "zerg/f/task/A/1", "zerg/fx", "zerg/g/integration"} {
		if err := r.SetBranch(ctx, b, base, ""); err != nil {
			t.Fatal(err)
		}
	}
	// A tag of the same name makes git's short names ambiguous ("heads/…").
	mustRun(t, r.Runner, "tag", "zerg/f/task/A/1")
	got, err := r.Branches(ctx, "zerg/f/")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"zerg/f/integration", "zerg/f/task/A/1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("branches under zerg/f/: %q, want %q", got, want)
	}
	// A prefix that is not a directory matches by name too.
	if got, _ := r.Branches(ctx, "zerg/f"); !reflect.DeepEqual(got, []string{"zerg/f/integration", "zerg/f/task/A/1", "zerg/fx"}) {
		t.Fatalf("branches under zerg/f: %q", got)
	}
	if got, _ := r.Branches(ctx, ""); len(got) != 5 {
		t.Fatalf("all branches: %q", got)
	}
	if _, err := r.Branches(ctx, "--all"); err == nil {
		t.Fatal("an option was accepted as the prefix")
	}
}

func TestBranchesMergedIntoAndContaining(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	base, _ := r.RevParse(ctx, "HEAD")
	for _, b := range []string{"zerg/f/integration", "zerg/f/task/A/1", "zerg/f/task/B/1"} {
		if err := r.SetBranch(ctx, b, base, ""); err != nil {
			t.Fatal(err)
		}
	}
	// B gets a commit of its own: not merged into the integration branch.
	ws := filepath.Join(t.TempDir(), "ws")
	if err := r.AddWorktree(ctx, ws, "zerg/f/task/C/1", base); err != nil {
		t.Fatal(err)
	}
	w := r.In(ws)
	write(t, filepath.Join(ws, "c.txt"), "c\n")
	mustRun(t, w, "add", "c.txt")
	c, err := w.Commit(ctx, "c", nil)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := r.BranchesMergedInto(ctx, "zerg/f/integration", "zerg/f/")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"zerg/f/integration", "zerg/f/task/A/1", "zerg/f/task/B/1"}; !reflect.DeepEqual(merged, want) {
		t.Fatalf("merged %q, want %q", merged, want)
	}
	// The control: merged into C's branch, C counts too.
	if merged, _ := r.BranchesMergedInto(ctx, c, "zerg/f/task/"); len(merged) != 3 {
		t.Fatalf("merged into c: %q", merged)
	}
	if got, err := r.BranchesContaining(ctx, c, ""); err != nil || !reflect.DeepEqual(got, []string{"zerg/f/task/C/1"}) {
		t.Fatalf("containing c: %q %v", got, err)
	}
	if got, _ := r.BranchesContaining(ctx, base, ""); len(got) != 5 {
		t.Fatalf("containing base: %q", got)
	}
	// An unknown commit is an error, never "no branch".
	if _, err := r.BranchesContaining(ctx, "1111111111111111111111111111111111111111", ""); err == nil {
		t.Fatal("unknown commit: no error")
	}
	if _, err := r.BranchesMergedInto(ctx, "--all", ""); err == nil {
		t.Fatal("an option was accepted as the revision")
	}
}

func TestHasTrackedChanges(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	write(t, filepath.Join(r.Dir, "untracked.txt"), "x\n")
	if ch, err := r.HasTrackedChanges(ctx); err != nil || ch {
		t.Fatalf("untracked file only: %v %v", ch, err)
	}
	// The control: the same tree is dirty for IsDirty.
	if d, _ := r.IsDirty(ctx); !d {
		t.Fatal("IsDirty does not see the untracked file")
	}
	write(t, filepath.Join(r.Dir, "README.md"), "changed\n")
	if ch, err := r.HasTrackedChanges(ctx); err != nil || !ch {
		t.Fatalf("changed tracked file: %v %v", ch, err)
	}
	mustRun(t, r.Runner, "add", "README.md")
	write(t, filepath.Join(r.Dir, "README.md"), "hello\n")
	if ch, _ := r.HasTrackedChanges(ctx); !ch {
		t.Fatal("a staged change is not seen")
	}
}

func TestFastForward(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	base, _ := r.RevParse(ctx, "HEAD")
	ws := filepath.Join(t.TempDir(), "ws")
	if err := r.AddWorktree(ctx, ws, "ahead", base); err != nil {
		t.Fatal(err)
	}
	w := r.In(ws)
	write(t, filepath.Join(ws, "new.txt"), "new\n")
	mustRun(t, w, "add", "new.txt")
	ahead, err := w.Commit(ctx, "ahead", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.FastForward(ctx, "ahead"); err != nil {
		t.Fatal(err)
	}
	if head, _ := r.RevParse(ctx, "refs/heads/main"); head != ahead {
		t.Fatalf("main at %s, want %s", head, ahead)
	}
	if b, err := os.ReadFile(filepath.Join(r.Dir, "new.txt")); err != nil || string(b) != "new\n" {
		t.Fatalf("working tree not updated: %q %v", b, err)
	}
	// Diverged: refused, nothing changes.
	write(t, filepath.Join(r.Dir, "main.txt"), "m\n")
	mustRun(t, r.Runner, "add", "main.txt")
	mainHead, _ := r.Commit(ctx, "main", nil)
	write(t, filepath.Join(ws, "other.txt"), "o\n")
	mustRun(t, w, "add", "other.txt")
	if _, err := w.Commit(ctx, "other", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.FastForward(ctx, "ahead"); err == nil {
		t.Fatal("a diverged branch fast-forwarded")
	}
	if head, _ := r.RevParse(ctx, "refs/heads/main"); head != mainHead {
		t.Fatal("a refused fast-forward moved main")
	}
	if d, _ := r.IsDirty(ctx); d {
		t.Fatal("a refused fast-forward left changes")
	}
	if err := r.FastForward(ctx, "-ahead"); err == nil {
		t.Fatal("an option was accepted as the branch")
	}
}

func TestPruneWorktrees(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	ws := filepath.Join(t.TempDir(), "ws")
	if err := r.AddWorktree(ctx, ws, "b", "HEAD"); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}
	if list, _ := r.Worktrees(ctx); len(list) != 2 || !list[1].Prunable {
		t.Fatalf("before prune: %+v", list)
	}
	if err := r.PruneWorktrees(ctx); err != nil {
		t.Fatal(err)
	}
	if list, _ := r.Worktrees(ctx); len(list) != 1 {
		t.Fatalf("after prune: %+v", list)
	}
}
