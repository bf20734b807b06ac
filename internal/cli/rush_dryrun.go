package cli

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/textx"
)

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
	p := run.Plan{Feature: feature, Config: cfg, Workers: workers, Rehearse: rehearse, Graph: r.Graph,
		Analysis: spec.Analyze(r.Graph, workers),
		Projection: runstate.Project(runstate.ProjectOptions{Graph: r.Graph, Config: cfg, Workers: workers, SpecDir: paths.SpecDir,
			History: runstate.HistoryLogs(filepath.Dir(paths.RunDir), feature), Rehearsal: rehearse, LoadRecorded: run.LoadRecordedGraph})}
	// A dry run is never a resume: the whole graph is what remains.
	p.Confirm = gateReasons(cfg, p.Projection.Range, p.Projection.FanOut)
	if v, _, err := run.Inspect(paths); err == nil && v.State != runstate.RunNotStarted {
		p.Existing = &v
	}
	if asJSON {
		return printJSON(a.stdout, p.JSON())
	}
	if p.Existing != nil {
		printExisting(a, p)
		return nil
	}
	printPlanText(a, p)
	return nil
}

// printExisting says what a rush of a feature that has a run would do
// instead of a plan for a fresh one: it would refuse to start.
func printExisting(a *app, p run.Plan) {
	v := *p.Existing
	fmt.Fprintf(a.stdout, "%s has a run already (%s, %s at %s): zerg rush %s would refuse to start (dry run: nothing is changed)\n",
		p.Feature, v.Words(), v.IntegrationBranch, gitx.ShortHash(term.Clean(v.Head)), p.Feature)
	switch v.State {
	case runstate.RunDelivered:
		fmt.Fprintf(a.stdout, "next: review and merge it (zerg merge %s --into BRANCH); zerg cleanup %s --all removes the run, to plan it afresh\n", p.Feature, p.Feature)
	case runstate.RunRunning:
		fmt.Fprintf(a.stdout, "next: zerg status %s --watch follows it\n", p.Feature)
	default:
		fmt.Fprintf(a.stdout, "next: zerg rush %s --resume continues it (zerg status %s shows what is left); zerg cleanup %s --all removes it, to plan it afresh\n", p.Feature, p.Feature, p.Feature)
	}
}

// printPlanText shows the plan of a fresh run.
func printPlanText(a *app, p run.Plan) {
	w, cfg, proj := a.stdout, p.Config, p.Projection
	model := map[bool]string{true: "scripted (rehearsal)", false: "real API"}[p.Rehearse]
	fmt.Fprintf(w, "Plan for %s (dry run: nothing is changed)\n", p.Feature)
	fmt.Fprintf(w, "  workers %d · mode %s · schedule %s · model %s\n", p.Workers, cfg.Mode, cfg.Schedule, model)
	fmt.Fprintf(w, "  budgets: $%.2f per task, %d turns per attempt; %d task retries\n",
		cfg.Budget.TaskUSD, cfg.Budget.MaxTurns, cfg.Retry.TaskRetries)
	fmt.Fprintf(w, "  integration branch: %s\n", run.IntegrationBranch(p.Feature))
	if len(cfg.Gates) == 0 {
		fmt.Fprintln(w, "  gates: none (add gates to .zerg/config.yaml)")
	}
	for _, g := range cfg.Gates {
		fmt.Fprintf(w, "  gate %s: %s\n", g.Name, g.Command)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nLEVEL\tTASK\tMODEL\tTOKENS\tCOST (LOW–HIGH)\tVERIFICATION\tOWNS")
	for _, li := range p.Analysis.Levels {
		for _, id := range li.Tasks {
			t := p.Graph.Task(id)
			tp := proj.Task(id)
			fmt.Fprintf(tw, "%d\t%s\t%s (%s)\t%s\t$%.2f ($%.2f–$%.2f)\t%s\t%s\n", li.Level, id, tp.Model, tp.Tier,
				fmtTokens(tp.Tokens.Total()), tp.Expected, tp.Low, tp.High, textx.Truncate(cmp.Or(t.VerificationCommand(), "-"), 40), listOrDash(t.Files.Owned(), 3))
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
	if len(p.Confirm) > 0 {
		fmt.Fprintf(w, "rush will ask before it starts: %s (--yes skips the question)\n", strings.Join(p.Confirm, "; "))
	}
	if b := cfg.Budget.RunUSD; b > 0 {
		fmt.Fprintf(w, "run budget: $%.2f (budget.run_usd); running attempts %s when it stops the launching\n", b, cfg.Budget.OnExceed)
	}
	if p.Analysis.TotalMinutes > 0 {
		fmt.Fprintf(w, "\nestimated work %s; lower bound with %d workers: %s (level barriers)\n", fmtMinutes(p.Analysis.TotalMinutes), p.Workers, fmtMinutes(p.Analysis.LowerBoundLevels))
	}
	fmt.Fprintln(w, strings.TrimSpace("\nrun it: zerg rush "+p.Feature+map[bool]string{true: " --rehearse", false: ""}[p.Rehearse]))
}
