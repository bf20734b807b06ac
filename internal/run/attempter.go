package run

import (
	"context"
	"path/filepath"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
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
	worker  claude.Spec
	sec     *securityKit
	specDir string
	kit     *sandboxKit // sandbox mode; nil in subprocess mode
	// filesystems are paths on the filesystems of the run's records and of
	// its workspaces, for the free-space floor.
	filesystems []string
}

func (a *realAttempter) Attempt(ctx context.Context, r AttemptRequest) (attempt.Result, error) {
	in, release, err := a.input(ctx, r)
	if err != nil {
		return attempt.Result{Class: attempt.Infra, Reason: ReasonCancelled, Detail: "the run was stopped"}, nil
	}
	defer release()
	return attempt.Run(ctx, in)
}

// Recover finishes an attempt a dead coordinator left (attempt.Recover).
func (a *realAttempter) Recover(ctx context.Context, r AttemptRequest) (attempt.Result, bool, error) {
	in, release, err := a.input(ctx, r)
	if err != nil {
		return attempt.Result{}, false, err
	}
	defer release()
	return attempt.Recover(ctx, in)
}

// input is the attempt's input; release gives back the worker user it
// took (sandbox mode: one per attempt in flight, so no two sandboxes share
// a uid).
func (a *realAttempter) input(ctx context.Context, r AttemptRequest) (attempt.Input, func(), error) {
	cfg := a.cfg
	var sb *attempt.Sandboxed
	release := func() {}
	if a.kit != nil {
		u, err := a.kit.acquire(ctx)
		if err != nil {
			return attempt.Input{}, release, err
		}
		release = func() { a.kit.release(u) }
		// A build cache of the attempt's own, in its worker state.
		sb = a.kit.forCommand(u, filepath.Join(r.WorkerDir, "cache"))
	}
	return attempt.Input{
		Sandbox: sb,
		Repo:    a.repo, Feature: a.feature, Graph: a.graph, Task: r.Task, Number: r.Number, Base: r.Base,
		Workspace: r.Workspace, Branch: r.Branch, Dir: r.Dir, WorkerDir: r.WorkerDir, Previous: r.Previous,
		Protected: ProtectedPaths(cfg),
		// The records of this attempt are <run>/attempts/<task>/<n>; its
		// dependencies' are beside them.
		Context: attempt.LoadContext(attempt.ContextFiles{SpecDir: a.specDir, RulesDir: a.sec.rulesDir,
			Attempts: filepath.Dir(filepath.Dir(r.Dir)), Budget: cfg.Context.TokenBudget}, a.graph, r.Task),
		Worker: a.workerSpec(r.Model), VerifyTimeout: cfg.Verification.Timeout, VerifyEnv: cfg.Env.Pass,
		Scanner: a.sec.scanner, Audit: a.sec.audit,
		OnStart: r.OnStart, OnProgress: r.OnProgress, OnVerify: r.OnVerify,
		Disk: attempt.DiskLimits{WorkspaceBytes: int64(cfg.Disk.WorkspaceMB) << 20, MinFreeBytes: int64(cfg.Disk.MinFreeMB) << 20,
			Filesystems: a.filesystems},
	}, release, nil
}

// workerSpec fills the launch template's gaps from the config.
func (a *realAttempter) workerSpec(model string) claude.Spec {
	sp := a.worker
	cfg := a.cfg
	if model != "" {
		sp.Model = model // the task's tier (ModelFor)
	}
	if sp.Model == "" {
		sp.Model = cfg.Models.Implement
	}
	if sp.FallbackModel == "" {
		sp.FallbackModel = cfg.Models.Fallback
	}
	if sp.MaxTurns == 0 {
		sp.MaxTurns = cfg.Budget.MaxTurns
	}
	if sp.MaxBudgetUSD == 0 {
		sp.MaxBudgetUSD = cfg.Budget.TaskUSD
	}
	if sp.IdleTimeout == 0 {
		sp.IdleTimeout = cfg.Heartbeat.StallTimeout
	}
	sp.PassEnv = append(append([]string{}, sp.PassEnv...), cfg.Env.Pass...)
	return sp
}
