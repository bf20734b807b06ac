package run

import "github.com/zergrush/zerg/internal/claude"

// CheckWorker is what Check and RunGates need of a worker's launch: the
// Claude Code CLI's install (claudePath as the config names it), which the
// sandbox makes visible to the commands as it would to a worker, and the
// zerg binary its hooks call. No model is called, so a CLI not found is no
// error: the commands run without it. The worker user they run as is the
// driver's.
func CheckWorker(claudePath, zergBinary string) claude.Spec {
	var worker claude.Spec
	if loc, err := claude.Locate(claudePath); err == nil {
		worker.Binary = loc.Path
	}
	worker.Hook.ZergBinary = zergBinary
	return worker
}
