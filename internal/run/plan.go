package run

import (
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

// Plan is what zerg rush --dry-run shows: the graph's analysis for the
// run's workers, the cost projection and why the rush would ask before it
// starts. The text and the JSON are both rendered from it, so they cannot
// disagree.
type Plan struct {
	Feature    string
	Config     config.Config
	Workers    int
	Rehearse   bool
	Graph      *spec.Graph
	Analysis   spec.Analysis
	Projection runstate.Projection
	Confirm    []string // why rush would ask before it starts; none when it would not
	// Existing is the feature's run when it has one already: a rush would
	// refuse to start, so the plan of a fresh run is not what comes next.
	Existing *runstate.View
}

// PlanJSON is rush --dry-run --json (docs/json.md).
type PlanJSON struct {
	Feature           string             `json:"feature"`
	Workers           int                `json:"workers"`
	Mode              string             `json:"mode"`
	Schedule          string             `json:"schedule"`
	Rehearsal         bool               `json:"rehearsal"`
	IntegrationBranch string             `json:"integration_branch"`
	Budget            PlanBudgetJSON     `json:"budget"`
	Gates             []PlanGateJSON     `json:"gates"`
	Levels            []PlanLevelJSON    `json:"levels"`
	Tasks             []PlanTaskJSON     `json:"tasks"`
	Projection        PlanProjectionJSON `json:"projection"`
	// Confirm says why rush would ask before it starts ([] when it would
	// not): the projected high figure or the fan-out above the config's
	// limits.
	Confirm  []string          `json:"confirm"`
	Analysis spec.AnalysisJSON `json:"analysis"`
	// ExistingRun is the feature's run when it has one already (a rush
	// would refuse to start; --resume continues it): its state and head.
	ExistingRun *ExistingRunJSON `json:"existing_run,omitempty"`
}

type ExistingRunJSON struct {
	State         runstate.RunState `json:"state"`
	Head          string            `json:"head,omitempty"`
	RefusedWrites int               `json:"refused_writes,omitempty"`
}

type PlanBudgetJSON struct {
	TaskUSD                  float64 `json:"task_usd"`
	MaxTurns                 int     `json:"max_turns"`
	TaskRetries              int     `json:"task_retries"`
	RunUSD                   float64 `json:"run_usd,omitempty"`
	OnExceed                 string  `json:"on_exceed,omitempty"`
	ConfirmAboveUSD          float64 `json:"confirm_above_usd,omitempty"`
	MaxWorkersWithoutConfirm int     `json:"max_workers_without_confirm,omitempty"`
}

type PlanGateJSON struct {
	Name    string `json:"name"`
	Command string `json:"command"`
}

type PlanLevelJSON struct {
	Level     int            `json:"level"`
	Tasks     []string       `json:"tasks"`
	Projected runstate.Range `json:"projected"`
}

type PlanTaskJSON struct {
	ID           string          `json:"id"`
	Level        int             `json:"level"`
	Model        string          `json:"model"`
	Tier         string          `json:"tier"` // graph, simple or implement (docs/cost.md)
	PromptTokens int64           `json:"prompt_tokens"`
	Turns        int             `json:"turns"`
	EstimateMS   int64           `json:"estimate_ms"` // the projection's (5 minutes without estimate_minutes)
	Tokens       runstate.Tokens `json:"tokens"`      // expected, one attempt
	AttemptUSD   float64         `json:"attempt_usd"`
	Projected    runstate.Range  `json:"projected"`
	Verification string          `json:"verification,omitempty"`
	Owns         []string        `json:"owns"`
}

type PlanProjectionJSON struct {
	Basis        string          `json:"basis"` // estimate or history
	Factor       float64         `json:"factor,omitempty"`
	HistoryTasks int             `json:"history_tasks,omitempty"`
	FanOut       int             `json:"fan_out"`
	Tokens       runstate.Tokens `json:"tokens"`
	Projected    runstate.Range  `json:"projected"`
}

// JSON is the plan as rush --dry-run --json prints it.
func (p Plan) JSON() PlanJSON {
	cfg, proj := p.Config, p.Projection
	out := PlanJSON{Feature: p.Feature, Workers: p.Workers, Mode: cfg.Mode, Schedule: cfg.Schedule, Rehearsal: p.Rehearse,
		IntegrationBranch: IntegrationBranch(p.Feature),
		Budget: PlanBudgetJSON{TaskUSD: cfg.Budget.TaskUSD, MaxTurns: cfg.Budget.MaxTurns, TaskRetries: cfg.Retry.TaskRetries,
			RunUSD: cfg.Budget.RunUSD, ConfirmAboveUSD: cfg.Budget.ConfirmAboveUSD, MaxWorkersWithoutConfirm: cfg.Budget.MaxWorkersWithoutConfirm},
		Gates: []PlanGateJSON{}, Levels: []PlanLevelJSON{}, Tasks: []PlanTaskJSON{}, Confirm: spec.NonNil(p.Confirm),
		Projection: PlanProjectionJSON{Basis: proj.Basis, Factor: proj.Factor, HistoryTasks: proj.HistoryTasks, FanOut: proj.FanOut,
			Tokens: proj.Tokens, Projected: proj.Range},
		Analysis: p.Analysis.JSON()}
	if cfg.Budget.RunUSD > 0 {
		out.Budget.OnExceed = cfg.Budget.OnExceed
	}
	if v := p.Existing; v != nil {
		out.ExistingRun = &ExistingRunJSON{State: v.State, Head: v.Head, RefusedWrites: v.RefusedWrites}
	}
	for _, g := range cfg.Gates {
		out.Gates = append(out.Gates, PlanGateJSON{Name: g.Name, Command: g.Command})
	}
	for _, l := range proj.Levels {
		pl := PlanLevelJSON{Level: l.Level, Tasks: []string{}, Projected: l.Range}
		for _, li := range p.Analysis.Levels {
			if li.Level == l.Level {
				pl.Tasks = spec.NonNil(li.Tasks)
			}
		}
		out.Levels = append(out.Levels, pl)
	}
	for _, li := range p.Analysis.Levels {
		for _, id := range li.Tasks {
			t, tp := p.Graph.Task(id), proj.Task(id)
			out.Tasks = append(out.Tasks, PlanTaskJSON{ID: id, Level: li.Level, Model: tp.Model, Tier: tp.Tier,
				PromptTokens: tp.PromptTokens, Turns: tp.Turns, EstimateMS: spec.MinutesMS(tp.Minutes), Tokens: tp.Tokens,
				AttemptUSD: tp.AttemptUSD, Projected: tp.Range, Verification: t.VerificationCommand(), Owns: spec.NonNil(t.Files.Owned())})
		}
	}
	return out
}
