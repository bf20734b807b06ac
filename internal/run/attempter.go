package run

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/spec"
)

// realAttempter runs attempts with the attempt package: a workspace, the
// real claude CLI, verification, the checks and zerg's commit.
type realAttempter struct {
	repo    *gitx.Repo
	feature string
	graph   *spec.Graph
	cfg     config.Config
	// worker is the run's launch template (attempt.WorkerTemplate).
	worker  claude.Spec
	sec     *securityKit
	specDir string
	drv     driver.Driver
	// filesystems are paths on the filesystems of the run's records and of
	// its workspaces, for the free-space floor.
	filesystems []string
	// prepared are the workers prepared ahead of their attempts.
	prepared preparedPool
}

func (a *realAttempter) Attempt(ctx context.Context, r AttemptRequest) (attempt.Result, error) {
	in := a.input(r)
	in.Prepared = a.take(r)
	return attempt.Run(ctx, in)
}

// Recover finishes an attempt a dead coordinator left (attempt.Recover).
func (a *realAttempter) Recover(ctx context.Context, r AttemptRequest) (attempt.Result, bool, error) {
	return attempt.Recover(ctx, a.input(r))
}

// input is the attempt's input.
func (a *realAttempter) input(r AttemptRequest) attempt.Input {
	cfg := a.cfg
	return attempt.Input{
		Driver: a.drv, MaxFileBytes: int64(cfg.Sandbox.MaxCommitFileMB) << 20,
		Repo: a.repo, Feature: a.feature, Graph: a.graph, Task: r.Task, Number: r.Number, Base: r.Base,
		Workspace: r.Workspace, Branch: r.Branch, Dir: r.Dir, WorkerDir: r.WorkerDir, Previous: r.Previous,
		Protection:        cfg.Protection(),
		FailRefusedWrites: cfg.Security.RefusedWrites == config.RefusedWritesFail,
		// The records of this attempt are <run>/attempts/<task>/<n>; its
		// dependencies' are beside them.
		Context: attempt.LoadContext(attempt.ContextFiles{SpecDir: a.specDir, RulesDir: a.sec.rulesDir,
			Attempts: filepath.Dir(filepath.Dir(r.Dir)), Budget: cfg.Context.TokenBudget}, a.graph, r.Task),
		Worker: a.worker, Tier: r.Model, VerifyTimeout: cfg.Verification.Timeout, VerifyEnv: cfg.Env.Pass,
		Scanner: a.sec.scanner, Audit: a.sec.audit,
		OnStart: r.OnStart, OnProgress: r.OnProgress, OnVerify: r.OnVerify,
		Disk: attempt.DiskLimits{WorkspaceBytes: int64(cfg.Disk.WorkspaceMB) << 20, MinFreeBytes: int64(cfg.Disk.MinFreeMB) << 20,
			Filesystems: a.filesystems},
	}
}

// Preparer is an Attempter that can prepare an attempt's worker before the
// attempt runs (attempt.Prepare): the coordinator asks for the next
// attempts while the running ones wait for the model.
type Preparer interface {
	// Prepare makes req's worker ready from req.Base (the head of the
	// moment) in the background; an Attempt for the same task and number
	// uses it. It is best effort: a worker that cannot be prepared is not.
	Prepare(ctx context.Context, req AttemptRequest)
	// DiscardPrepared throws away every prepared worker not yet used.
	DiscardPrepared()
}

// preparedKey names the attempt a worker was prepared for.
type preparedKey struct {
	task   string
	number int
}

// preparedPool holds the prepared workers of a run, each until its attempt
// takes it or the run discards it.
type preparedPool struct {
	mu      sync.Mutex
	ready   map[preparedKey]*attempt.Prepared
	pending map[preparedKey]chan struct{} // being prepared: closed when done
}

func (a *realAttempter) Prepare(ctx context.Context, req AttemptRequest) {
	k := preparedKey{req.Task.ID, req.Number}
	p := &a.prepared
	p.mu.Lock()
	if p.ready == nil {
		p.ready, p.pending = map[preparedKey]*attempt.Prepared{}, map[preparedKey]chan struct{}{}
	}
	if _, ok := p.ready[k]; ok {
		p.mu.Unlock()
		return
	}
	if _, ok := p.pending[k]; ok {
		p.mu.Unlock()
		return
	}
	done := make(chan struct{})
	p.pending[k] = done
	p.mu.Unlock()
	go func() {
		defer close(done)
		w, err := attempt.Prepare(ctx, a.input(req))
		p.mu.Lock()
		delete(p.pending, k)
		if err == nil {
			p.ready[k] = w
		}
		p.mu.Unlock()
	}()
}

// take returns the worker prepared for req's attempt (waiting for one being
// prepared), or nil.
func (a *realAttempter) take(req AttemptRequest) *attempt.Prepared {
	k := preparedKey{req.Task.ID, req.Number}
	p := &a.prepared
	p.mu.Lock()
	done := p.pending[k]
	p.mu.Unlock()
	if done != nil {
		<-done
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.ready[k]
	delete(p.ready, k)
	return w
}

func (a *realAttempter) DiscardPrepared() {
	p := &a.prepared
	for {
		p.mu.Lock()
		var wait chan struct{}
		for _, d := range p.pending {
			wait = d
			break
		}
		ready := p.ready
		p.ready = map[preparedKey]*attempt.Prepared{}
		p.mu.Unlock()
		var g sync.WaitGroup
		for _, w := range ready {
			g.Go(w.Discard)
		}
		g.Wait()
		if wait == nil {
			return
		}
		<-wait
	}
}
