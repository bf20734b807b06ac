package attempt

import (
	"path/filepath"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/policy"
	"github.com/zergrush/zerg/internal/spec"
)

// CheckPolicy is the hook policy an attempt of t gets in a run with cfg in
// mode, with ws as its workspace and dir as its private directory: what
// zerg hook check shows. It takes the steps a worker's launch takes
// (WorkerTemplate with cfg's worker_policy and toolchains.off, LaunchSpec
// with cfg's protection and whether mode's isolation bounds commands), and
// the policy goes through dir/policy.json the way the worker's hook reads
// it, so the check decides what the hook would. zerg is the binary the
// hook runs: neither it nor the prompt changes the policy, both only have
// to be there for the spec to be launchable.
func CheckPolicy(cfg config.Config, mode string, t *spec.Task, ws, dir, zerg string) (*policy.Policy, error) {
	found := claude.Spec{Binary: "claude", Hook: claude.HookSpec{ZergBinary: zerg}}
	sp := LaunchSpec(WorkerTemplate(cfg, found), Launch{Task: t, Workspace: ws, Dir: dir,
		Prompt: "zerg hook check " + t.ID, Protection: cfg.Protection(),
		Sandboxed: driver.CapabilitiesOf(config.Config{Mode: mode}).BoundsCommands})
	pol, err := sp.Policy()
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "policy.json")
	if err := policy.Write(file, pol); err != nil {
		return nil, err
	}
	return policy.Load(file)
}
