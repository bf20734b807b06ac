package driver

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/outcome"
)

// The documents of cluster mode: what the coordinator queues for an agent
// (ClusterJob, in cluster.Attempt.Spec) and what the agent reports back
// (ClusterReport, in cluster.Result.Outcome). Neither carries a secret: the
// worker's key stays with the coordinator's gateway, or with the agent when
// the job says AgentKey local.

// ClusterJob is one attempt as an agent runs it.
type ClusterJob struct {
	// Mode is the isolation the run requires (config mode); an agent
	// whose own is weaker refuses the attempt.
	Mode   string        `json:"mode"`
	Worker ClusterWorker `json:"worker"`
	// Verify is the task's verification, run by the agent in the worker's
	// isolation after a successful worker; nil: none.
	Verify *ClusterVerify `json:"verify,omitempty"`
	// AgentKey is config.AgentKeyLocal when the worker uses the agent
	// host's own key (through a gateway on the agent, with Policy); empty
	// or config.AgentKeyCoordinator: the coordinator's, through the tunnel.
	AgentKey string `json:"agent_key,omitempty"`
	// Policy is the attempt's gateway policy for the agent's gateway (a
	// local job only): models, caps, and a budget that is the task's,
	// bounded by what the run's budget had left at the launch.
	Policy *ClusterPolicy `json:"policy,omitempty"`
}

// ClusterPolicy is the travelling part of a gateway.Policy: the run's
// meter stays with the coordinator.
type ClusterPolicy struct {
	Models []string `json:"models,omitempty"`
	// Resolved are the model ids the coordinator's launch check saw the
	// CLI send for an alias (gateway.Policy.Resolved).
	Resolved    map[string][]string `json:"resolved,omitempty"`
	MaxTokens   int64               `json:"max_tokens,omitempty"`
	Betas       []string            `json:"betas,omitempty"`
	Strict      bool                `json:"strict,omitempty"`
	ServerTools []string            `json:"server_tools,omitempty"`
	BudgetUSD   float64             `json:"budget_usd,omitempty"`
}

// gateway is the agent's gateway policy of a local job (none for a
// coordinator job: the coordinator's gateway applies it).
func (p *ClusterPolicy) gateway() gateway.Policy {
	if p == nil {
		return gateway.Policy{}
	}
	return gateway.Policy{Models: p.Models, Resolved: p.Resolved, MaxTokens: p.MaxTokens, Betas: p.Betas, Strict: p.Strict,
		ServerTools: p.ServerTools, TaskUSD: p.BudgetUSD}
}

// LocalKey reports whether the job's worker uses the agent's own key.
func (j ClusterJob) LocalKey() bool { return j.AgentKey == config.AgentKeyLocal }

// ClusterWorker is the part of a claude.Spec that travels: what the worker
// is asked and allowed. Paths, the binary, the user and the API endpoint
// are the agent's.
type ClusterWorker struct {
	Prompt             string            `json:"prompt"`
	Model              string            `json:"model,omitempty"`
	FallbackModel      string            `json:"fallback_model,omitempty"`
	MaxTurns           int               `json:"max_turns,omitempty"`
	MaxBudgetUSD       float64           `json:"max_budget_usd,omitempty"`
	Tools              []string          `json:"tools,omitempty"`
	AllowedTools       []string          `json:"allowed_tools,omitempty"`
	DisallowedTools    []string          `json:"disallowed_tools,omitempty"`
	PermissionMode     string            `json:"permission_mode,omitempty"`
	AppendSystemPrompt string            `json:"append_system_prompt,omitempty"`
	MaxRetries         int               `json:"max_retries,omitempty"`
	APITimeout         time.Duration     `json:"api_timeout,omitempty"`
	IdleTimeout        time.Duration     `json:"idle_timeout,omitempty"`
	SetEnv             map[string]string `json:"set_env,omitempty"`
	Hook               claude.HookSpec   `json:"hook"`
}

// ClusterVerify is a task's verification command.
type ClusterVerify struct {
	Command string        `json:"command"`
	Timeout time.Duration `json:"timeout"`
}

