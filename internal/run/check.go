package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/preflight"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
	"github.com/zergrush/zerg/internal/toolchain"

	"mvdan.cc/sh/v3/syntax"
)

// CheckResult is one distinct command of the feature run once on the base.
type CheckResult struct {
	What     string              `json:"what"`  // "verification" or "gate"
	Names    []string            `json:"names"` // the tasks (or the gate) whose command it is
	Command  string              `json:"command"`
	Exit     int                 `json:"exit"`
	Verdict  string              `json:"verdict"` // pass, expected or environment (internal/preflight)
	Problems []preflight.Problem `json:"problems,omitempty"`
	// Diagnosis is the diagnostics engine's top hypothesis of a command
	// that failed.
	Diagnosis *diagnose.Hypothesis `json:"diagnosis,omitempty"`
	Seconds   float64              `json:"-"`
	// DurationMS is how long the command ran.
	DurationMS int64  `json:"duration_ms"`
	Output     string `json:"output,omitempty"` // the last lines of a command that failed
}

// CheckReport is what zerg check found.
type CheckReport struct {
	Feature string `json:"feature"`
	Base    string `json:"base"`
	Mode    string `json:"mode"`
	// Toolchains are the repository's toolchains (as in the config's
	// toolchains.off) and Caches what the commands got of the host for them
	// (sandbox mode; docs/toolchains.md), as the first worker slot sees it.
	Toolchains []string          `json:"toolchains"`
	Caches     []toolchain.Cache `json:"caches"`
	Results    []CheckResult     `json:"results"`
	Problems   int               `json:"problems"` // environment problems in all
	// Warnings are checks that cannot fail: a task's verification passes
	// on the base already although the task creates files.
	Warnings []CheckWarning `json:"warnings,omitempty"`
	Seconds  float64        `json:"-"`
	// DurationMS is how long the whole check took.
	DurationMS int64 `json:"duration_ms"`
	// CLI is the launch check's report: one turn of the CLI per model of
	// the run through a gateway with its policy (LaunchCheck); nil in
	// modes without a gateway.
	CLI *cliprobe.Report `json:"cli,omitempty"`
	// ReusedFrom is when the commands ran, for a report a rush reused
	// (Options.ReuseCheck) instead of running them again.
	ReusedFrom *time.Time `json:"reused_from,omitempty"`
}

// CheckWarning is one task whose verification checks nothing it delivers.
type CheckWarning struct {
	Task    string `json:"task"`
	Code    string `json:"code"` // check_cannot_fail
	Message string `json:"message"`
}

// WarnCannotFail is the code of a verification that passes on the base
// although the task creates files.
const WarnCannotFail = "check_cannot_fail"

// launchResult is the launch check's outcome, as Check waits for it.
type launchResult struct {
	report *cliprobe.Report
	err    error
}

