package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/journey"
)

// fakeGit is a history in memory: each branch's tip, which commits are
// ancestors of which, where branches are checked out, and what moved.
type fakeGit struct {
	branches   map[string]string
	ancestors  map[[2]string]bool // {ancestor, descendant}
	checkedOut map[string]string  // branch → worktree
	dirty      map[string]bool    // worktree → tracked changes
	merged     string             // what MergeCommit returns
	mergeErr   error

	squashed bool
	set      []string // "branch commit old"
	forward  []string // "dir commit"
	msg      string
}

func (g *fakeGit) BranchExists(_ context.Context, b string) (bool, error) {
	_, ok := g.branches[b]
	return ok, nil
}
func (g *fakeGit) RevParse(_ context.Context, rev string) (string, error) {
	if tip, ok := g.branches[strings.TrimPrefix(rev, "refs/heads/")]; ok {
		return tip, nil
	}
	return "", errors.New("unknown " + rev)
}
func (g *fakeGit) MergeBase(context.Context, string, string) (string, error) { return "base", nil }
func (g *fakeGit) IsAncestor(_ context.Context, a, d string) (bool, error) {
	return a == d || g.ancestors[[2]string{a, d}], nil
}
func (g *fakeGit) WorktreeOf(_ context.Context, b string) (string, error) {
	return g.checkedOut[b], nil
}
func (g *fakeGit) HasTrackedChanges(_ context.Context, dir string) (bool, error) {
	return g.dirty[dir], nil
}
func (g *fakeGit) SetBranch(_ context.Context, b, c, old string) error {
	g.set = append(g.set, fmt.Sprintf("%s %s %s", b, c, old))
	return nil
}
func (g *fakeGit) FastForward(_ context.Context, dir, c string) error {
	g.forward = append(g.forward, dir+" "+c)
	return nil
}
func (g *fakeGit) MergeCommit(_ context.Context, _, _, _ string, squash bool, msg func([]string) string) (string, error) {
	g.squashed = squash
	if squash {
		g.msg = msg([]string{"- one", "- two"})
	}
	return g.merged, g.mergeErr
}

const integration = "zerg/auth/integration"

// TestDecide: the plan follows the histories: a new branch only with
// --create, nothing when the branch holds the head, a fast-forward when
// it can, else a merge commit, and a squash whenever asked; a checkout
// with tracked changes refuses before anything moves.
func TestDecide(t *testing.T) {
	hist := func() *fakeGit {
		return &fakeGit{branches: map[string]string{"main": "m1", "old": "h0", "ahead": "a1"},
			ancestors: map[[2]string]bool{{"m1", "h1"}: true, {"h1", "a1"}: true}}
	}
	for _, tc := range []struct {
		name, into     string
		create, squash bool
		want           How
		err            error
	}{
		{"missing", "nope", false, false, 0, ErrNoBranch},
		{"created", "nope", true, false, Create, nil},
		{"fast-forward", "main", false, false, FastForward, nil},
		{"squash even when it could fast-forward", "main", false, true, Squash, nil},
		{"diverged", "old", false, false, MergeCommit, nil},
		{"up to date", "ahead", false, true, UpToDate, nil},
	} {
		g := hist()
		exists, _, err := Landing(context.Background(), g, tc.into, "h1", "b0")
		if err != nil {
			t.Fatal(err)
		}
		p, err := Decide(context.Background(), g, tc.into, integration, "h1", exists, tc.create, tc.squash)
		if !errors.Is(err, tc.err) || err == nil && p.How != tc.want {
			t.Errorf("%s: %v %v, want %v %v", tc.name, p.How, err, tc.want, tc.err)
		}
	}
	g := hist()
	g.checkedOut = map[string]string{"main": "/home/me/repo"}
	g.dirty = map[string]bool{"/home/me/repo": true}
	var dirty *DirtyCheckoutError
	if _, err := Decide(context.Background(), g, "main", integration, "h1", true, false, false); !errors.As(err, &dirty) || dirty.Dir != "/home/me/repo" {
		t.Fatalf("a dirty checkout: %v", err)
	}
}

