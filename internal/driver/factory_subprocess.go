package driver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/toolchain"
)

// subprocessFactory is subprocess mode: a git worktree of the user's
// repository, the worker as an unprivileged user (zerg's own when zerg is
// not root).
var subprocessFactory = Factory{
	Mode:         config.ModeSubprocess,
	Capabilities: Capabilities{StartsWorker: true, MeasuresUsage: true, Workspace: WorktreeWorkspace},
	// Subprocess mode's worker user when zerg runs as root.
	Ready: func(ctx context.Context, env Env) (Prepared, error) {
		var p Prepared
		if env.RunAs == nil && os.Geteuid() == 0 {
			u, err := security.EnsureWorkerUser(ctx, env.Config.Security.WorkerUser)
			if err != nil {
				return p, &InputError{fmt.Errorf(
					"running as root needs the unprivileged worker user %q: %v (set security.worker_user in .zerg/config.yaml, or run zerg as a normal user)", env.Config.Security.WorkerUser, err)}
			}
			p.RunAs, env.RunAs = u, u
		}
		return p, checkSetup(env.WorkspaceRoot, env.RunAs)
	},
	New: func(_ context.Context, env Env) (Driver, []toolchain.Cache, error) {
		runAs := env.Worker.RunAs
		if runAs == nil {
			runAs = env.RunAs
		}
		return &Subprocess{Repo: env.Repo, RunAs: runAs, Lanes: env.Workspaces}, nil, nil
	},
	// An agent's subprocesses run as the default worker user when the
	// agent runs as root.
	Agent: func(ctx context.Context, _ AgentEnv) (AgentIsolation, error) {
		if os.Geteuid() != 0 {
			return AgentIsolation{}, nil
		}
		u, err := security.EnsureWorkerUser(ctx, config.DefaultWorkerUser)
		if err != nil {
			return AgentIsolation{}, fmt.Errorf("running as root needs the unprivileged worker user %s: %w", config.DefaultWorkerUser, err)
		}
		return AgentIsolation{RunAs: u}, nil
	},
}

// checkSetup finds what would make workers fail after branches were
// created: a workspace directory the worker user cannot reach.
func checkSetup(workspaceRoot func() (string, error), runAs *security.WorkerUser) error {
	root, err := workspaceRoot()
	if err != nil {
		return err
	}
	if runAs == nil {
		return nil
	}
	// The directory is created later with the modes it needs; what exists
	// of its path now must let the worker user through.
	d := root
	for {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		d = filepath.Dir(d)
	}
	if err := runAs.CheckAccess(d, security.AccessExec); err != nil {
		return fmt.Errorf("the workspaces in %s are out of the worker user's reach: %w; set ZERG_WORKSPACES to a directory it can reach (for example under /var/tmp)", root, err)
	}
	return nil
}

// reapGrace is how long a recorded worker gets between SIGTERM and SIGKILL.
const reapGrace = 2 * time.Second

// hasGitDir reports whether dir has a .git directory of its own (a
// private clone), not a worktree's .git file.
func hasGitDir(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil && fi.IsDir()
}
