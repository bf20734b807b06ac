package run

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/gitx"
)

// gitIntegrator merges a level's task commits in zerg's dedicated merge
// workspace (a detached worktree no worker ever touches), and runs the
// gates on the merged head in a private clone in the driver's isolation:
// the gates run the workers' code.
type gitIntegrator struct {
	repo *gitx.Repo
	ws   string // the merge workspace
	drv  driver.Driver
	pass []string
}

func (g *gitIntegrator) Merge(ctx context.Context, base string, merges []TaskMerge) (MergedLevel, error) {
	if err := g.repo.DiscardWorktree(ctx, g.ws); err != nil {
		return nil, fmt.Errorf("merge workspace %s: %w", g.ws, err)
	}
	if err := g.repo.AddDetachedWorktree(ctx, g.ws, base); err != nil {
		return nil, err
	}
	m := &gitMerged{g: g}
	w := g.repo.In(g.ws)
	for _, t := range merges {
		if _, err := w.Merge(ctx, t.Commit, fmt.Sprintf("Merge %s: %s", t.Task, t.Title)); err != nil {
			m.Discard()
			return nil, &ConflictError{Task: t.Task, Err: err}
		}
	}
	head, err := w.RevParse(ctx, "HEAD")
	if err != nil {
		m.Discard()
		return nil, err
	}
	m.head = head
	return m, nil
}

type gitMerged struct {
	g    *gitIntegrator
	head string
}

func (m *gitMerged) Head() string { return m.head }

// RunGate runs one gate on the merged head: a private clone of it (the
// gate sees nothing else of the repository), a fresh HOME, the isolation a
// worker's verification gets.
func (m *gitMerged) RunGate(ctx context.Context, g config.Gate) (int, string) {
	ws, err := m.g.drv.Isolate(ctx, m.head, "_gate-"+g.Name)
	if err != nil {
		return -1, "zerg: prepare the gate's workspace: " + err.Error()
	}
	// Best effort: a gate's workspace left behind is removed as stale by
	// the next run's setup.
	defer func() { _ = ws.Remove(context.WithoutCancel(ctx)) }()
	defer ws.Close()
	return ws.Exec(ctx, driver.Command{Command: g.Command, Timeout: g.EffectiveTimeout(), Pass: m.g.pass,
		Env: []string{"ZERG_GATE=" + g.Name}, Home: "home"})
}

func (m *gitMerged) Discard() {
	_ = m.g.repo.DiscardWorktree(context.Background(), m.g.ws)
}

// gateRun is one gate's outcome on a merged head.
type gateRun struct {
	gate config.Gate
	exit int
	out  string
	took time.Duration // the gate's wall time, clone included
}

// runGates runs gates on m side by side, each in its own private clone as
// one alone would, at most one per CPU: a level waits for its slowest gate
// rather than for their sum. The outcomes come back in the config's order
// up to and including the first required gate that failed, which is what
// running them one after another would have reported (a later gate's
// outcome is dropped: it would not have run).
func runGates(ctx context.Context, m MergedLevel, gates []config.Gate) []gateRun {
	runs := make([]gateRun, len(gates))
	sem := make(chan struct{}, max(1, min(len(gates), runtime.NumCPU())))
	var wg sync.WaitGroup
	for i, g := range gates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			exit, out := m.RunGate(ctx, g)
			runs[i] = gateRun{gate: g, exit: exit, out: out, took: time.Since(start)}
		}()
	}
	wg.Wait()
	for i, r := range runs {
		if r.exit != 0 && r.gate.Required {
			return runs[:i+1]
		}
	}
	return runs
}
