package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/journey"
	"github.com/zergrush/zerg/internal/mockapi"
	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/preflight"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

func init() { register(newRushCmd) }

type rushFlags struct {
	workers  int
	mode     string
	schedule string
	resume   bool
	dryRun   bool
	noCheck  bool
	cluster  string
	rehearse bool
	scenario string
	graph    string
	asJSON   bool
	yes      bool
	plain    bool
	// waitForReset overrides retry.wait_for_reset when given.
	waitForReset bool
}

func newRushCmd(a *app) *cobra.Command {
	var f rushFlags
	cmd := &cobra.Command{
		Use:   "rush FEATURE",
		Short: "Run the feature's task graph with parallel Claude Code workers",
		Long: `Run a feature's task graph: N real Claude Code workers at once, each in its own
workspace outside your working tree (--mode, default the config's mode): a
private clone in a bubblewrap sandbox (sandbox), a private clone in a container
of the project's image (container), a git worktree (subprocess), or a private
clone that a Task subagent of your own Claude Code session works in (tasks:
run it as /zerg:rush FEATURE --mode tasks inside the session; zerg tasks next
starts this coordinator). Every
level's work is verified, checked for file ownership, committed by zerg, merged
into zerg/<feature>/integration and put through the quality gates before the
next level starts. Your own branches and
working tree are never touched.

--rehearse runs everything for real except the model: a scripted Messages API
(zerg mockapi) answers from .zerg/specs/<feature>/scenario.yaml (or --scenario),
so a whole run can be rehearsed offline without an API key or cost. A run keeps
the mode it started in: --resume of a rehearsal is a rehearsal.

--resume continues a stopped, failed or crashed run without redoing merged work.
It takes graph edits it can (added tasks run; tasks not merged yet may change or
go) and refuses the others, naming the task; it builds on commits someone added
to the integration branch and never moves that branch backwards.

Every rush starts with a cost projection (--dry-run shows it per task and level;
docs/cost.md). Above budget.confirm_above_usd (the projection's high figure) or
budget.max_workers_without_confirm workers at once, rush asks y/N on a terminal
and refuses without one unless --yes. budget.run_usd stops the launching before
it would be passed; an account refusal (credit, usage limit, key) stops it at
once; both end the run resumable, committed work kept. With --wait-for-reset
(retry.wait_for_reset), a usage limit that says when it resets is waited out
instead: the run shows the time, waits (at most retry.wait_for_reset_max,
default 6h), then runs the refused tasks again by itself; Ctrl-C during the
wait stops the run resumable.

On a terminal (stdin and stdout) the rush shows a live view instead of its
progress lines (docs/tui.md): levels with progress bars and an ETA, one row per
running worker, failures with their diagnosis, the breaker, backpressure and
rate limits. l opens the selected task's log; q closes the view and the run
goes on printing its lines; Ctrl-C (or s, then y) stops the run, resumable.
--plain or ZERG_NO_TUI=1 prints the lines on a terminal too.

Exit status: 0 delivered, 1 not delivered (the report names the tasks, or the
budget or account that stopped it), 2 bad input or launch not confirmed (nothing
written), 3 interrupted (continue with --resume), 4 another zerg is running this
feature.`,
		Args: cobra.ExactArgs(1),
		ValidArgsFunction: func(c *cobra.Command, args []string, s string) ([]string, cobra.ShellCompDirective) {
			fs, _ := a.completeFeatures(c, args, s)
			return fs, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRush(cmd.Context(), a, args[0], f, cmd.Flags().Changed)
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.workers, "workers", "w", 0, "workers at once (default: workers in .zerg/config.yaml; a resume keeps the run's)")
	fl.StringVar(&f.mode, "mode", "", "isolation: sandbox, container, subprocess or tasks (default from config)")
	fl.StringVar(&f.schedule, "schedule", "", "scheduling: level or dag (default from config; a resume keeps the run's)")
	fl.BoolVar(&f.resume, "resume", false, "continue a stopped run without repeating merged work")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan (levels, workers, models, budgets) and change nothing")
	fl.BoolVar(&f.rehearse, "rehearse", false, "use the scripted model (zerg mockapi) instead of the real API")
	fl.StringVar(&f.scenario, "scenario", "", "scenario for --rehearse (default .zerg/specs/FEATURE/scenario.yaml)")
	fl.StringVar(&f.graph, "graph", "", "task graph file (default .zerg/specs/FEATURE/task-graph.json)")
	fl.BoolVar(&f.asJSON, "json", false, "print the final report (with --dry-run: the plan) as JSON (docs/json.md)")
	fl.BoolVarP(&f.yes, "yes", "y", false, "start without asking, even above budget.confirm_above_usd or budget.max_workers_without_confirm")
	fl.BoolVar(&f.waitForReset, "wait-for-reset", false, "on a usage limit with a reset time, wait for the reset and go on (default: retry.wait_for_reset)")
	fl.BoolVar(&f.plain, "plain", false, "print progress lines instead of the live view on a terminal (also ZERG_NO_TUI=1)")
	fl.StringVar(&f.cluster, "cluster", "", "send the attempts to the zerg agents of this server (tls://HOST:PORT; sets cluster.url)")
	fl.BoolVar(&f.noCheck, "no-check", false, "skip the checks before the run: the verification commands and gates on the base (zerg check) and the CLI's launch check")
	return cmd
}

// noteLaunchCheck keeps the launch check's report for the run and says
// what of it the user should know: what the CLI sends that zerg has not
// reviewed, and the models it cannot price.
func noteLaunchCheck(a *app, r *run.Run, opts *run.Options, cli *cliprobe.Report, proj runstate.Projection) {
	opts.CLI = cli
	r.UseLaunchCheck(cli)
	if note := launchNote(cli); note != "" {
		fmt.Fprintf(a.stderr, "zerg: %s\n", note)
	}
	if note := claude.UnpricedNote(runModels(proj, opts.Config, cli)); note != "" {
		fmt.Fprintf(a.stderr, "zerg: %s\n", note)
	}
}

// rushCheck says what zerg check found at the start of a rush: an
// environment problem stops the rush before any model request, with the
// problems listed.
func rushCheck(a *app, feature string, rep *run.CheckReport, err error) error {
	if err != nil {
		return err
	}
	if rep.Problems > 0 {
		printCheck(a.stderr, rep)
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s: the environment lacks what the commands need (%s); fix it and rush again, or rush with --no-check",
			feature, pluralf(rep.Problems, "%d problem", "%d problems"))}
	}
	var pass, expected int
	for _, r := range rep.Results {
		if r.Verdict == preflight.Pass {
			pass++
		} else {
			expected++
		}
	}
	switch {
	case len(rep.Results) == 0:
	case rep.ReusedFrom != nil:
		fmt.Fprintf(a.stderr, "zerg: check: reused the check of %s ago (same base, commands, config and zerg): %d pass, %d fail before the feature is written, no environment problem; zerg check %s runs them again\n",
			time.Since(*rep.ReusedFrom).Round(time.Second), pass, expected, feature)
	default:
		fmt.Fprintf(a.stderr, "zerg: check: %s on the base in %.1fs: %d pass, %d fail before the feature is written, no environment problem\n",
			pluralf(len(rep.Results), "%d command", "%d commands"), rep.Seconds, pass, expected)
	}
	return nil
}

