package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// timed is one command run by hand.
type timed struct {
	What    string  `json:"what"`
	Command string  `json:"command"`
	Seconds float64 `json:"seconds"`
	Exit    int     `json:"exit"`
	// Cached: go test answered from its test cache for at least one package.
	Cached bool   `json:"cached,omitempty"`
	Output string `json:"output,omitempty"` // tail, when it failed
}

// attemptFig is one attempt of the rush, from its log.
type attemptFig struct {
	Task          string  `json:"task"`
	Attempt       int     `json:"attempt"`
	Class         string  `json:"class"`
	Reason        string  `json:"reason,omitempty"`
	Detail        string  `json:"detail,omitempty"`
	Seconds       float64 `json:"seconds"`
	WorkerSeconds float64 `json:"worker_seconds"`
	// VerifySeconds: from attempt_verifying to attempt_finished: the
	// verification command, the ownership check and zerg's commit.
	VerifySeconds float64 `json:"verify_seconds"`
	// The attempt's phases as zerg recorded them: the workspace, the
	// launch (the CLI and what the driver does around it), the
	// verification command in its isolation, the snapshot, checks and
	// commit.
	PrepareSeconds float64 `json:"prepare_seconds"`
	LaunchSeconds  float64 `json:"launch_seconds"`
	VerifyCmdSecs  float64 `json:"verify_command_seconds"`
	CommitSeconds  float64 `json:"commit_seconds"`
	// OwnSeconds is zerg's own time in the attempt: the phases less the
	// CLI's own time and less the verification command as it ran by hand
	// (what the isolation adds to it stays zerg's).
	OwnSeconds float64 `json:"own_seconds"`
	// VerifyOverSeconds is what the verification took beyond the same
	// command by hand: the isolation it runs in.
	VerifyOverSeconds float64 `json:"verify_over_seconds"`
}

