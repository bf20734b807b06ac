package cleanup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// fakeGit is a repository in memory: its worktrees and branches, which
// branches the integration head contains, and what each call changed.
type fakeGit struct {
	worktrees []gitx.Worktree
	dirty     map[string]bool
	branches  map[string]string // name → tip
	merged    []string          // branches the integration head contains
	foreign   map[string][]gitx.ForeignCommit
	// containing are the branches that contain each commit.
	containing map[string][]string

	removedWorktrees, deletedBranches []string
	pruned                            bool
}

func (g *fakeGit) Worktrees(context.Context) ([]gitx.Worktree, error) { return g.worktrees, nil }
func (g *fakeGit) PruneWorktrees(context.Context) error               { g.pruned = true; return nil }
func (g *fakeGit) RemoveWorktree(_ context.Context, p string) error {
	if g.dirty[p] {
		return gitx.ErrDirty
	}
	g.removedWorktrees = append(g.removedWorktrees, p)
	return nil
}
func (g *fakeGit) DiscardWorktree(context.Context, string) error { return nil }
func (g *fakeGit) TrustWorkspace(string) error                   { return nil }
func (g *fakeGit) IsDirty(_ context.Context, p string) (bool, error) {
	return g.dirty[p], nil
}
func (g *fakeGit) RevParse(_ context.Context, rev string) (string, error) {
	if tip, ok := g.branches[strings.TrimPrefix(rev, "refs/heads/")]; ok {
		return tip, nil
	}
	return "", errors.New("unknown revision " + rev)
}
func (g *fakeGit) ForeignCommits(_ context.Context, tip, _, _ string, _ int) ([]gitx.ForeignCommit, error) {
	return g.foreign[tip], nil
}
func (g *fakeGit) Branches(_ context.Context, prefix string) ([]string, error) {
	var out []string
	for b := range g.branches {
		if strings.HasPrefix(b, prefix) {
			out = append(out, b)
		}
	}
	slices.Sort(out)
	return out, nil
}
func (g *fakeGit) BranchesMergedInto(context.Context, string, string) ([]string, error) {
	return g.merged, nil
}
func (g *fakeGit) BranchesContaining(_ context.Context, commit, _ string) ([]string, error) {
	return g.containing[commit], nil
}
func (g *fakeGit) DeleteBranch(_ context.Context, b string) error {
	g.deletedBranches = append(g.deletedBranches, b)
	delete(g.branches, b)
	return nil
}

// fakeOwner hands everything back and records what.
type fakeOwner struct{ handed []string }

func (o *fakeOwner) HandBack(ws string) error         { o.handed = append(o.handed, ws); return nil }
func (o *fakeOwner) HandBackWorktree(ws string) error { o.handed = append(o.handed, ws); return nil }
func (o *fakeOwner) InvokerOwns(string) bool          { return false }

const feature = "auth"

// target is a run of feature whose directories are under a fresh
// temporary directory; nothing in it needs git.
func target(t *testing.T, st *runstate.State) Target {
	root := t.TempDir()
	ws := filepath.Join(root, "cache", "repo-1234", feature)
	p := run.Paths{Feature: feature, Root: filepath.Join(root, "repo"), RunDir: filepath.Join(root, "repo", ".zerg", "runs", feature),
		Workspaces: ws, Merge: filepath.Join(ws, "_merge"), State: filepath.Join(ws, "_state")}
	for _, d := range []string{p.RunDir, p.State} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return Target{Feature: feature, Paths: p, LogPath: ".zerg/runs/" + feature, State: st}
}

func names(list []gitx.ForeignCommit) string { return fmt.Sprintf("%d foreign", len(list)) }

func lines(r *Report) string { return strings.Join(r.Lines, "\n") }

