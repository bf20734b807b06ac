package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
	"github.com/zergrush/zerg/internal/term"
)

// rushPlan is what zerg rush --dry-run shows: the graph's analysis for the
// run's workers, the cost projection and why the rush would ask before it
// starts. The text and the JSON are both rendered from it, so they cannot
// disagree.
type rushPlan struct {
	feature  string
	cfg      config.Config
	workers  int
	rehearse bool
	graph    *spec.Graph
	an       spec.Analysis
	proj     runstate.Projection
	confirm  []string // why rush would ask before it starts; none when it would not
	// existing is the feature's run when it has one already: a rush would
	// refuse to start, so the plan of a fresh run is not what comes next.
	existing *runstate.View
}

// printPlan shows what rush would do, and changes nothing.
func printPlan(a *app, graphFile, feature string, cfg config.Config, workers int, rehearse bool, paths run.Paths, asJSON bool) error {
	root := run.RepoRootOf(graphFile)
	r, err := run.LoadGraph(graphFile, run.GraphLoadFromLog(root, cfg, paths))
	if err != nil {
		return badInput(err)
	}
	if !r.Valid() {
		a.printIssues(graphFile, r)
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s: invalid task graph (%d errors)", graphFile, len(r.Errors))}
	}
	p := rushPlan{feature: feature, cfg: cfg, workers: workers, rehearse: rehearse, graph: r.Graph,
		an: spec.Analyze(r.Graph, workers),
		proj: runstate.Project(runstate.ProjectOptions{Graph: r.Graph, Config: cfg, Workers: workers, SpecDir: paths.SpecDir,
			History: runstate.HistoryLogs(filepath.Dir(paths.RunDir), feature), Rehearsal: rehearse})}
	// A dry run is never a resume: the whole graph is what remains.
	p.confirm = gateReasons(cfg, p.proj.Range, p.proj.FanOut)
	if v, _, err := run.Inspect(paths); err == nil && v.State != runstate.RunNotStarted {
		p.existing = &v
	}
	if asJSON {
		return printJSON(a.stdout, p.json())
	}
	if p.existing != nil {
		p.printExisting(a)
		return nil
	}
	p.print(a)
	return nil
}

// printExisting says what a rush of a feature that has a run would do
// instead of a plan for a fresh one: it would refuse to start.
func (p rushPlan) printExisting(a *app) {
	v := *p.existing
	fmt.Fprintf(a.stdout, "%s has a run already (%s, %s at %s): zerg rush %s would refuse to start (dry run: nothing is changed)\n",
		p.feature, runWords(v), v.IntegrationBranch, shortID(term.Clean(v.Head)), p.feature)
	switch v.State {
	case runstate.RunDelivered:
		fmt.Fprintf(a.stdout, "next: review and merge it (zerg merge %s --into BRANCH); zerg cleanup %s --all removes the run, to plan it afresh\n", p.feature, p.feature)
	case runstate.RunRunning:
		fmt.Fprintf(a.stdout, "next: zerg status %s --watch follows it\n", p.feature)
	default:
		fmt.Fprintf(a.stdout, "next: zerg rush %s --resume continues it (zerg status %s shows what is left); zerg cleanup %s --all removes it, to plan it afresh\n", p.feature, p.feature, p.feature)
	}
}