// ownSeconds fills each attempt's OwnSeconds from its phases and the task's
// verification as it ran by hand, and returns their mean over the attempts
// that recorded phases (0 when none did).
func ownSeconds(attempts []attemptFig, byHand []timed) float64 {
	verifyByHand := map[string]float64{}
	for _, f := range byHand {
		if task, ok := strings.CutSuffix(f.What, " verification"); ok {
			verifyByHand[task] = f.Seconds
		}
	}
	sum, n := 0.0, 0
	for i := range attempts {
		a := &attempts[i]
		if a.LaunchSeconds == 0 {
			continue
		}
		a.VerifyOverSeconds = max(a.VerifyCmdSecs-verifyByHand[a.Task], 0)
		a.OwnSeconds = a.PrepareSeconds + max(a.LaunchSeconds-a.WorkerSeconds, 0) + a.VerifyOverSeconds + a.CommitSeconds
		sum += a.OwnSeconds
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// levelFig: a level's merge and gates, from its last attempt to its verdict.
type levelFig struct {
	Level   int     `json:"level"`
	Merged  bool    `json:"merged"`
	Seconds float64 `json:"merge_and_gates_seconds"`
	Reason  string  `json:"reason,omitempty"`
}

type gateFig struct {
	Level  int    `json:"level"`
	Name   string `json:"name"`
	Exit   int    `json:"exit"`
	Output string `json:"output,omitempty"` // tail, when it failed
}

type taskFig struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// rushFig is what one `zerg rush` did.
type rushFig struct {
	// Projected is the cost projection the run recorded (run_projected);
	// ActualUSD the sum of its attempts' cost (scripted usage priced by
	// the CLI's table).
	Projected *runstate.Projection `json:"projected,omitempty"`
	ActualUSD float64              `json:"actual_usd"`
	Command   string               `json:"command"`
	Seconds   float64              `json:"seconds"`
	Exit      int                  `json:"exit"`
	State     string               `json:"state"`
	Reason    string               `json:"reason,omitempty"`
	// Delivered: the run says so and every task is merged.
	Delivered bool `json:"delivered"`
	Rehearsal bool `json:"rehearsal"`
	Workers   int  `json:"workers"`
	// ModelRequests: main requests the scripted model answered, by task.
	ModelRequests map[string]int `json:"model_requests"`
	// WorkerNetwork: the network interfaces a worker saw ("lo": none but
	// loopback); empty when the probe did not run.
	WorkerNetwork string `json:"worker_network"`
	// StartupSeconds: from starting zerg to its run_started event (the
	// config, the check of the environment, the sandbox's setup);
	// FinishSeconds: from the last level's verdict to the process's exit.
	StartupSeconds float64      `json:"startup_seconds"`
	FinishSeconds  float64      `json:"finish_seconds"`
	Attempts       []attemptFig `json:"attempts"`
	Levels         []levelFig   `json:"levels"`
	Gates          []gateFig    `json:"gates"`
	Tasks          []taskFig    `json:"tasks"`
	Stderr         string       `json:"stderr,omitempty"` // tail, when not delivered
}

// suiteFig: the project's full suite on the integration branch.
type suiteFig struct {
	Command string   `json:"command"`
	Passed  bool     `json:"passed"`
	Seconds float64  `json:"seconds"`
	Missing []string `json:"missing_files,omitempty"` // feature files not on the branch
	Output  string   `json:"output,omitempty"`        // tail, when it failed
}

// result is the benchmark's report.
type result struct {
	Lang         string  `json:"lang"`
	Project      string  `json:"project"`
	Source       string  `json:"source"`
	Feature      string  `json:"feature"`
	Tasks        int     `json:"tasks"`
	Levels       int     `json:"levels"`
	FetchSeconds float64 `json:"fetch_seconds"`
	// CheckFirstSeconds is zerg check run before the rush (-check-first),
	// outside the rush's time.
	CheckFirstSeconds float64  `json:"check_first_seconds,omitempty"`
	ByHand            []timed  `json:"by_hand"`
	ByHandSeconds     float64  `json:"by_hand_seconds"`
	Rush              rushFig  `json:"rush"`
	Suite             suiteFig `json:"suite"`
	Ratio             float64  `json:"ratio"`
	// ChecksSeconds and ChecksRatio: the narrower baseline, only the
	// verifications and gates by hand, not the tests run while writing.
	ChecksSeconds float64 `json:"checks_seconds"`
	ChecksRatio   float64 `json:"checks_ratio"`
	// OwnSecondsMean is zerg's own time per attempt (attemptFig.OwnSeconds),
	// averaged over the attempts that recorded their phases.
	OwnSecondsMean float64 `json:"own_seconds_per_attempt"`
	Dir            string  `json:"dir,omitempty"` // kept with -keep
	// Zerg: the commit zerg was built from, "+ uncommitted changes" when the
	// working tree had some; empty for a binary given with -zerg.
	Zerg string `json:"zerg,omitempty"`
}

// ok: the promise without its timing.
func (r *result) ok() bool { return r.Rush.Delivered && r.Suite.Passed && len(r.Suite.Missing) == 0 }

// tools: the zerg binary and the pinned CLI the rush uses.
type tools struct{ zerg, claude, built string }

// findTools builds zerg into dir (unless zergBin is given) and finds the
// pinned Claude Code CLI. errNoClaude: the CLI is not installed.
func findTools(ctx context.Context, dir, zergBin string) (tools, error) {
	root, err := repoRoot()
	if err != nil {
		return tools{}, err
	}
	t := tools{zerg: zergBin, claude: os.Getenv("ZERG_CLAUDE")}
	if t.claude == "" {
		t.claude = filepath.Join(root, "tools", "claude", "node_modules", ".bin", "claude")
	}
	if _, err := os.Stat(t.claude); err != nil {
		return t, fmt.Errorf("%w at %s: run make claude (or set ZERG_CLAUDE)", errNoClaude, t.claude)
	}
	if t.zerg == "" {
		// Workers run the zerg binary (their hook): its directory must be
		// reachable by the worker users when zerg runs as root.
		bin := filepath.Join(dir, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			return t, err
		}
		t.zerg = filepath.Join(bin, "zerg")
		if _, err := runCmd(ctx, root, os.Environ(), "go", "build", "-o", t.zerg, "./cmd/zerg"); err != nil {
			return t, fmt.Errorf("build zerg: %w", err)
		}
		if head, err := git(ctx, root, "rev-parse", "--short=12", "HEAD"); err == nil {
			t.built = "built from " + head
			// Changes of the binary's sources; tests do not change it.
			st, err := git(ctx, root, "status", "--porcelain", "--", "cmd", "internal", "go.mod", "go.sum")
			for _, l := range strings.Split(st, "\n") {
				if err == nil && l != "" && !strings.HasSuffix(l, "_test.go") {
					t.built += " + uncommitted changes"
					break
				}
			}
		}
	}
	return t, nil
}

var errNoClaude = errors.New("the pinned Claude Code CLI is missing")

func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := fsx.ModuleRoot(wd)
	if err != nil {
		return "", fmt.Errorf("run it inside the zerg repository: %w", err)
	}
	return root, nil
}

// workDir makes the benchmark's directory. Worker users (zerg as root) must
// pass through it to their workspaces and to the zerg binary.
func workDir() (string, error) {
	dir, err := os.MkdirTemp("", "zerg-realproject-")
	if err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o711)
}

