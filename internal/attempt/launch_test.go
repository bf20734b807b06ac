package attempt

import (
	"slices"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/spec"
)

// The config's worker_policy, toolchains.off, models, limits and env.pass
// go into every worker's template; what the command found stays.
func TestWorkerTemplateTakesTheConfig(t *testing.T) {
	cfg := config.Default()
	cfg.WorkerPolicy.AllowCommands = []string{"bd"}
	cfg.WorkerPolicy.DenyCommands = []string{"terraform"}
	cfg.Toolchains.Off = []string{"node"}
	cfg.Models.Implement, cfg.Models.Fallback = "claude-sonnet-4-5", "claude-haiku-4-5"
	cfg.Budget.MaxTurns, cfg.Budget.TaskUSD = 30, 1.5
	cfg.Heartbeat.StallTimeout = 90 * time.Second
	cfg.Env.Pass = []string{"GOFLAGS"}
	found := claude.Spec{Binary: "/usr/bin/claude", Hook: claude.HookSpec{ZergBinary: "/usr/local/bin/zerg"},
		API: claude.APISettings{BaseURL: "http://127.0.0.1:1"}, PassEnv: []string{"LANG"}}
	sp := WorkerTemplate(cfg, found)
	h := sp.Hook
	if sp.Binary != "/usr/bin/claude" || h.ZergBinary != "/usr/local/bin/zerg" || sp.API.BaseURL != "http://127.0.0.1:1" {
		t.Errorf("what was found is lost: %+v", sp)
	}
	if !slices.Equal(h.AllowCommands, []string{"bd"}) || !slices.Equal(h.DenyCommands, []string{"terraform"}) ||
		!slices.Equal(h.ToolchainsOff, []string{"node"}) {
		t.Errorf("hook = %+v, want the config's worker_policy and toolchains.off", h)
	}
	if sp.Model != "claude-sonnet-4-5" || sp.FallbackModel != "claude-haiku-4-5" || sp.MaxTurns != 30 ||
		sp.MaxBudgetUSD != 1.5 || sp.IdleTimeout != 90*time.Second {
		t.Errorf("models and limits = %q %q %d %v %v", sp.Model, sp.FallbackModel, sp.MaxTurns, sp.MaxBudgetUSD, sp.IdleTimeout)
	}
	if !slices.Equal(sp.PassEnv, []string{"LANG", "GOFLAGS"}) || !slices.Equal(found.PassEnv, []string{"LANG"}) {
		t.Errorf("PassEnv = %q (found's %q)", sp.PassEnv, found.PassEnv)
	}
}

// One attempt's spec: its directories and prompt, the tier's model unless
// the task names one, the task's limits and its owned paths in the hook.
func TestLaunchSpecAddsTheAttempt(t *testing.T) {
	cfg := config.Default()
	cfg.Models.Implement = "claude-sonnet-4-5"
	template := WorkerTemplate(cfg, claude.Spec{Binary: "claude"})
	task := &spec.Task{ID: "T1", Files: spec.Files{Create: []string{"a.go"}}, Verification: &spec.Verification{Command: "go test ./..."}}
	sp := LaunchSpec(template, Launch{Task: task, Tier: "claude-opus-4-5", Workspace: "/ws", Dir: "/att", Prompt: "do T1"})
	if sp.Workdir != "/ws" || sp.AttemptDir != "/att" || sp.Prompt != "do T1" || sp.Model != "claude-opus-4-5" {
		t.Errorf("spec = %+v", sp)
	}
	if !slices.Equal(sp.Hook.AllowedPaths, []string{"a.go"}) || !slices.Contains(sp.Hook.BashCommands, "go test ./...") ||
		len(sp.Hook.Protect) == 0 || sp.Hook.BashSandboxed {
		t.Errorf("hook = %+v, want the task's paths, its verification, zerg's protection, not sandboxed", sp.Hook)
	}
	task.Model, task.MaxTurns, task.BudgetUSD = "claude-haiku-4-5", 7, 0.25
	sp = LaunchSpec(template, Launch{Task: task, Tier: "claude-opus-4-5"})
	if sp.Model != "claude-haiku-4-5" || sp.MaxTurns != 7 || sp.MaxBudgetUSD != 0.25 {
		t.Errorf("the task's own model and limits: %q %d %v", sp.Model, sp.MaxTurns, sp.MaxBudgetUSD)
	}
	if sp = LaunchSpec(template, Launch{Task: task, Sandboxed: true}); !sp.Hook.BashSandboxed {
		t.Error("Sandboxed: the hook does not know the isolation bounds the commands")
	}
	if sp = LaunchSpec(template, Launch{Task: &spec.Task{ID: "T2"}}); sp.Model != "claude-sonnet-4-5" {
		t.Errorf("no tier, no task model: %q, want models.implement", sp.Model)
	}
}