func runRush(ctx context.Context, a *app, feature string, f rushFlags, set func(string) bool) error {
	// zerg rush … | head must not end the run when head exits.
	a.survivePipes()
	cwd, err := a.getwd()
	if err != nil {
		return err
	}
	root, err := zergRepoRoot(ctx, cwd)
	if err != nil {
		return err
	}
	cfg, err := loadProjectConfig(root)
	if err != nil {
		return err
	}
	if set("workers") && (f.workers < 1 || f.workers > 64) {
		return usageErrorf("--workers %d: give a number from 1 to 64", f.workers)
	}
	// The config's mode and schedule are checked when it loads; these are
	// the flags, checked only when given.
	if set("mode") {
		if err := applyModeFlag(&cfg, f.mode); err != nil {
			return err
		}
	}
	if set("cluster") {
		if why := config.ClusterURLProblem(f.cluster); why != "" {
			return usageErrorf("--cluster: %s", why)
		}
		if !driver.CapabilitiesOf(cfg).StartsWorker {
			return usageErrorf("--cluster and mode tasks cannot be combined: tasks mode's workers are your own session's")
		}
		if !cfg.Cluster.Embed && cfg.Cluster.Creds == "" {
			return usageErrorf("--cluster: set cluster.embed: true (the coordinator runs the server) or cluster.creds in .zerg/config.yaml")
		}
		cfg.Cluster.URL = f.cluster
	}
	if set("wait-for-reset") {
		cfg.Retry.WaitForReset = f.waitForReset
	}
	if set("schedule") {
		if !slices.Contains(config.Schedules, f.schedule) {
			return usageErrorf("--schedule %s: not a schedule; use --schedule level or --schedule dag", f.schedule)
		}
		cfg.Schedule = f.schedule
	}
	if !f.rehearse && f.scenario != "" {
		return usageErrorf("--scenario needs --rehearse")
	}
	if f.scenario != "" {
		// Recorded with the run, so a resume from anywhere finds it.
		if f.scenario, err = filepath.Abs(f.scenario); err != nil {
			return err
		}
	}
	if f.resume && f.dryRun {
		return usageErrorf("--dry-run and --resume cannot be combined")
	}
	paths, err := run.PathsFor(ctx, root, feature)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if f.graph, err = graphFlag(cwd, f.graph, paths, feature); err != nil {
		return err
	}
	workers := 0 // a resume keeps the recorded count unless --workers is given
	if set("workers") {
		workers = f.workers
	} else if !f.resume {
		workers = cfg.Workers
	}
	// The graph as the warnings below read it; printPlan and run.Open
	// check it and refuse a bad one.
	var graph *spec.Graph
	if r, err := run.LoadGraph(f.graph, run.GraphLoadFromLog(root, cfg, paths)); err == nil && r.Valid() {
		graph = r.Graph
	}
	// What the rush will not see of the working tree is said before it
	// starts (and before the launch gate asks), dry runs included.
	if graph != nil {
		if w := dirtyTreeWarning(ctx, root, feature, graph, f.resume); w != "" {
			fmt.Fprintf(a.stderr, "zerg: warning: %s\n", w)
		}
	}
	if f.dryRun {
		return printPlan(a, f.graph, feature, cfg, max(workers, 1), f.rehearse, paths, f.asJSON)
	}
	// In tasks mode the user's Claude Code session runs the workers with
	// its own binary and credentials: zerg starts no CLI and asks no API.
	tasksMode := !driver.CapabilitiesOf(cfg).StartsWorker
	if tasksMode && f.rehearse {
		return usageErrorf("--rehearse and --mode tasks cannot be combined: in tasks mode your Claude Code session is the model; point it at zerg mockapi serve to rehearse")
	}
	var loc claude.Location
	if !tasksMode {
		if loc, err = claude.Locate(cfg.Claude.Path); err != nil {
			return usageErrorf("%v", err)
		}
		// The binary every worker runs must run: a broken one would fail
		// every attempt as an infrastructure fault, retried for minutes.
		if err := probeBinary(ctx, loc, cfg); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// On a terminal the live view shows the run; the progress lines wait
	// in liveLines, printed as before until the view starts and after it
	// ends. --json keeps stdout for the report.
	var lines *liveLines
	var progress io.Writer = a.stderr
	liveTerm := a.liveTerminal(f.plain)
	if liveTerm != nil && !f.asJSON {
		lines = newLiveLines(a.stderr)
		progress = lines
	}
	opts := run.Options{Root: root, Feature: feature, GraphFile: f.graph, Config: cfg, Workers: workers,
		Resume: f.resume, Rehearsal: f.rehearse, Scenario: f.scenario, Progress: progress}
	if set("schedule") {
		opts.Schedule = f.schedule
	}
	// Everything is checked before anything is written.
	r, err := run.Open(ctx, opts)
	if err != nil {
		return err
	}
	// What zerg found; internal/attempt builds the launch spec from it.
	worker := claude.Spec{Binary: loc.Path, Hook: claude.HookSpec{ZergBinary: claude.HookBinary(self)}}
	rehearsal, scenario := r.Rehearsal()
	if !rehearsal && !tasksMode {
		// The endpoint and the key, tried once before any launch: a wrong
		// base URL or a refused key is the run's fault, named here, not
		// every worker's, found attempt by attempt.
		if worker.API, err = apiFromConfig(cfg, true); err != nil {
			return err
		}
		if err := probeEndpoint(ctx, worker.API, cfg); err != nil {
			return err
		}
		r.SetCredential(credentialNote(cfg, worker.API, os.Getenv), worker.API.Subscription())
	}
	proj, remaining := r.Project()
	// The checks: the launch check (one turn of the CLI per model through
	// a gateway with the run's policy, against a local stub: a setting
	// that would refuse the CLI's own requests stops the rush here, naming
	// it) and zerg check (the commands on the base: an environment problem
	// stops it before any model request). Side by side they take the time
	// of the longer; a gate that asks first hears what the launch check
	// found (the CLI's models decide what is priced), and only then are
	// the commands run.
	switch {
	case f.noCheck:
		if note := claude.UnpricedNote(runModels(proj, cfg, nil)); note != "" {
			fmt.Fprintf(a.stderr, "zerg: %s\n", note)
		}
	case !f.yes && len(gateReasons(cfg, remaining, proj.FanOut)) > 0: // the gate asks
		cli, err := run.LaunchCheck(ctx, opts, graph, worker)
		if err != nil {
			return err
		}
		noteLaunchCheck(a, r, &opts, cli, proj)
	}
	// The launch gate: before anything is written or any model is asked
	// (the endpoint's probe counts tokens, which is free).
	if err := launchGate(a, feature, cfg, proj, remaining, f.yes); err != nil {
		return err
	}
	if !f.noCheck {
		launched := opts.CLI != nil
		reuse := opts
		reuse.ReuseCheck = true // a passing check of the same base, commands, config and zerg
		rep, err := run.Check(ctx, reuse, worker, nil)
		if !launched && rep != nil {
			noteLaunchCheck(a, r, &opts, rep.CLI, proj)
		}
		if err := rushCheck(a, opts.Feature, rep, err); err != nil {
			return err
		}
	}
	if rehearsal {
		if scenario == "" {
			scenario = filepath.Join(paths.SpecDir, "scenario.yaml")
		}
		sc, err := mockapi.LoadScenario(scenario)
		if err != nil {
			return badInput(err)
		}
		// A scenario task no prompt of the run matches (a typo in a task
		// id, a task renamed) never answers: its worker gets the default
		// script and the rehearsal fails far from the cause.
		if graph != nil {
			warnUnmatched(a, pathx.Short(cwd, scenario), feature, journey.UnmatchedScenarioTasks(sc, feature, graph, paths.SpecDir))
		}
		if err := fsx.PrivateDir(paths.RunDir); err != nil {
			return err
		}
		srv := mockapi.NewServer(sc, mockapi.WithLogFile(filepath.Join(paths.RunDir, "mockapi.jsonl")))
		url, err := srv.Start("127.0.0.1:0")
		if err != nil {
			return err
		}
		defer srv.Close()
		worker.API = claude.APISettings{BaseURL: url, APIKey: "zerg-rehearsal"}
		// A scripted model answers when its turn's think time is over:
		// timeouts just past that keep injected faults from costing minutes.
		worker.MaxRetries = 2
		worker.APITimeout = sc.RehearsalTimeout()
	}
	// Where the OS has no subreaper (macOS, ZERG_PORTABLE_PROC=1) that is
	// known (zerg doctor, docs/processes.md), not a warning on every rush.
	if err := claude.EnableSubreaper(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		fmt.Fprintf(a.stderr, "zerg: warning: cannot become a child subreaper (%v); processes that detach from a worker may survive it\n", err)
	}
	var v *runstate.View
	if lines != nil {
		v, err = a.executeLive(ctx, r, worker, paths, lines, liveTerm)
	} else {
		v, err = r.Execute(ctx, worker)
	}
	if v != nil {
		if f.asJSON {
			if jerr := printViewJSON(a.stdout, *v); jerr != nil {
				return jerr
			}
		} else {
			a.printReport(*v)
		}
	}
	if err != nil && v != nil && (errors.Is(err, run.NotDelivered) || errors.Is(err, run.Interrupted) || errors.Is(err, run.Fatal)) {
		// (A budget or account stop is explained below the report: the
		// cause and when and how to resume.)
		// The report said what happened and what to do.
		code, _ := explain(err)
		return silent(code)
	}
	return err
}

// dirtyTreeWarning says, as one line, what of the working tree a run of the
// graph does not see, or "": workers start from a commit (HEAD for a new
// run, the integration branch for a resume), never from the working tree.
// Files the graph's tasks own come first, with their task: their workers
// write them from the commit, and merging the result may then conflict
// with the uncommitted version. Changes under .zerg/ are left out: zerg
// reads the config, graph and specs from the working tree itself.
func dirtyTreeWarning(ctx context.Context, root, feature string, g *spec.Graph, resume bool) string {
	git := gitx.New(root)
	files, err := git.DirtyFiles(ctx)
	if err != nil {
		return ""
	}
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasPrefix(f, ".zerg/") })
	if len(files) == 0 {
		return ""
	}
	var owned []string
	for _, f := range files {
		for _, t := range g.Tasks {
			if t.Owns(f) {
				owned = append(owned, fmt.Sprintf("%s (%s)", f, t.ID))
				break
			}
		}
	}
	from := "HEAD"
	if head, err := git.RevParse(ctx, "HEAD"); err == nil {
		from = fmt.Sprintf("HEAD (%s, the committed state)", gitx.ShortHash(head))
	}
	if resume {
		from = run.IntegrationBranch(feature) + " (the work merged so far)"
	}
	changes := pluralf(len(files), "%d file", "%d files")
	if len(owned) == 0 {
		return fmt.Sprintf("the working tree has uncommitted changes (%s, none a task of %s owns); the run starts from %s, not from the working tree, so workers do not see them",
			changes, feature, from)
	}
	n := len(owned)
	if n > 5 {
		owned = append(owned[:5:5], fmt.Sprintf("and %d more", n-5))
	}
	return fmt.Sprintf("the working tree has uncommitted changes (%s) and the run starts from %s, not from the working tree: tasks of %s own %d of them: %s; their workers do not see those changes and merging the result may conflict with them (commit them first to build on them)",
		changes, from, feature, n, strings.Join(owned, ", "))
}

