package attempt

import (
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

// A worker's launch spec is built here and nowhere else, in two steps:
// WorkerTemplate once per run (what the project's config sets for every
// worker), LaunchSpec once per attempt (what the task and the attempt add).
// The commands only say what they found (the CLI binary, the zerg binary
// the hook runs, the endpoint and key); a driver's Workspace.Launch then
// fits the built spec to its isolation (the user, the namespaces, the
// gateway's placeholder key), and claude.Spec renders it as argv, settings
// and environment. The launch check, `zerg doctor`'s probe and `zerg hook
// check` take the same two steps, so what they show is what a worker gets.

// WorkerTemplate is every worker's launch spec as far as the run fixes it:
// found (the CLI binary, Hook.ZergBinary, the API, RunAs) with cfg's
// worker_policy and toolchains.off in the hook, models.implement and
// models.fallback, budget.max_turns and budget.task_usd, the stall timeout
// and env.pass. What found sets already is kept. It is applied once to a
// spec: env.pass is appended.
func WorkerTemplate(cfg config.Config, found claude.Spec) claude.Spec {
	sp := found
	h := &sp.Hook
	h.AllowCommands = orList(h.AllowCommands, cfg.WorkerPolicy.AllowCommands)
	h.DenyCommands = orList(h.DenyCommands, cfg.WorkerPolicy.DenyCommands)
	h.ToolchainsOff = orList(h.ToolchainsOff, cfg.Toolchains.Off)
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

// Launch is what one attempt adds to the run's template.
type Launch struct {
	Task *spec.Task
	// Tier is the model of the task's tier (config ModelFor), "" for the
	// template's; the task's own model wins over both.
	Tier string
	// Workspace is the worker's working directory, Dir its private
	// directory (settings, policy, home), Prompt what it is asked.
	Workspace, Dir, Prompt string
	// Protection is what no task may touch (nil: zerg's own list).
	Protection *security.Protection
	// Sandboxed says the worker's isolation bounds its commands (a
	// driver's BoundsCommands): the hook's Bash check then refuses only
	// what reaches outside. The pipeline leaves it false because the
	// driver says so itself when it fits the spec (driver.Sandbox).
	Sandboxed bool
}

// LaunchSpec is the launch spec of one attempt: the run's template (a
// WorkerTemplate) with the attempt's directories and prompt, the model and
// limits of the task (its tier's model; its own model, max turns and
// budget where it sets them) and the task's hook (WorkerHook).
func LaunchSpec(template claude.Spec, l Launch) claude.Spec {
	sp := template
	sp.Workdir, sp.AttemptDir, sp.Prompt = l.Workspace, l.Dir, l.Prompt
	if l.Tier != "" {
		sp.Model = l.Tier
	}
	if t := l.Task; t != nil {
		if t.Model != "" {
			sp.Model = t.Model
		}
		if t.MaxTurns > 0 {
			sp.MaxTurns = t.MaxTurns
		}
		if t.BudgetUSD > 0 {
			sp.MaxBudgetUSD = t.BudgetUSD
		}
		sp.Hook = WorkerHook(sp.Hook, t, l.Protection, l.Sandboxed)
	}
	return sp
}

// orList is have, or else def: a list the caller set is kept.
func orList(have, def []string) []string {
	if len(have) > 0 {
		return have
	}
	return def
}
