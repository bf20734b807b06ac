// Package delivery decides how zerg merge takes a delivered run's
// integration branch into a branch of the user's, and does it: whether the
// review of the head lets it (Verdict), where the change lands (Landing),
// which of a new branch, nothing, a fast-forward, a merge commit or a
// squash it is (Decide), and moving the branch (Apply). The merge or squash
// commit is made in a private worktree of zerg's, so a conflict never
// touches a person's files. Git goes through the Git port (Repo: gitx, the
// only package that writes git), so that the decisions are tested with
// fakes; the command parses its flags, asks a person and prints.
package delivery

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/journey"
)

// Git is what a merge into the user's branch reads and changes.
type Git interface {
	BranchExists(ctx context.Context, name string) (bool, error)
	RevParse(ctx context.Context, rev string) (string, error)
	MergeBase(ctx context.Context, a, b string) (string, error)
	IsAncestor(ctx context.Context, ancestor, descendant string) (bool, error)
	// WorktreeOf is where branch is checked out, "" nowhere.
	WorktreeOf(ctx context.Context, branch string) (string, error)
	// HasTrackedChanges reports whether the worktree at dir has changes to
	// tracked files.
	HasTrackedChanges(ctx context.Context, dir string) (bool, error)
	// SetBranch moves branch to commit if it is at old (all zeros: if it
	// does not exist).
	SetBranch(ctx context.Context, branch, commit, old string) error
	// FastForward moves the branch checked out at dir to commit.
	FastForward(ctx context.Context, dir, commit string) error
	// MergeCommit makes, in a private worktree at target, the commit that
	// takes integration (at head) into target: a merge commit, or with
	// squash one commit of the whole change with message squashMsg.
	MergeCommit(ctx context.Context, integration, target, head string, squash bool, squashMsg func(subjects []string) string) (string, error)
}

// Verdict is why the latest review blocks merging the head, nil when it
// does not (journey.MergeBlock).
type Verdict struct {
	// Blocking is the review's count of blocking findings.
	Blocking int
	// Incomplete is the first error of a review that could not finish, ""
	// for a finished one: it blocks like a blocking finding, whatever else
	// it found, since it says nothing about the head.
	Incomplete string
}

// ReviewVerdict reads the latest review in specDir and says whether it
// blocks merging head.
func ReviewVerdict(specDir, head string) (*Verdict, error) {
	latest, err := journey.LoadReview(specDir)
	if err != nil {
		return nil, err
	}
	if !journey.MergeBlock(latest, head) {
		return nil, nil
	}
	v := &Verdict{Blocking: latest.Counts[journey.Blocking]}
	if len(latest.Errors) > 0 {
		v.Incomplete = latest.Errors[0]
	}
	return v, nil
}

// Landing is where the integration branch would land in into: whether
// into exists, and the commit the change is counted from (the merge base,
// or for a new branch the run's base), which the protected-paths check
// compares head with.
func Landing(ctx context.Context, g Git, into, head, base string) (exists bool, from string, err error) {
	exists, err = g.BranchExists(ctx, into)
	if err != nil {
		return false, "", err
	}
	if !exists {
		return false, base, nil
	}
	from, err = g.MergeBase(ctx, "refs/heads/"+into, head)
	return true, from, err
}

// How is what a merge does to the user's branch.
type How int

const (
	// Create makes the branch at the integration head (--create).
	Create How = iota
	// UpToDate changes nothing: the branch contains the head already.
	UpToDate
	// FastForward moves the branch to the head.
	FastForward
	// MergeCommit adds a merge commit of the integration branch.
	MergeCommit
	// Squash adds one commit holding the whole change (--squash).
	Squash
)

// Plan is a merge decided: what it does to Into.
type Plan struct {
	How         How
	Into        string
	Integration string
	Head        string // the integration head
	// Target is Into's head before the merge ("" for Create).
	Target string
	// CheckedOut is where Into is checked out, "" nowhere: git then
	// updates that working tree too.
	CheckedOut string
}

// ErrNoBranch: into does not exist and --create was not given (a mistyped
// name is an error, not a new branch).
var ErrNoBranch = errors.New("the branch does not exist")

// DirtyCheckoutError: into is checked out with changes to tracked files,
// which the merge would have to move under a person's feet.
type DirtyCheckoutError struct{ Dir string }

func (e *DirtyCheckoutError) Error() string {
	return "checked out in " + e.Dir + " with uncommitted changes"
}