// ClusterReport is an agent's account of one lease.
type ClusterReport struct {
	// Verdict is how the worker ended as the agent's driver judged it.
	// The coordinator judges again from its own gateway's record, which
	// the agent cannot forge.
	Class  outcome.Class  `json:"class"`
	Reason string         `json:"reason"`
	Detail string         `json:"detail,omitempty"`
	Worker claude.Outcome `json:"worker"`
	// Verified says the verification ran; VerifyExit and VerifyOutput are
	// its exit code and (bounded) output.
	Verified     bool   `json:"verified,omitempty"`
	VerifyExit   int    `json:"verify_exit,omitempty"`
	VerifyOutput string `json:"verify_output,omitempty"`
	// Commit is the result's commit in the bundle; Problem says why there
	// is none (the workspace could not be committed).
	Commit  string `json:"commit,omitempty"`
	Problem string `json:"problem,omitempty"`
	// Host names the machine that ran it.
	Host string `json:"host,omitempty"`
}

// jobWorker is the travelling part of sp.
func jobWorker(sp claude.Spec) ClusterWorker {
	h := sp.Hook
	h.ZergBinary, h.ReadDirs = "", nil
	return ClusterWorker{Prompt: sp.Prompt, Model: sp.Model, FallbackModel: sp.FallbackModel, MaxTurns: sp.MaxTurns,
		MaxBudgetUSD: sp.MaxBudgetUSD, Tools: sp.Tools, AllowedTools: sp.AllowedTools, DisallowedTools: sp.DisallowedTools,
		PermissionMode: sp.PermissionMode, AppendSystemPrompt: sp.AppendSystemPrompt, MaxRetries: sp.MaxRetries,
		APITimeout: sp.APITimeout, IdleTimeout: sp.IdleTimeout, SetEnv: sp.SetEnv, Hook: h}
}

// Spec is the worker's launch spec on the agent: binary, zerg (for the
// hook), workspace, state and API endpoint are the agent's own.
func (w ClusterWorker) Spec(binary, zerg, workdir, attemptDir string, api claude.APISettings) claude.Spec {
	h := w.Hook
	h.ZergBinary = zerg
	return claude.Spec{Binary: binary, Workdir: workdir, AttemptDir: attemptDir, Prompt: w.Prompt, Model: w.Model,
		FallbackModel: w.FallbackModel, MaxTurns: w.MaxTurns, MaxBudgetUSD: w.MaxBudgetUSD, Tools: w.Tools,
		AllowedTools: w.AllowedTools, DisallowedTools: w.DisallowedTools, PermissionMode: w.PermissionMode,
		AppendSystemPrompt: w.AppendSystemPrompt, API: api, MaxRetries: w.MaxRetries, APITimeout: w.APITimeout,
		SetEnv: w.SetEnv, Hook: h, IdleTimeout: w.IdleTimeout}
}

// ParseClusterJob decodes an attempt's job.
func ParseClusterJob(raw json.RawMessage) (ClusterJob, error) {
	var j ClusterJob
	if err := json.Unmarshal(raw, &j); err != nil {
		return ClusterJob{}, fmt.Errorf("the attempt's job: %w", err)
	}
	if ModeStrength(j.Mode) < 0 {
		return ClusterJob{}, fmt.Errorf("the attempt's job: mode %q is none an agent runs", j.Mode)
	}
	if j.AgentKey != "" && j.AgentKey != config.AgentKeyCoordinator && j.AgentKey != config.AgentKeyLocal {
		return ClusterJob{}, fmt.Errorf("the attempt's job: agent_key %q is none this agent knows", j.AgentKey)
	}
	return j, nil
}

// ModeStrength orders the isolations an agent can give: subprocess (0)
// is the hook alone; sandbox (1) adds an operating-system boundary;
// container (2) is that boundary around the project's image. -1: not a
// mode an agent runs.
func ModeStrength(mode string) int {
	switch mode {
	case config.ModeSubprocess:
		return 0
	case config.ModeSandbox:
		return 1
	case config.ModeContainer:
		return 2
	}
	return -1
}

// AgentCanRun reports whether an agent in mode agent may run an attempt
// of a run in mode run: never a weaker isolation than the run's, and a
// container run needs the image (a container agent).
func AgentCanRun(agent, run string) bool {
	a, r := ModeStrength(agent), ModeStrength(run)
	if a < 0 || r < 0 {
		return false
	}
	if run == config.ModeContainer {
		return agent == config.ModeContainer
	}
	return a >= r
}
