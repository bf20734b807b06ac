package driver

import (
	"context"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/toolchain"
)

// tasksFactory is tasks mode (docs/modes.md): the user's Claude Code
// session's subagents are the workers, with the session's own rights, and
// zerg's commands run as zerg does. It needs nothing of the machine.
var tasksFactory = Factory{
	Mode:         config.ModeTasks,
	Capabilities: Capabilities{Workspace: CloneWorkspace},
	New: func(_ context.Context, env Env) (Driver, []toolchain.Cache, error) {
		return &Tasks{Repo: env.Repo, Board: env.Board, Lanes: env.State, Lease: env.Config.Tasks.Lease}, nil, nil
	},
}