// Check runs every distinct verification command of the graph and every
// gate once on the run's base (the integration head when there is one, else
// the checked-out commit), in the isolation workers get, and classifies each
// outcome: it passes, it fails for want of the feature (expected), or it
// fails for want of something in the environment. No model is called. It
// writes a private clone and a home beside the workspaces, removed
// when it returns (and, in sandbox mode, the worker users and their build
// caches, which the rush would create anyway), and the record of a passing
// check (checkcache.go), which opts.ReuseCheck answers from.
// Bad input (no graph, an invalid one) is an *Error of kind BadInput.
func Check(ctx context.Context, opts Options, worker claude.Spec, progress func(string)) (*CheckReport, error) {
	start := time.Now()
	paths, err := PathsFor(ctx, opts.Root, opts.Feature)
	if err != nil {
		return nil, errorf(Setup, opts.Feature, "%v", err)
	}
	if opts.GraphFile == "" {
		opts.GraphFile = paths.Graph
	}
	g, err := validGraph(opts.GraphFile, GraphLoadFromLog(opts.Root, opts.Config, paths))
	if err != nil {
		return nil, &Error{Kind: BadInput, Feature: opts.Feature, Path: opts.GraphFile, Err: err}
	}
	refs := gitRefs{repo: &gitx.Repo{Runner: gitx.New(opts.Root)}}
	base, err := refs.Branch(ctx, IntegrationBranch(opts.Feature))
	if err != nil {
		return nil, err
	}
	if base == "" {
		if base, _, err = refs.UserHead(ctx); err != nil {
			return nil, err
		}
	}
	if err := driverReady(ctx, &opts, paths); err != nil {
		return nil, err
	}
	// The CLI through the run's gateway (whatever a reused check says: the
	// CLI may have changed since), side by side with the commands: both
	// are about a second of starting processes, and neither reads the
	// other. A refusal stops the commands and is what Check returns; what
	// they laid is removed as on any other return. (A rush that ran it
	// already passes it: opts.CLI.)
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	launchCheck := func() (*cliprobe.Report, error) { return opts.CLI, nil }
	if opts.CLI == nil {
		launched := make(chan launchResult, 1)
		go func() {
			cli, err := LaunchCheck(ctx, opts, g, worker)
			if err != nil {
				stop(err)
			}
			launched <- launchResult{cli, err}
		}()
		launchCheck = sync.OnceValues(func() (*cliprobe.Report, error) {
			r := <-launched
			return r.report, r.err
		})
	}
	rep := &CheckReport{Feature: opts.Feature, Base: base, Mode: opts.Config.Mode}
	cmds := checkCommands(g, opts.Config)
	var key string
	var old *CheckReport
	if len(cmds) > 0 {
		key = checkKey(opts, base, cmds)
		if opts.ReuseCheck {
			old = reusableCheck(paths, key, time.Now())
		}
	}
	if len(cmds) == 0 || old != nil {
		if rep.CLI, err = launchCheck(); err != nil {
			return nil, err
		}
		if old != nil {
			old.CLI = rep.CLI
			return old, nil
		}
		return rep, nil
	}

	// One lane per worker slot (at most one per command and per CPU): the
	// commands run side by side, and each slot's build cache is warm before
	// the first attempt starts in it.
	n := min(max(opts.Workers, opts.Config.Workers, 1), len(cmds), runtime.NumCPU())
	isos, caches, closeAll, err := lanes(ctx, opts, paths, worker, base, "_check", n)
	if err != nil {
		if _, refused := launchCheck(); refused != nil {
			return nil, refused // the cause of a cancelled lane
		}
		return nil, err
	}
	defer closeAll()
	for _, tc := range toolchain.Detect(opts.Root) {
		if !slices.Contains(opts.Config.Toolchains.Off, tc.Name) {
			rep.Toolchains = append(rep.Toolchains, tc.Name)
		}
	}
	rep.Caches = caches
	planned := plannedPaths(g)
	own := diagnose.ProjectNames(opts.Root) // the repository's, not what a command left in a clone
	results := make([]CheckResult, len(cmds))
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range cmds {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for _, iso := range isos {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = checkOne(ctx, opts, iso, cmds[i], planned, own, worker, progress)
			}
		}()
	}
	wg.Wait()
	if rep.CLI, err = launchCheck(); err != nil {
		return nil, err
	}
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	rep.Warnings = staticCannotFail(g)
	for _, res := range results {
		rep.Problems += len(res.Problems)
		rep.Results = append(rep.Results, res)
		if res.What == "verification" && res.Verdict == preflight.Pass {
			rep.Warnings = append(rep.Warnings, cannotFail(ctx, g, res, refs.repo.Runner, base, rep.Warnings)...)
		}
	}
	took := time.Since(start)
	rep.Seconds, rep.DurationMS = took.Seconds(), took.Milliseconds()
	rememberCheck(paths, key, rep, time.Now())
	return rep, nil
}

// staticCannotFail warns of each task whose verification exits 0 whatever
// the workspace holds, read from the command itself (`pytest || true`, `go
// test ./...; exit 0`): the same lint as zerg graph validate's, here
// before the commands run.
func staticCannotFail(g *spec.Graph) []CheckWarning {
	var out []CheckWarning
	for _, t := range g.Tasks {
		if t.Verification == nil || t.NoChanges || len(t.Files.Create)+len(t.Files.Modify) == 0 {
			continue
		}
		if why := spec.CannotFail(t.Verification.Command); why != "" {
			out = append(out, CheckWarning{Task: t.ID, Code: WarnCannotFail, Message: fmt.Sprintf(
				"its verification `%s` can never fail (%s): a check that cannot fail; let it fail when the work is not done (or mark a check-only task \"expect_changes\": false)",
				strings.TrimSpace(t.Verification.Command), why)})
		}
	}
	return out
}

