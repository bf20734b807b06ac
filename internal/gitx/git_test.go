package gitx

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// newRepo makes a repository with one commit holding README.md.
func newRepo(t *testing.T) *Repo {
	t.Helper()
	dir := t.TempDir()
	r := &Repo{Runner: New(dir)}
	ctx := context.Background()
	mustRun(t, r.Runner, "init", "--quiet", "-b", "main")
	write(t, filepath.Join(dir, "README.md"), "hello\n")
	mustRun(t, r.Runner, "add", "README.md")
	if _, err := r.Commit(ctx, "initial", nil); err != nil {
		t.Fatal(err)
	}
	return r
}

func mustRun(t *testing.T, r *Runner, args ...string) string {
	t.Helper()
	out, err := r.Run(context.Background(), args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHooksNeverRun: a repository's hooks (in .git/hooks or a configured
// hooksPath) do not run for zerg's commits and merges.
func TestHooksNeverRun(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	marker := filepath.Join(t.TempDir(), "hook-ran")
	hook := "#!/bin/sh\necho ran >> " + marker + "\nexit 1\n"
	for _, dir := range []string{filepath.Join(r.Dir, ".git", "hooks"), filepath.Join(r.Dir, "myhooks")} {
		for _, name := range []string{"pre-commit", "commit-msg", "post-commit", "pre-merge-commit", "post-merge", "post-checkout", "reference-transaction"} {
			write(t, filepath.Join(dir, name), hook)
			if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	mustRun(t, r.Runner, "config", "core.hooksPath", "myhooks")

	ws := filepath.Join(t.TempDir(), "ws")
	if err := r.AddWorktree(ctx, ws, "zerg/f/task-a", "HEAD"); err != nil {
		t.Fatal(err)
	}
	w := r.In(ws)
	write(t, filepath.Join(ws, "a.txt"), "a\n")
	if _, err := w.ChangedFiles(ctx, "HEAD"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx, "task a", map[string]string{"Task-Id": "A"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Merge(ctx, "zerg/f/task-a", "merge a"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a repository hook ran during zerg's git calls")
	}
	// The same hooks do run for a plain git call, so the test can fail.
	cmd := exec.Command("git", "commit", "--allow-empty", "-m", "x")
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
	_ = cmd.Run()
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("control: the hook did not run for plain git either; the test proves nothing")
	}
}

// TestInheritedGitEnvIgnored: GIT_DIR and friends in zerg's own environment do
// not redirect its calls.
func TestInheritedGitEnvIgnored(t *testing.T) {
	r := newRepo(t)
	other := newRepo(t)
	t.Setenv("GIT_DIR", filepath.Join(other.Dir, ".git"))
	t.Setenv("GIT_WORK_TREE", other.Dir)
	top := strings.TrimSpace(mustRun(t, r.Runner, "rev-parse", "--show-toplevel"))
	want, _ := filepath.EvalSymlinks(r.Dir)
	if got, _ := filepath.EvalSymlinks(top); got != want {
		t.Fatalf("toplevel %s, want %s", top, r.Dir)
	}
}

func TestValidateRef(t *testing.T) {
	t.Parallel()
	good := []string{"zerg/auth/integration", "zerg/f/T-001/1", "main", "a.b_c-d"}
	bad := []string{"", "-x", "--upload-pack=evil", "a..b", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", `a\b`, "a/", "/a", "a.lock", "a/.b", "a//b", "a@{1}", "@", "a.", "x\x01"}
	for _, n := range good {
		if err := ValidateRef(n); err != nil {
			t.Errorf("%q: %v", n, err)
		}
	}
	for _, n := range bad {
		if err := ValidateRef(n); err == nil {
			t.Errorf("%q accepted", n)
		}
	}
	r := newRepo(t)
	if err := r.AddWorktree(context.Background(), filepath.Join(t.TempDir(), "w"), "--bad", "HEAD"); err == nil {
		t.Fatal("AddWorktree accepted a ref starting with -")
	}
}

// TestWorktreeCommitMerge walks one attempt: worktree, change, diff, commit
// with a trailer, merge into an integration branch in its own worktree.
func TestWorktreeCommitMerge(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	base, err := r.RevParse(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetBranch(ctx, "zerg/f/integration", base, ""); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(t.TempDir(), "ws")
	if err := r.AddWorktree(ctx, ws, "zerg/f/A/1", "zerg/f/integration"); err != nil {
		t.Fatal(err)
	}
	w := r.In(ws)
	write(t, filepath.Join(ws, "src", "new.go"), "package src\n")
	write(t, filepath.Join(ws, "README.md"), "changed\n")
	changes, err := w.ChangedFiles(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range changes {
		got[c.Path] = c.Status
	}
	if got["src/new.go"] != "A" || got["README.md"] != "M" || len(got) != 2 {
		t.Fatalf("changes %v", changes)
	}
	commit, err := w.Commit(ctx, "A: add new.go", map[string]string{"Task-Id": "A"})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := w.TrailerValue(ctx, commit, "Task-Id"); v != "A" {
		t.Fatalf("trailer %q", v)
	}
	if dirty, _ := w.IsDirty(ctx); dirty {
		t.Fatal("dirty after commit")
	}

	mws := filepath.Join(t.TempDir(), "merge")
	if err := r.AddDetachedWorktree(ctx, mws, "zerg/f/integration"); err != nil {
		t.Fatal(err)
	}
	m := r.In(mws)
	head, err := m.Merge(ctx, "zerg/f/A/1", "merge A")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetBranch(ctx, "zerg/f/integration", head, base); err != nil {
		t.Fatal(err)
	}
	// Compare-and-swap: updating from a stale old value fails.
	if err := r.SetBranch(ctx, "zerg/f/integration", base, base); err == nil {
		t.Fatal("stale compare-and-swap succeeded")
	}
	if out := mustRun(t, r.Runner, "show", "zerg/f/integration:src/new.go"); out != "package src\n" {
		t.Fatalf("integration lacks the file: %q", out)
	}
	// The user's branch and working tree are untouched.
	if b, _ := os.ReadFile(filepath.Join(r.Dir, "README.md")); string(b) != "hello\n" {
		t.Fatal("user's working tree changed")
	}
	if err := r.RemoveWorktree(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ws); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("clean worktree not removed")
	}
}

// TestDirtyWorktreeNeverRemoved: uncommitted work survives cleanup.
func TestDirtyWorktreeNeverRemoved(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	ws := filepath.Join(t.TempDir(), "ws")
	if err := r.AddWorktree(ctx, ws, "zerg/f/B/1", "HEAD"); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "work.txt"), "precious\n")
	err := r.RemoveWorktree(ctx, ws)
	if !errors.Is(err, ErrDirty) {
		t.Fatalf("err %v, want ErrDirty", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "work.txt")); string(b) != "precious\n" {
		t.Fatal("dirty work lost")
	}
}

// TestMergeConflictAborted: a conflicting merge names the paths and leaves the
// merge workspace clean.
func TestMergeConflictAborted(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	for _, b := range []string{"x", "y"} {
		ws := filepath.Join(t.TempDir(), b)
		if err := r.AddWorktree(ctx, ws, "zerg/f/"+b, "HEAD"); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(ws, "README.md"), b+"\n")
		w := r.In(ws)
		if _, err := w.ChangedFiles(ctx, "HEAD"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(ctx, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	mws := filepath.Join(t.TempDir(), "m")
	if err := r.AddDetachedWorktree(ctx, mws, "HEAD"); err != nil {
		t.Fatal(err)
	}
	m := r.In(mws)
	if _, err := m.Merge(ctx, "zerg/f/x", "x"); err != nil {
		t.Fatal(err)
	}
	_, err := m.Merge(ctx, "zerg/f/y", "y")
	if err == nil || !strings.Contains(err.Error(), "conflicts on README.md") {
		t.Fatalf("err %v", err)
	}
	if dirty, _ := m.IsDirty(ctx); dirty {
		t.Fatal("merge workspace left dirty")
	}
}

func TestErrorKeepsStderr(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	_, err := r.Run(context.Background(), "rev-parse", "--verify", "no-such-ref")
	var ge *Error
	if !errors.As(err, &ge) || ge.ExitCode != 128 || !strings.Contains(err.Error(), "fatal") || !strings.Contains(err.Error(), r.Dir) {
		t.Fatalf("error %v", err)
	}
}

func TestIsAncestorAndWorktrees(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := New(dir)
	ctx := context.Background()
	mustRun := func(args ...string) string {
		t.Helper()
		out, err := r.Run(ctx, args...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	mustRun("init", "-q", "-b", "main")
	mustRun("commit", "-q", "--allow-empty", "-m", "one")
	one := mustRun("rev-parse", "HEAD")
	mustRun("commit", "-q", "--allow-empty", "-m", "two")
	two := mustRun("rev-parse", "HEAD")
	if ok, err := r.IsAncestor(ctx, one, two); err != nil || !ok {
		t.Errorf("one before two: %v %v", ok, err)
	}
	// The control: the reverse is a plain "no", not an error.
	if ok, err := r.IsAncestor(ctx, two, one); err != nil || ok {
		t.Errorf("two before one: %v %v", ok, err)
	}
	// An unknown commit is an error, never a "no".
	if _, err := r.IsAncestor(ctx, strings.Repeat("1", 40), two); err == nil {
		t.Error("unknown commit: no error")
	}
	if b, err := r.CurrentBranch(ctx); err != nil || b != "main" {
		t.Errorf("current branch %q %v", b, err)
	}
	ws := filepath.Join(t.TempDir(), "ws")
	repo := &Repo{Runner: r}
	if err := repo.AddWorktree(ctx, ws, "feature/x", one); err != nil {
		t.Fatal(err)
	}
	list, err := r.Worktrees(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("worktrees %+v %v", list, err)
	}
	if list[1].Branch != "feature/x" || list[1].Head != one || list[0].Branch != "main" {
		t.Errorf("worktrees %+v", list)
	}
	if p, _ := r.WorktreeOf(ctx, "feature/x"); filepath.Base(p) != "ws" {
		t.Errorf("worktree of feature/x: %q", p)
	}
}

// HooksDir sees the user's core.hooksPath, which every other call overrides.
func TestHooksDirSeesCoreHooksPath(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	ctx := context.Background()
	dir, err := HooksDir(ctx, repo.Dir)
	if err != nil || dir != filepath.Join(repo.Dir, ".git", "hooks") {
		t.Fatalf("default hooks dir %q %v", dir, err)
	}
	if _, err := repo.Run(ctx, "config", "core.hooksPath", "githooks"); err != nil {
		t.Fatal(err)
	}
	if dir, err := HooksDir(ctx, repo.Dir); err != nil || dir != filepath.Join(repo.Dir, "githooks") {
		t.Errorf("with core.hooksPath: %q %v", dir, err)
	}
}
