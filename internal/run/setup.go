package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/pathx"
)

// setupPlan is the tidying a new run needs before its first workspace:
// leftovers of an earlier run in the feature's workspace directory.
type setupPlan struct {
	repo    *gitx.Repo
	dir     string
	remove  []string // clean workspaces of an earlier run of this repository
	discard []string // zerg's scratch merge workspace
	aside   string   // move the directory here (it holds what git does not know)
}

// planSetup inspects the feature's workspace directory for a new run. A
// workspace of this repository with uncommitted work stops the run before
// anything is written; clean ones are removed; anything git does not know
// (a deleted repository's workspaces at the same path, old worker state) is
// moved aside whole, never deleted.
func planSetup(ctx context.Context, repo *gitx.Repo, paths Paths, resume bool) (setupPlan, error) {
	p := setupPlan{repo: repo, dir: paths.Workspaces}
	if resume {
		return p, nil
	}
	entries, err := os.ReadDir(paths.Workspaces)
	if os.IsNotExist(err) || (err == nil && len(entries) == 0) {
		return p, nil
	}
	if err != nil {
		return p, &Error{Kind: Setup, Path: paths.Workspaces, Err: err}
	}
	list, err := repo.Worktrees(ctx)
	if err != nil {
		return p, err
	}
	registered := map[string]bool{}
	for _, w := range list {
		if !pathx.Below(paths.Workspaces, w.Path) {
			continue
		}
		registered[filepath.Base(w.Path)] = true
		if w.Path == paths.Merge {
			p.discard = append(p.discard, w.Path)
			continue
		}
		if w.Prunable {
			continue
		}
		if err := repo.TrustWorkspace(w.Path); err != nil {
			return p, err
		}
		dirty, err := repo.In(w.Path).IsDirty(ctx)
		repo.UntrustWorkspace(w.Path)
		if err != nil || dirty {
			return p, &Error{Kind: StaleWorkspace, Path: w.Path, Branch: w.Branch,
				Err: fmt.Errorf("workspace %s of an earlier run holds uncommitted work", w.Path)}
		}
		p.remove = append(p.remove, w.Path)
	}
	for _, e := range entries {
		if !registered[e.Name()] {
			p.aside = fmt.Sprintf("%s.stale-%s", paths.Workspaces, time.Now().UTC().Format("20060102T150405"))
			break
		}
	}
	return p, nil
}

// apply carries the plan out.
func (p setupPlan) apply(ctx context.Context, pr *progress) error {
	for _, ws := range p.discard {
		if err := p.repo.DiscardWorktree(ctx, ws); err != nil {
			return fmt.Errorf("remove the old merge workspace: %w", err)
		}
	}
	for _, ws := range p.remove {
		if err := p.repo.TrustWorkspace(ws); err != nil {
			return err
		}
		err := p.repo.RemoveWorktree(ctx, ws)
		p.repo.UntrustWorkspace(ws)
		if err != nil {
			return &Error{Kind: StaleWorkspace, Path: ws, Err: fmt.Errorf("remove workspace %s of an earlier run: %w", ws, err)}
		}
		pr.note("removed the clean workspace %s of an earlier run", ws)
	}
	if p.aside != "" {
		if err := os.Rename(p.dir, p.aside); err != nil {
			return &Error{Kind: Setup, Path: p.dir, Err: fmt.Errorf("move the stale workspaces aside: %w", err)}
		}
		pr.note("moved the stale workspaces of an earlier run aside to %s (nothing in it was deleted)", p.aside)
	}
	return nil
}