// cannotFail warns of each task sharing a verification that passes on the
// base although the task creates files the base lacks, or modifies files:
// it would pass with nothing written (the attempt's completeness check
// catches that, at the cost of an attempt). A task warned of already
// (static: its command cannot fail at all) is not warned twice.
func cannotFail(ctx context.Context, g *spec.Graph, res CheckResult, r *gitx.Runner, base string, already []CheckWarning) []CheckWarning {
	var out []CheckWarning
	for _, id := range res.Names {
		t := g.Task(id)
		if t == nil || t.NoChanges || slices.ContainsFunc(already, func(w CheckWarning) bool { return w.Task == id }) {
			continue
		}
		var created, modified []string
		for _, e := range t.Files.Create {
			if strings.ContainsAny(e, "*?[{") {
				continue
			}
			if _, err := r.FileAt(ctx, base, strings.TrimSuffix(e, "/")); err != nil {
				created = append(created, e)
			}
		}
		for _, e := range t.Files.Modify {
			if !strings.ContainsAny(e, "*?[{") {
				modified = append(modified, e)
			}
		}
		var msg string
		switch {
		case len(created) > 0:
			msg = fmt.Sprintf("its verification `%s` passes on the base already, though the task creates %s: a check that cannot fail; make it test what the task creates (or mark a check-only task \"expect_changes\": false)",
				res.Command, strings.Join(created, ", "))
		case len(modified) > 0:
			msg = fmt.Sprintf("its verification `%s` passes on the base already, though the task modifies %s: it cannot tell whether the change was made; make it test what the change adds (a refactor that keeps the tests green may ignore this)",
				res.Command, strings.Join(modified, ", "))
		default:
			continue
		}
		out = append(out, CheckWarning{Task: id, Code: WarnCannotFail, Message: msg})
	}
	return out
}

// checkOne runs one command in iso and classifies its outcome.
func checkOne(ctx context.Context, opts Options, iso driver.Workspace, cmd checkCommand, planned, own []string, worker claude.Spec, progress func(string)) CheckResult {
	if progress != nil {
		progress(fmt.Sprintf("check: %s %s: %s", cmd.What, strings.Join(cmd.Names, ", "), cmd.Command))
	}
	facts := preflight.Facts{
		GoModule: goModulePath(filepath.Join(iso.Dir(), "go.mod")),
		Own:      own,
		Planned:  planned,
		Command:  cmd.Command,
		Exists: func(rel string) bool {
			_, err := os.Lstat(filepath.Join(iso.Dir(), filepath.FromSlash(rel)))
			return err == nil
		},
		OnPath: func(name string) bool {
			code, _ := runIn(ctx, iso, opts, "command -v -- '"+name+"' >/dev/null 2>&1", 30*time.Second, "ZERG_CHECK=1")
			return code == 0
		},
		Resolve: func(program string) preflight.Resolved {
			return resolveInterpreter(ctx, iso, opts, program)
		},
	}
	t0 := time.Now()
	code, out := runIn(ctx, iso, opts, cmd.Command, cmd.timeout, "ZERG_CHECK=1")
	res := cmd.CheckResult
	took := time.Since(t0)
	res.Exit, res.Seconds, res.DurationMS = code, took.Seconds(), took.Milliseconds()
	res.Verdict, res.Problems, res.Diagnosis = preflight.Diagnose(code, out, facts)
	if code != 0 {
		res.Output = lastLines(security.NewRedactor(worker.API.Secrets()...).RedactString(out), 20)
	}
	return res
}

// resolveInterpreter finds an interpreter as the commands' PATH does, in
// their isolation: what command -v prints (a pyenv shim, a virtual
// environment's bin) and the executable it really is.
func resolveInterpreter(ctx context.Context, iso driver.Workspace, opts Options, program string) preflight.Resolved {
	q, err := syntax.Quote(program, syntax.LangBash)
	if err != nil {
		return preflight.Resolved{}
	}
	script := "p=$(command -v -- " + q + ") || exit 1; printf 'path=%s\\n' \"$p\"; " +
		`"$p" -c 'import sys; print("real=" + sys.executable); print("venv=" + str(sys.prefix != getattr(sys, "base_prefix", sys.prefix)))' 2>/dev/null; true`
	code, out := runIn(ctx, iso, opts, script, 30*time.Second, "ZERG_CHECK=1")
	var r preflight.Resolved
	if code != 0 {
		return r
	}
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch k {
		case "path":
			r.Path = v
		case "real":
			r.Real = v
		case "venv":
			r.Venv = v == "True"
		}
	}
	return r
}