// prepare fetches the project into dir/repo, fills the user's caches with its
// dependencies, and commits it with the feature's graph, scenario and config.
func prepare(ctx context.Context, p *project, dir string) (string, time.Duration, error) {
	repo := filepath.Join(dir, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return "", 0, err
	}
	start := time.Now()
	if err := p.fetch(ctx, repo); err != nil {
		return "", 0, fmt.Errorf("fetch %s from %s: %w", p.name, p.source, err)
	}
	if p.deps != nil {
		if err := p.deps(ctx, repo); err != nil {
			return "", 0, fmt.Errorf("dependencies of %s: %w", p.name, err)
		}
	}
	fetched := time.Since(start)
	steps := [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"commit", "-q", "-m", p.name + " as published"},
	}
	for _, s := range steps {
		if _, err := git(ctx, repo, s...); err != nil {
			return "", 0, err
		}
	}
	if err := p.writeFeature(repo); err != nil {
		return "", 0, err
	}
	for _, s := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "zerg: the " + p.feature + " feature's graph, scenario and config"}} {
		if _, err := git(ctx, repo, s...); err != nil {
			return "", 0, err
		}
	}
	return repo, fetched, nil
}

// warmUp makes the checkout a person works in, co, and warms it and the
// user's caches the way working on the project does: the gates run once on
// the project as published.
func warmUp(ctx context.Context, p *project, repo, co string) error {
	if _, err := git(ctx, filepath.Dir(co), "clone", "-q", repo, co); err != nil {
		return err
	}
	for _, g := range p.gates {
		if out, _, err := sh(ctx, co, g.command, environ("GOWORK=off")); err != nil {
			return fmt.Errorf("warm-up: gate %s (%s) fails on %s as published: %v\n%s", g.name, g.command, p.name, err, tail(out, 30))
		}
	}
	return nil
}

// byHand times the same commands as the rush, run by a person in the warm
// checkout co, one after the other, with the user's own environment and
// caches: for each task, what the scripted model runs while it writes the
// task (its tests on the first draft, which may fail, then the task's
// verification on the fixed code), and then each gate once on the finished
// code. Writing files is not timed (the scripted model writes them at once
// too); the model's network probe is not work and is left out. What zerg
// runs on top (the check of the environment, its own verification after the
// worker's, the gates after every level) is zerg's cost.
func byHand(ctx context.Context, p *project, co string) ([]timed, error) {
	env := environ("GOWORK=off")
	var figs []timed
	record := func(what, command string, mayFail bool) error {
		out, d, err := sh(ctx, co, command, env)
		f := timed{What: what, Command: command, Seconds: d.Seconds(), Cached: strings.Contains(out, "(cached)")}
		if err != nil {
			f.Exit, f.Output = exitCode(err), tail(out, 30)
		}
		figs = append(figs, f)
		if err != nil && !mayFail {
			return fmt.Errorf("by hand: %s (%s): %v\n%s", what, command, err, tail(out, 30))
		}
		return nil
	}
	for _, t := range p.sortedTasks() {
		if err := p.applyDraft(t, co); err != nil {
			return figs, err
		}
		if err := record(t.id+" tests of the draft", t.try, true); err != nil {
			return figs, err
		}
		if err := p.applyTask(t, co); err != nil {
			return figs, err
		}
		if err := record(t.id+" verification", t.verify, false); err != nil {
			return figs, err
		}
	}
	for _, g := range p.gates {
		if err := record("gate "+g.name, g.command, false); err != nil {
			return figs, err
		}
	}
	return figs, nil
}