// attemptRepo has two attempt workspaces of feature, T1-1 dirty and T2-1
// clean, on branches the integration head contains, and the user's own
// worktree outside zerg's directory on T3's attempt branch.
func attemptRepo(tg Target) (g *fakeGit, dirtyWS, cleanWS, userWS string) {
	dirtyWS = filepath.Join(tg.Paths.Workspaces, "T1-1")
	cleanWS = filepath.Join(tg.Paths.Workspaces, "T2-1")
	userWS = "/home/me/mine"
	b := func(task string) string { return run.AttemptBranch(feature, task, 1) }
	g = &fakeGit{
		worktrees: []gitx.Worktree{{Path: tg.Paths.Root, Branch: "main"},
			{Path: dirtyWS, Branch: b("T1")}, {Path: cleanWS, Branch: b("T2")}, {Path: userWS, Branch: b("T3")}},
		dirty:    map[string]bool{dirtyWS: true},
		branches: map[string]string{run.IntegrationBranch(feature): "i1", b("T1"): "i1", b("T2"): "i1", b("T3"): "i1", "main": "m1"},
		merged:   []string{b("T1"), b("T2"), b("T3"), run.IntegrationBranch(feature)},
	}
	return g, dirtyWS, cleanWS, userWS
}

// TestCleanupKeepsWhatIsCheckedOut: a dirty workspace is kept, and so is
// its branch and any branch checked out in another worktree; the clean
// workspace and its merged branch go, and the integration branch stays
// without --all. The dry run announces the same and changes nothing.
func TestCleanupKeepsWhatIsCheckedOut(t *testing.T) {
	for _, dry := range []bool{true, false} {
		tg := target(t, nil)
		g, dirtyWS, cleanWS, userWS := attemptRepo(tg)
		own := &fakeOwner{}
		r, err := Run(context.Background(), g, own, tg, Options{DryRun: dry, NameCommits: names})
		if err != nil {
			t.Fatal(err)
		}
		verb := map[bool]string{true: "would remove", false: "removed"}[dry]
		out := lines(r)
		for _, want := range []string{
			"kept     " + dirtyWS + " (uncommitted changes",
			verb + " workspace " + cleanWS,
			"kept     branch " + run.AttemptBranch(feature, "T1", 1) + " (checked out in " + dirtyWS + ")",
			"kept     branch " + run.AttemptBranch(feature, "T3", 1) + " (checked out in " + userWS + ")",
			verb + " branch " + run.AttemptBranch(feature, "T2", 1),
			verb + " worker state " + tg.Paths.State,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("dry run %v: the report lacks %q:\n%s", dry, want, out)
			}
		}
		if strings.Contains(out, run.IntegrationBranch(feature)) || strings.Contains(out, "run log") {
			t.Errorf("dry run %v: without --all the integration branch and the log are none of cleanup's business:\n%s", dry, out)
		}
		wantDeleted, wantRemoved := []string{run.AttemptBranch(feature, "T2", 1)}, []string{cleanWS}
		if dry {
			wantDeleted, wantRemoved = nil, nil
		}
		if !slices.Equal(g.deletedBranches, wantDeleted) || !slices.Equal(g.removedWorktrees, wantRemoved) {
			t.Errorf("dry run %v: deleted %v and removed %v, want %v and %v", dry, g.deletedBranches, g.removedWorktrees, wantDeleted, wantRemoved)
		}
		if _, err := os.Stat(tg.Paths.State); (err == nil) != dry {
			t.Errorf("dry run %v: worker state there afterwards: %v", dry, err == nil)
		}
		if len(r.Failures) != 2 || !strings.Contains(r.Failures[0], "1 workspace(s) kept because they hold uncommitted work") ||
			!strings.Contains(r.Failures[1], "2 branch(es) kept because a worktree has them checked out") {
			t.Errorf("dry run %v: failures %q", dry, r.Failures)
		}
	}
}

// TestCleanupAllKeepsAnUnmergedDelivery: --all keeps the log and the
// integration branch of a delivery no branch of the user's holds, and
// removes them with --force or once the user merged it.
func TestCleanupAllKeepsAnUnmergedDelivery(t *testing.T) {
	delivered := &runstate.State{Finished: &runstate.RunFinished{Delivered: true}}
	integration := run.IntegrationBranch(feature)
	for _, tc := range []struct {
		name       string
		force      bool
		containing []string
		removed    bool
	}{
		{"unmerged", false, []string{integration}, false},
		{"forced", true, []string{integration}, true},
		{"merged into main", false, []string{integration, "main"}, true},
	} {
		tg := target(t, delivered)
		g := &fakeGit{branches: map[string]string{integration: "i1", run.AttemptBranch(feature, "T1", 1): "a1"},
			containing: map[string][]string{"i1": tc.containing}}
		r, err := Run(context.Background(), g, &fakeOwner{}, tg, Options{All: true, Force: tc.force, NameCommits: names})
		if err != nil {
			t.Fatal(err)
		}
		_, statErr := os.Stat(tg.Paths.RunDir)
		if gone := errors.Is(statErr, os.ErrNotExist); gone != tc.removed {
			t.Errorf("%s: run log removed %v, want %v:\n%s", tc.name, gone, tc.removed, lines(r))
		}
		if deleted := slices.Contains(g.deletedBranches, integration); deleted != tc.removed {
			t.Errorf("%s: integration branch deleted %v, want %v", tc.name, deleted, tc.removed)
		}
		if kept := strings.Contains(lines(r), "the run delivered and the result was never merged; zerg merge auth --into BRANCH"); kept == tc.removed && !tc.force {
			t.Errorf("%s: kept line %v:\n%s", tc.name, kept, lines(r))
		}
		if (len(r.Failures) > 0) == tc.removed {
			t.Errorf("%s: failures %q", tc.name, r.Failures)
		}
	}
}

