package cli

import (
	"os"

	"github.com/zergrush/zerg/internal/projectinit"
)

// precommitExecutable locates the zerg binary the hook runs; tests replace it.
var precommitExecutable = os.Executable

// precommitStep is the init step that installs the pre-commit hook running
// `zerg scan --staged` in the hooks directory git uses (core.hooksPath when
// set). It never replaces a hook that is not zerg's: it reports it and the
// line to add instead (projectinit.InstallPrecommitHook).
func precommitStep() initStep {
	return initStep{name: "pre-commit hook",
		check: func(env *initEnv) error { return badInput(projectinit.CheckPrecommitHook(env.ctx, env.root)) },
		apply: func(env *initEnv, r *initReport) error {
			return r.note(projectinit.InstallPrecommitHook(env.ctx, env.root, projectinit.PrecommitBinary(precommitExecutable())))
		},
	}
}