// isCheck: a by-hand figure of a verification or a gate, not of the work
// in between (the narrower baseline: only the checks a run must pass).
func isCheck(f timed) bool { return !strings.HasSuffix(f.What, " tests of the draft") }

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// check runs `zerg check FEATURE` in repo with the rush's environment.
func check(ctx context.Context, p *project, t tools, repo, dir string) (float64, error) {
	cmd := exec.CommandContext(ctx, t.zerg, "check", p.feature)
	cmd.Dir = repo
	cmd.Env = environ("ZERG_CLAUDE="+t.claude, "ZERG_WORKSPACES="+filepath.Join(dir, "ws"), "NO_COLOR=1")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("zerg check %s: %v\n%s", p.feature, err, tail(string(out), 20))
	}
	return time.Since(start).Seconds(), nil
}

// rush runs `zerg rush FEATURE --rehearse` in repo: the scripted model, the
// real CLI, the default (sandbox) mode, and the user's environment.
func rush(ctx context.Context, p *project, t tools, repo, dir string, flags ...string) (rushFig, error) {
	var fig rushFig
	args := append([]string{"rush", p.feature, "--rehearse"}, flags...)
	fig.Command = "zerg " + strings.Join(args, " ")
	cmd := exec.CommandContext(ctx, t.zerg, append(args, "--json")...)
	cmd.Dir = repo
	cmd.Env = environ("ZERG_CLAUDE="+t.claude, "ZERG_WORKSPACES="+filepath.Join(dir, "ws"), "NO_COLOR=1")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	start := time.Now()
	err := cmd.Run()
	fig.Seconds = time.Since(start).Seconds()
	if err != nil {
		fig.Exit = exitCode(err)
		if fig.Exit != 1 { // 1: not delivered, with a report
			return fig, fmt.Errorf("zerg rush %s: %v\n%s%s", p.feature, err, tail(so.String(), 20), tail(se.String(), 40))
		}
	}
	var rep struct {
		State     string `json:"state"`
		Reason    string `json:"reason"`
		Rehearsal bool   `json:"rehearsal"`
		Workers   int    `json:"workers"`
		Tasks     []struct {
			ID, Status, Reason, Detail string
		} `json:"tasks"`
		Gates []struct {
			Level  int    `json:"level"`
			Name   string `json:"name"`
			Exit   int    `json:"exit"`
			Output string `json:"output"`
		} `json:"gates"`
	}
	if err := json.Unmarshal(so.Bytes(), &rep); err != nil {
		return fig, fmt.Errorf("zerg rush --json: %v\n%s\n%s", err, tail(so.String(), 10), tail(se.String(), 20))
	}
	fig.State, fig.Reason, fig.Rehearsal, fig.Workers = rep.State, rep.Reason, rep.Rehearsal, rep.Workers
	merged := 0
	for _, t := range rep.Tasks {
		fig.Tasks = append(fig.Tasks, taskFig{ID: t.ID, Status: t.Status, Reason: t.Reason, Detail: t.Detail})
		if t.Status == "merged" {
			merged++
		}
	}
	fig.Delivered = rep.State == "delivered" && merged == len(p.tasks) && len(rep.Tasks) == len(p.tasks)
	for _, g := range rep.Gates {
		gf := gateFig{Level: g.Level, Name: g.Name, Exit: g.Exit}
		if g.Exit != 0 {
			gf.Output = tail(g.Output, 20)
		}
		fig.Gates = append(fig.Gates, gf)
	}
	if !fig.Delivered {
		fig.Stderr = tail(se.String(), 40)
	}
	runs := filepath.Join(repo, ".zerg", "runs", p.feature)
	if err := fig.fromLog(filepath.Join(runs, "events.jsonl"), start, start.Add(time.Duration(fig.Seconds*float64(time.Second)))); err != nil {
		return fig, err
	}
	var err2 error
	if fig.ModelRequests, err2 = modelRequests(filepath.Join(runs, "mockapi.jsonl")); err2 != nil {
		return fig, err2
	}
	fig.WorkerNetwork = probeResult(filepath.Join(runs, "attempts"))
	return fig, nil
}

