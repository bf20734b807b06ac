package run

import (
	"context"
	"path/filepath"

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
}

func (a *realAttempter) Attempt(ctx context.Context, r AttemptRequest) (attempt.Result, error) {
	return attempt.Run(ctx, a.input(r))
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