// Decide plans the merge of integration (at head) into into, which exists
// or not (Landing).
func Decide(ctx context.Context, g Git, into, integration, head string, exists, create, squash bool) (Plan, error) {
	p := Plan{Into: into, Integration: integration, Head: head}
	if !exists {
		if !create {
			return p, ErrNoBranch
		}
		p.How = Create
		return p, nil
	}
	target, err := g.RevParse(ctx, "refs/heads/"+into)
	if err != nil {
		return p, err
	}
	p.Target = target
	if done, err := g.IsAncestor(ctx, head, target); err != nil {
		return p, err
	} else if done {
		p.How = UpToDate
		return p, nil
	}
	ff, err := g.IsAncestor(ctx, target, head)
	if err != nil {
		return p, err
	}
	switch {
	case squash:
		p.How = Squash
	case ff:
		p.How = FastForward
	default:
		p.How = MergeCommit
	}
	// Where is BRANCH checked out? Then git must update that working tree too.
	if p.CheckedOut, err = g.WorktreeOf(ctx, into); err != nil {
		return p, err
	}
	if p.CheckedOut != "" {
		// Untracked files do not block a merge (git refuses by itself to
		// overwrite one); changes to tracked files do.
		if changed, err := g.HasTrackedChanges(ctx, p.CheckedOut); err != nil || changed {
			return p, &DirtyCheckoutError{Dir: p.CheckedOut}
		}
	}
	return p, nil
}

// MergeError: the merge or squash commit could not be made (a
// *gitx.MergeConflict names the files); nothing changed.
type MergeError struct{ Err error }

func (e *MergeError) Error() string { return e.Err.Error() }
func (e *MergeError) Unwrap() error { return e.Err }

// UpdateError: the checked-out branch could not be moved to the result;
// nothing changed.
type UpdateError struct{ Err error }

func (e *UpdateError) Error() string { return e.Err.Error() }
func (e *UpdateError) Unwrap() error { return e.Err }

// Apply does plan p; feature names the squash commit. changed is false
// when the branch already held the change (a merge that adds nothing).
func Apply(ctx context.Context, g Git, p Plan, feature string) (changed bool, err error) {
	switch p.How {
	case UpToDate:
		return false, nil
	case Create:
		// The all-zero old value makes the update fail if the branch
		// appeared meanwhile, rather than overwrite it.
		if err := g.SetBranch(ctx, p.Into, p.Head, strings.Repeat("0", len(p.Head))); err != nil {
			return false, fmt.Errorf("create branch %s: %w", p.Into, err)
		}
		return true, nil
	}
	result := p.Head
	if p.How != FastForward {
		result, err = g.MergeCommit(ctx, p.Integration, p.Target, p.Head, p.How == Squash, func(subjects []string) string {
			return SquashMessage(feature, p.Integration, p.Head, subjects)
		})
		if err != nil {
			return false, &MergeError{Err: err}
		}
		if result == p.Target {
			return false, nil
		}
	}
	if p.CheckedOut != "" {
		if err := g.FastForward(ctx, p.CheckedOut, result); err != nil {
			return false, &UpdateError{Err: err}
		}
	} else if err := g.SetBranch(ctx, p.Into, result, p.Target); err != nil {
		return false, err
	}
	return true, nil
}

// SquashMessage is the message of the squash commit: the feature, the
// integration head, and the subjects of the commits it holds (the first 50).
func SquashMessage(feature, integration, head string, subjects []string) string {
	lines := subjects
	if len(lines) > 50 {
		lines = append(lines[:50:50], fmt.Sprintf("- … and %d more", len(lines)-50))
	}
	return fmt.Sprintf("%s: squash of %s at %s (zerg)\n\n%s", feature, integration, gitx.ShortHash(head), strings.Join(lines, "\n"))
}

// Repo is Git through gitx.
type Repo struct{ *gitx.Repo }

func (r Repo) MergeBase(ctx context.Context, a, b string) (string, error) {
	out, err := r.Run(ctx, "merge-base", a, b)
	return strings.TrimSpace(out), err
}

func (r Repo) HasTrackedChanges(ctx context.Context, dir string) (bool, error) {
	return r.In(dir).HasTrackedChanges(ctx)
}

func (r Repo) FastForward(ctx context.Context, dir, commit string) error {
	return r.In(dir).FastForward(ctx, commit)
}

func (r Repo) MergeCommit(ctx context.Context, integration, target, head string, squash bool, squashMsg func([]string) string) (string, error) {
	tmp, err := fsx.MkdirTemp("zerg-merge-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	ws := filepath.Join(tmp, "ws")
	if err := r.AddDetachedWorktree(ctx, ws, target); err != nil {
		return "", err
	}
	// Best effort: the directory goes with tmp, and git prunes the
	// registration of a worktree whose directory is gone.
	defer func() { _ = r.RemoveWorktree(context.WithoutCancel(ctx), ws) }()
	w := r.In(ws)
	if !squash {
		return w.Merge(ctx, integration, fmt.Sprintf("Merge %s (zerg)", integration))
	}
	subjects, err := w.Run(ctx, "log", "--format=- %s", "--reverse", target+".."+head, "--")
	if err != nil {
		return "", err
	}
	return w.SquashMerge(ctx, head, squashMsg(strings.Split(strings.TrimSpace(subjects), "\n")))
}
