package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// fakeRun is a repository with a finished zerg run in it, as merge and
// cleanup see one: a run log and an integration branch with one commit
// (feature.txt) over the base, and the user on main at the base.
type fakeRun struct {
	root, feature string
	repo          *gitx.Repo
	paths         run.Paths
	base, head    string
}

// newFakeRun makes the repository in a temp dir and changes into it.
// Workspaces go to a temp dir of their own (ZERG_WORKSPACES).
func newFakeRun(t *testing.T, feature string, delivered bool) *fakeRun {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	t.Setenv("ZERG_WORKSPACES", t.TempDir())
	t.Chdir(root)
	repo := &gitx.Repo{Runner: gitx.New(root)}
	gitRun(t, repo.Runner, "init", "--quiet", "-b", "main")
	writeFile(t, filepath.Join(root, "README.md"), []byte("hello\n"))
	writeFile(t, filepath.Join(root, ".gitignore"), []byte(".zerg/runs/\n"))
	gitRun(t, repo.Runner, "add", "--all")
	base, err := repo.Commit(ctx, "initial", nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRun{root: root, feature: feature, repo: repo, base: base}
	f.paths, err = run.PathsFor(ctx, root, feature)
	if err != nil {
		t.Fatal(err)
	}
	f.head = f.commitOn(t, run.IntegrationBranch(feature), "feature.txt", "the feature\n")

	log, _, err := eventlog.Open(f.paths.Events)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if _, err := log.AppendData(runstate.EvRunStarted, "", 0, runstate.RunStarted{
		Feature: feature, Base: base, Integration: run.IntegrationBranch(feature),
	}); err != nil {
		t.Fatal(err)
	}
	if delivered {
		if _, err := log.AppendData(runstate.EvRunFinished, "", 0, runstate.RunFinished{Delivered: true, Head: f.head}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// commitOn adds one commit writing file on branch (created at the base if
// missing), through a scratch worktree, and returns it.
func (f *fakeRun) commitOn(t *testing.T, branch, file, content string) string {
	t.Helper()
	ctx := context.Background()
	ws := filepath.Join(t.TempDir(), "scratch")
	if ok, _ := f.repo.BranchExists(ctx, branch); ok {
		gitRun(t, f.repo.Runner, "worktree", "add", "--quiet", ws, branch)
	} else if err := f.repo.AddWorktree(ctx, ws, branch, f.base); err != nil {
		t.Fatal(err)
	}
	w := f.repo.In(ws)
	writeFile(t, filepath.Join(ws, file), []byte(content))
	gitRun(t, w, "add", "--all")
	c, err := w.Commit(ctx, "add "+file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.repo.RemoveWorktree(ctx, ws); err != nil {
		t.Fatal(err)
	}
	return c
}

// branchAt is the commit branch points at, "" when it does not exist.
func (f *fakeRun) branchAt(t *testing.T, branch string) string {
	t.Helper()
	ctx := context.Background()
	if ok, err := f.repo.BranchExists(ctx, branch); err != nil {
		t.Fatal(err)
	} else if !ok {
		return ""
	}
	c, err := f.repo.RevParse(ctx, "refs/heads/"+branch)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func gitRun(t *testing.T, r *gitx.Runner, args ...string) string {
	t.Helper()
	out, err := r.Run(context.Background(), args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