func (p rushPlan) print(a *app) {
	w, cfg, proj := a.stdout, p.cfg, p.proj
	model := map[bool]string{true: "scripted (rehearsal)", false: "real API"}[p.rehearse]
	fmt.Fprintf(w, "Plan for %s (dry run: nothing is changed)\n", p.feature)
	fmt.Fprintf(w, "  workers %d · mode %s · schedule %s · model %s\n", p.workers, cfg.Mode, cfg.Schedule, model)
	fmt.Fprintf(w, "  budgets: $%.2f per task, %d turns per attempt; %d task retries\n",
		cfg.Budget.TaskUSD, cfg.Budget.MaxTurns, cfg.Retry.TaskRetries)
	fmt.Fprintf(w, "  integration branch: %s\n", run.IntegrationBranch(p.feature))
	if len(cfg.Gates) == 0 {
		fmt.Fprintln(w, "  gates: none (add gates to .zerg/config.yaml)")
	}
	for _, g := range cfg.Gates {
		fmt.Fprintf(w, "  gate %s: %s\n", g.Name, g.Command)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nLEVEL\tTASK\tMODEL\tTOKENS\tCOST (LOW–HIGH)\tVERIFICATION\tOWNS")
	for _, li := range p.an.Levels {
		for _, id := range li.Tasks {
			t := p.graph.Task(id)
			tp := proj.Task(id)
			fmt.Fprintf(tw, "%d\t%s\t%s (%s)\t%s\t$%.2f ($%.2f–$%.2f)\t%s\t%s\n", li.Level, id, tp.Model, tp.Tier,
				fmtTokens(tp.Tokens.Total()), tp.Expected, tp.Low, tp.High, truncate(verificationOf(t, "-"), 40), listOrDash(t.Files.Owned(), 3))
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, l := range proj.Levels {
		fmt.Fprintf(w, "level %d: %d task(s), $%.2f expected ($%.2f–$%.2f)\n", l.Level, l.Tasks, l.Expected, l.Low, l.High)
	}
	fmt.Fprintf(w, "projected cost: $%.2f expected, $%.2f–$%.2f, %s tokens expected (%s)\n",
		proj.Expected, proj.Low, proj.High, fmtTokens(proj.Tokens.Total()), proj.BasisText())
	if note := claude.UnpricedNote(runModels(proj, cfg, nil)); note != "" {
		fmt.Fprintf(w, "note: %s\n", note)
	}
	if len(p.confirm) > 0 {
		fmt.Fprintf(w, "rush will ask before it starts: %s (--yes skips the question)\n", strings.Join(p.confirm, "; "))
	}
	if b := cfg.Budget.RunUSD; b > 0 {
		fmt.Fprintf(w, "run budget: $%.2f (budget.run_usd); running attempts %s when it stops the launching\n", b, cfg.Budget.OnExceed)
	}
	if p.an.TotalMinutes > 0 {
		fmt.Fprintf(w, "\nestimated work %s; lower bound with %d workers: %s (level barriers)\n", fmtMinutes(p.an.TotalMinutes), p.workers, fmtMinutes(p.an.LowerBoundLevels))
	}
	fmt.Fprintln(w, strings.TrimSpace("\nrun it: zerg rush "+p.feature+map[bool]string{true: " --rehearse", false: ""}[p.rehearse]))
}

func verificationOf(t *spec.Task, none string) string {
	if t.Verification != nil && t.Verification.Command != "" {
		return t.Verification.Command
	}
	return none
}

// planJSON is rush --dry-run --json (docs/json.md).
type planJSON struct {
	Feature           string         `json:"feature"`
	Workers           int            `json:"workers"`
	Mode              string         `json:"mode"`
	Schedule          string         `json:"schedule"`
	Rehearsal         bool           `json:"rehearsal"`
	IntegrationBranch string         `json:"integration_branch"`
	Budget            planBudgetJSON `json:"budget"`
	Gates             []planGateJSON `json:"gates"`
	Levels            []planLevel    `json:"levels"`
	Tasks             []planTask     `json:"tasks"`
	Projection        planProjection `json:"projection"`
	// Confirm says why rush would ask before it starts ([] when it would
	// not): the projected high figure or the fan-out above the config's
	// limits.
	Confirm  []string     `json:"confirm"`
	Analysis analysisJSON `json:"analysis"`
	// ExistingRun is the feature's run when it has one already (a rush
	// would refuse to start; --resume continues it): its state and head.
	ExistingRun *existingRunJSON `json:"existing_run,omitempty"`
}

type existingRunJSON struct {
	State         runstate.RunState `json:"state"`
	Head          string            `json:"head,omitempty"`
	RefusedWrites int               `json:"refused_writes,omitempty"`
}

type planBudgetJSON struct {
	TaskUSD                  float64 `json:"task_usd"`
	MaxTurns                 int     `json:"max_turns"`
	TaskRetries              int     `json:"task_retries"`
	RunUSD                   float64 `json:"run_usd,omitempty"`
	OnExceed                 string  `json:"on_exceed,omitempty"`
	ConfirmAboveUSD          float64 `json:"confirm_above_usd,omitempty"`
	MaxWorkersWithoutConfirm int     `json:"max_workers_without_confirm,omitempty"`
}

type planGateJSON struct {
	Name    string `json:"name"`
	Command string `json:"command"`
}

type planLevel struct {
	Level     int            `json:"level"`
	Tasks     []string       `json:"tasks"`
	Projected runstate.Range `json:"projected"`
}

type planTask struct {
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

type planProjection struct {
	Basis        string          `json:"basis"` // estimate or history
	Factor       float64         `json:"factor,omitempty"`
	HistoryTasks int             `json:"history_tasks,omitempty"`
	FanOut       int             `json:"fan_out"`
	Tokens       runstate.Tokens `json:"tokens"`
	Projected    runstate.Range  `json:"projected"`
}

func (p rushPlan) json() planJSON {
	cfg, proj := p.cfg, p.proj
	out := planJSON{Feature: p.feature, Workers: p.workers, Mode: cfg.Mode, Schedule: cfg.Schedule, Rehearsal: p.rehearse,
		IntegrationBranch: run.IntegrationBranch(p.feature),
		Budget: planBudgetJSON{TaskUSD: cfg.Budget.TaskUSD, MaxTurns: cfg.Budget.MaxTurns, TaskRetries: cfg.Retry.TaskRetries,
			RunUSD: cfg.Budget.RunUSD, ConfirmAboveUSD: cfg.Budget.ConfirmAboveUSD, MaxWorkersWithoutConfirm: cfg.Budget.MaxWorkersWithoutConfirm},
		Gates: []planGateJSON{}, Levels: []planLevel{}, Tasks: []planTask{}, Confirm: nonNil(p.confirm),
		Projection: planProjection{Basis: proj.Basis, Factor: proj.Factor, HistoryTasks: proj.HistoryTasks, FanOut: proj.FanOut,
			Tokens: proj.Tokens, Projected: proj.Range},
		Analysis: analysisOut(p.an)}
	if cfg.Budget.RunUSD > 0 {
		out.Budget.OnExceed = cfg.Budget.OnExceed
	}
	if v := p.existing; v != nil {
		out.ExistingRun = &existingRunJSON{State: v.State, Head: v.Head, RefusedWrites: v.RefusedWrites}
	}
	for _, g := range cfg.Gates {
		out.Gates = append(out.Gates, planGateJSON{Name: g.Name, Command: g.Command})
	}
	for _, l := range proj.Levels {
		pl := planLevel{Level: l.Level, Tasks: []string{}, Projected: l.Range}
		for _, li := range p.an.Levels {
			if li.Level == l.Level {
				pl.Tasks = nonNil(li.Tasks)
			}
		}
		out.Levels = append(out.Levels, pl)
	}
	for _, li := range p.an.Levels {
		for _, id := range li.Tasks {
			t, tp := p.graph.Task(id), proj.Task(id)
			out.Tasks = append(out.Tasks, planTask{ID: id, Level: li.Level, Model: tp.Model, Tier: tp.Tier,
				PromptTokens: tp.PromptTokens, Turns: tp.Turns, EstimateMS: minutesMS(tp.Minutes), Tokens: tp.Tokens,
				AttemptUSD: tp.AttemptUSD, Projected: tp.Range, Verification: verificationOf(t, ""), Owns: nonNil(t.Files.Owned())})
		}
	}
	return out
}