// fromLog reads the attempts' and levels' times from the run's log.
func (f *rushFig) fromLog(file string, start, end time.Time) error {
	evs, err := eventlog.Read(file)
	if err != nil {
		return fmt.Errorf("the run's log: %w", err)
	}
	type key struct {
		task string
		n    int
	}
	started, verifying := map[key]time.Time{}, map[key]time.Time{}
	var lastFinish, lastVerdict time.Time
	for _, e := range evs {
		k := key{e.Task, e.Attempt}
		switch e.Type {
		case runstate.EvRunStarted:
			f.StartupSeconds = e.Time.Sub(start).Seconds()
		case runstate.EvRunProjected:
			var p runstate.Projection
			if err := e.Decode(&p); err != nil {
				return err
			}
			f.Projected = &p
		case runstate.EvAttemptStarted:
			started[k] = e.Time
		case runstate.EvAttemptVerifying:
			verifying[k] = e.Time
		case runstate.EvAttemptFinished:
			var d runstate.AttemptFinished
			if err := e.Decode(&d); err != nil {
				return err
			}
			f.ActualUSD += d.CostUSD
			a := attemptFig{Task: e.Task, Attempt: e.Attempt, Class: string(d.Class), Reason: d.Reason,
				Seconds: float64(d.DurationMS) / 1000, WorkerSeconds: float64(d.WorkerMS) / 1000}
			if d.Class != outcome.Success {
				a.Detail = tail(d.Detail, 15)
			}
			if v, ok := verifying[k]; ok {
				a.VerifySeconds = e.Time.Sub(v).Seconds()
			}
			if p := d.Phases; p != nil {
				a.PrepareSeconds, a.LaunchSeconds = float64(p.Prepare)/1000, float64(p.Launch)/1000
				a.VerifyCmdSecs, a.CommitSeconds = float64(p.Verify)/1000, float64(p.Commit)/1000
			}
			f.Attempts = append(f.Attempts, a)
			lastFinish = e.Time
		case runstate.EvLevelMerged, runstate.EvLevelFailed:
			l := levelFig{Merged: e.Type == runstate.EvLevelMerged}
			if l.Merged {
				var d runstate.LevelMerged
				if err := e.Decode(&d); err != nil {
					return err
				}
				l.Level = d.Level
			} else {
				var d runstate.LevelFailed
				if err := e.Decode(&d); err != nil {
					return err
				}
				l.Level, l.Reason = d.Level, d.Reason
			}
			if !lastFinish.IsZero() {
				l.Seconds = e.Time.Sub(lastFinish).Seconds()
			}
			f.Levels = append(f.Levels, l)
			lastVerdict = e.Time
		}
	}
	if !lastVerdict.IsZero() {
		f.FinishSeconds = end.Sub(lastVerdict).Seconds()
	}
	return nil
}

// modelRequests counts the scripted model's main requests by task, from its
// request log: the proof that the run talked to the scripted model.
func modelRequests(file string) (map[string]int, error) {
	fh, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("the scripted model's request log: %w", err)
	}
	defer fh.Close()
	n := map[string]int{}
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r struct{ Kind, Task string }
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Kind == "main" {
			n[r.Task]++
		}
	}
	return n, sc.Err()
}

var probeRE = regexp.MustCompile(`net-devices:([A-Za-z0-9@._,-]+)`)

// probeResult: what the worker's network probe printed, from the attempts'
// stream-json records (the Bash tool's result); "" when none ran.
func probeResult(attempts string) string {
	files, _ := filepath.Glob(filepath.Join(attempts, "*", "*", "stream.jsonl"))
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if m := probeRE.FindSubmatch(b); m != nil {
			return string(m[1])
		}
	}
	return ""
}

// checkIntegration runs the project's full suite in a checkout of the
// integration branch, and lists the feature's files the branch lacks.
func checkIntegration(ctx context.Context, p *project, repo, dir string) (suiteFig, error) {
	fig := suiteFig{Command: p.suite}
	branch := run.IntegrationBranch(p.feature)
	files, err := git(ctx, repo, "ls-tree", "-r", "--name-only", branch)
	if err != nil {
		return fig, err
	}
	have := map[string]bool{}
	for _, f := range strings.Split(files, "\n") {
		have[f] = true
	}
	for _, t := range p.sortedTasks() {
		for _, f := range t.create {
			if !have[f] {
				fig.Missing = append(fig.Missing, f)
			}
		}
	}
	co := filepath.Join(dir, "check")
	if _, err := git(ctx, repo, "worktree", "add", "-q", "--detach", co, branch); err != nil {
		return fig, err
	}
	// Best effort: the worktree is under the run's scratch directory.
	defer func() { _, _ = git(context.Background(), repo, "worktree", "remove", "--force", co) }()
	out, d, err := sh(ctx, co, p.suite, environ("GOWORK=off"))
	fig.Seconds, fig.Passed = d.Seconds(), err == nil
	if err != nil {
		fig.Output = tail(out, 40)
	}
	return fig, nil
}