type checkCommand struct {
	CheckResult
	timeout time.Duration
}

// lanes makes n private clones of commit (name-1, name-2, …) in the
// driver's isolation, each its own worker user in sandbox mode, so
// commands run side by side the way a worker's verification does; close
// removes them all. caches are the toolchains' caches the commands get.
func lanes(ctx context.Context, opts Options, paths Paths, worker claude.Spec, commit, name string, n int) (wss []driver.Workspace, caches []toolchain.Cache, closeAll func(), err error) {
	drv, caches, err := newDriver(ctx, opts, paths, nil, worker, n, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	closeAll = func() {
		for _, ws := range wss {
			ws.Close()
			_ = ws.Remove(context.Background())
		}
	}
	for i := 1; i <= n; i++ {
		ws, err := drv.Isolate(ctx, commit, fmt.Sprintf("%s-%d", name, i))
		if err != nil {
			closeAll()
			return nil, nil, nil, &Error{Kind: Setup, Feature: opts.Feature, Err: err}
		}
		wss = append(wss, ws)
	}
	return wss, caches, closeAll, nil
}

// runIn runs command in ws as zerg check and review do: a fresh HOME, the
// allowlisted environment and env.
func runIn(ctx context.Context, ws driver.Workspace, opts Options, command string, timeout time.Duration, env ...string) (int, string) {
	return ws.Exec(ctx, driver.Command{Command: command, Timeout: timeout, Pass: opts.Config.Env.Pass, Env: env, Home: "home"})
}

// GateResult is one gate run by RunGates.
type GateResult struct {
	Gate   config.Gate
	Exit   int
	Output string
}

// RunGates runs the config's gates, one after the other, on commit in the
// isolation the run's own gates get (a sandbox with the toolchains in
// sandbox mode, else the worker user): zerg review uses it.
func RunGates(ctx context.Context, opts Options, worker claude.Spec, commit string, progress func(string)) ([]GateResult, error) {
	if len(opts.Config.Gates) == 0 {
		return nil, nil
	}
	paths, err := PathsFor(ctx, opts.Root, opts.Feature)
	if err != nil {
		return nil, errorf(Setup, opts.Feature, "%v", err)
	}
	isos, _, closeAll, err := lanes(ctx, opts, paths, worker, commit, "_review", 1)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	iso := isos[0]
	var out []GateResult
	for _, g := range opts.Config.Gates {
		if progress != nil {
			progress("gate " + g.Name)
		}
		timeout := g.EffectiveTimeout()
		code, text := runIn(ctx, iso, opts, g.Command, timeout, "ZERG_GATE="+g.Name)
		out = append(out, GateResult{Gate: g, Exit: code, Output: text})
	}
	return out, nil
}

// checkCommands lists each distinct verification command (with the tasks
// that share it) in graph order, then each distinct gate.
func checkCommands(g *spec.Graph, cfg config.Config) []checkCommand {
	var out []checkCommand
	index := map[string]int{}
	add := func(what, name, command string, timeout time.Duration) {
		command = strings.TrimSpace(command)
		if command == "" {
			return
		}
		key := what + "\x00" + command
		if i, ok := index[key]; ok {
			out[i].Names = append(out[i].Names, name)
			if timeout > out[i].timeout {
				out[i].timeout = timeout
			}
			return
		}
		index[key] = len(out)
		out = append(out, checkCommand{CheckResult: CheckResult{What: what, Names: []string{name}, Command: command}, timeout: timeout})
	}
	for _, t := range g.Tasks {
		if t.Verification == nil {
			continue
		}
		add("verification", t.ID, t.Verification.Command, t.Verification.Timeout(cfg.Verification.Timeout))
	}
	for _, gt := range cfg.Gates {
		timeout := gt.EffectiveTimeout()
		add("gate", gt.Name, gt.Command, timeout)
	}
	return out
}

func plannedPaths(g *spec.Graph) []string {
	var out []string
	for _, t := range g.Tasks {
		out = append(out, t.Files.Create...)
		out = append(out, t.Files.Modify...)
	}
	return out
}

// goModulePath is the module path declared in a go.mod, or "".
func goModulePath(file string) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