// loadProjectConfig reads .zerg/config.yaml, or the defaults when there is
// none (config.LoadOrDefault); a config that does not load is bad input.
func loadProjectConfig(root string) (config.Config, error) {
	return inputOf(config.LoadOrDefault(run.ConfigFile(root)))
}

// rushStdin is where the launch gate reads its answer.
var rushStdin io.Reader = os.Stdin

// launchGate asks before a run whose projected high figure is above
// budget.confirm_above_usd or whose fan-out is above
// budget.max_workers_without_confirm; without a terminal it refuses (exit
// 2, nothing written) unless --yes. A resume counts what it has left to run.
func launchGate(a *app, feature string, cfg config.Config, p runstate.Projection, remaining runstate.Range, yes bool) error {
	why := gateReasons(cfg, remaining, p.FanOut)
	if len(why) == 0 || yes {
		return nil
	}
	reason := strings.Join(why, "; ")
	if !stdinIsTerminal() {
		return usageErrorf("%s: %s; nothing was started. See zerg rush %s --dry-run, then run it again with --yes, or raise the limit in .zerg/config.yaml",
			feature, reason, feature)
	}
	fmt.Fprintf(a.stderr, "zerg: %s.\nStart the run of %s? [y/N] ", reason, feature)
	line, _ := bufio.NewReader(rushStdin).ReadString('\n')
	if ans := strings.ToLower(strings.TrimSpace(line)); ans == "y" || ans == "yes" {
		return nil
	}
	return usageErrorf("%s: not started (not confirmed); nothing was written", feature)
}

// gateReasons says why a rush asks before it starts, if it does: what the
// remaining tasks could cost (their high figure) against
// budget.confirm_above_usd, and the fan-out against
// budget.max_workers_without_confirm. The launch gate and --dry-run both
// use it, so the dry run says exactly what the rush will do.
func gateReasons(cfg config.Config, remaining runstate.Range, fanOut int) []string {
	var why []string
	if b := cfg.Budget.ConfirmAboveUSD; b > 0 && remaining.High > b {
		why = append(why, fmt.Sprintf("the projected cost could reach $%.2f (expected $%.2f), above budget.confirm_above_usd $%.2f",
			remaining.High, remaining.Expected, b))
	}
	if m := cfg.Budget.MaxWorkersWithoutConfirm; m > 0 && fanOut > m {
		why = append(why, fmt.Sprintf("%d workers would run at once, above budget.max_workers_without_confirm %d", fanOut, m))
	}
	return why
}

// fmtTokens prints a token count briefly: 950, 12.3k, 4.56M.
func fmtTokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