// TestCleanupAllKeepsForeignCommits: an attempt branch holding a commit
// zerg did not make stays under --all, named; the other goes.
func TestCleanupAllKeepsForeignCommits(t *testing.T) {
	tg := target(t, nil)
	b1, b2 := run.AttemptBranch(feature, "T1", 1), run.AttemptBranch(feature, "T2", 1)
	g := &fakeGit{branches: map[string]string{b1: "a1", b2: "a2"},
		foreign: map[string][]gitx.ForeignCommit{"a1": {{Commit: "f00d", Subject: "mine"}}}}
	r, err := Run(context.Background(), g, &fakeOwner{}, tg, Options{All: true, NameCommits: names})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.deletedBranches, []string{b2}) {
		t.Errorf("deleted %v, want only %s:\n%s", g.deletedBranches, b2, lines(r))
	}
	if !strings.Contains(lines(r), "kept     branch "+b1+" (it holds 1 foreign that zerg did not make") {
		t.Errorf("no kept line for %s:\n%s", b1, lines(r))
	}
	if !slices.ContainsFunc(r.Failures, func(f string) bool {
		return strings.Contains(f, "1 branch(es) kept because they hold commits zerg did not make")
	}) {
		t.Errorf("failures %q", r.Failures)
	}
}

// TestCleanupHandsBackAPrivateClone: a private clone (sandbox, container or
// tasks mode) is never deleted; one without a record is handed back and a
// record written, so that the next cleanup says it is the person's.
func TestCleanupHandsBackAPrivateClone(t *testing.T) {
	tg := target(t, nil)
	ws := filepath.Join(tg.Paths.Workspaces, "T1-1")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	own := &fakeOwner{}
	r, err := Run(context.Background(), &fakeGit{}, own, tg, Options{NameCommits: names})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(own.handed, []string{ws}) || !strings.Contains(lines(r), "kept     "+ws+" (a private workspace whose work zerg did not commit; "+HandedBack+")") {
		t.Fatalf("handed back %v:\n%s", own.handed, lines(r))
	}
	if _, err := os.Stat(ws); err != nil {
		t.Fatalf("the clone is gone: %v", err)
	}
	r, err = Run(context.Background(), &fakeGit{}, own, tg, Options{NameCommits: names})
	if err != nil {
		t.Fatal(err)
	}
	if len(own.handed) != 1 || !strings.Contains(lines(r), "it is yours and git works there: look at it, then delete it yourself") {
		t.Fatalf("second cleanup: handed back %v:\n%s", own.handed, lines(r))
	}
}

// TestAllBlockers: what keeps the log and the integration branch under
// --all, each named, in order; nothing for a clean, merged run.
func TestAllBlockers(t *testing.T) {
	if got := allBlockers(feature, "L", allFacts{delivered: true}); len(got) != 0 {
		t.Fatalf("a clean merged run: %q", got)
	}
	got := allBlockers(feature, "L", allFacts{unsaved: []string{"/w"}, logErr: errors.New("torn"), foreign: "1 commit", unmergedDelivery: true})
	want := []string{"workspace /w has uncommitted work; commit or copy it (zerg rush auth --resume saves it", "the log cannot be read (torn)",
		"the branch holds 1 commit that zerg did not make", "the run delivered and the result was never merged"}
	if len(got) != len(want) {
		t.Fatalf("%d reasons, want %d: %q", len(got), len(want), got)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("reason %d %q lacks %q", i, got[i], want[i])
		}
	}
}