// TestLanding: the change is counted from the merge base of an existing
// branch, from the run's base for a new one.
func TestLanding(t *testing.T) {
	g := &fakeGit{branches: map[string]string{"main": "m1"}}
	if exists, from, _ := Landing(context.Background(), g, "main", "h1", "b0"); !exists || from != "base" {
		t.Errorf("main: %v %q", exists, from)
	}
	if exists, from, _ := Landing(context.Background(), g, "new", "h1", "b0"); exists || from != "b0" {
		t.Errorf("new: %v %q", exists, from)
	}
}

// TestApply: a checked-out branch is fast-forwarded in its worktree, any
// other moved only from where it was; a merge that adds nothing moves
// nothing; a conflict is a MergeError and moves nothing.
func TestApply(t *testing.T) {
	ctx := context.Background()
	g := &fakeGit{}
	if changed, err := Apply(ctx, g, Plan{How: FastForward, Into: "main", Head: "h1", Target: "m1", CheckedOut: "/repo"}, "auth"); err != nil || !changed || len(g.set) != 0 || g.forward[0] != "/repo h1" {
		t.Errorf("checked out: %v %v set %v forward %v", changed, err, g.set, g.forward)
	}
	g = &fakeGit{merged: "c1"}
	if changed, err := Apply(ctx, g, Plan{How: MergeCommit, Into: "old", Head: "h1", Target: "h0"}, "auth"); err != nil || !changed || g.set[0] != "old c1 h0" || g.squashed {
		t.Errorf("merge commit: %v %v set %v", changed, err, g.set)
	}
	g = &fakeGit{merged: "h0"}
	if changed, err := Apply(ctx, g, Plan{How: Squash, Into: "old", Integration: integration, Head: "h1", Target: "h0"}, "auth"); err != nil || changed || len(g.set) != 0 || !g.squashed {
		t.Errorf("a squash that adds nothing: %v %v set %v", changed, err, g.set)
	}
	if !strings.HasPrefix(g.msg, "auth: squash of "+integration+" at h1 (zerg)") || !strings.Contains(g.msg, "- one\n- two") {
		t.Errorf("squash message %q", g.msg)
	}
	g = &fakeGit{mergeErr: errors.New("conflict")}
	var me *MergeError
	if _, err := Apply(ctx, g, Plan{How: MergeCommit, Into: "old", Head: "h1", Target: "h0"}, "auth"); !errors.As(err, &me) || len(g.set) != 0 {
		t.Errorf("a conflict: %v set %v", err, g.set)
	}
	g = &fakeGit{}
	if _, err := Apply(ctx, g, Plan{How: Create, Into: "new", Head: "h1"}, "auth"); err != nil || len(g.set) != 1 || g.set[0] != "new h1 00" {
		t.Errorf("create: %v set %v", err, g.set)
	}
}

// TestReviewVerdict: a review of this head with a blocking finding, or one
// that could not finish, blocks; a review of another head does not.
func TestReviewVerdict(t *testing.T) {
	dir := t.TempDir()
	if v, err := ReviewVerdict(dir, "h1"); v != nil || err != nil {
		t.Fatalf("no review: %+v %v", v, err)
	}
	write := func(s journey.Summary) {
		s.Version = journey.SummaryVersion
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, journey.ReviewJSONFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(journey.Summary{Head: "h1", Blocking: true, Counts: map[journey.Severity]int{journey.Blocking: 2}, Errors: []string{}})
	if v, err := ReviewVerdict(dir, "h1"); err != nil || v == nil || v.Blocking != 2 || v.Incomplete != "" {
		t.Errorf("blocking: %+v %v", v, err)
	}
	if v, _ := ReviewVerdict(dir, "h2"); v != nil {
		t.Errorf("another head: %+v", v)
	}
	write(journey.Summary{Head: "h1", Counts: map[journey.Severity]int{}, Errors: []string{"the answer could not be read"}})
	if v, _ := ReviewVerdict(dir, "h1"); v == nil || v.Incomplete != "the answer could not be read" {
		t.Errorf("incomplete: %+v", v)
	}
}
