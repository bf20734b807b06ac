package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

// Options configure one `zerg rush`.
type Options struct {
	Root      string // repository top level
	Feature   string
	GraphFile string // default .zerg/specs/<feature>/task-graph.json
	Config    config.Config
	Workers   int // 0: from config
	Resume    bool
	Rehearsal bool
	// Worker is the launch template: binary, API, retries, hook binary, tools.
	Worker claude.Spec
	// Progress receives one line per notable step (nil: discarded).
	Progress io.Writer
}

// Errors the CLI maps to exit codes.
var (
	ErrBadInput      = errors.New("bad input")          // exit 2
	ErrNotDelivered  = errors.New("run not delivered")  // exit 1
	ErrInterrupted   = errors.New("run interrupted")    // exit 3
	ErrFatal         = errors.New("fatal worker error") // exit 1, run stopped
	ErrNothingToDo   = errors.New("nothing to resume")
	ErrAlreadyExists = errors.New("a run of this feature exists")
)

// Coordinator runs one feature. It is the only writer of the run's log.
type Coordinator struct {
	opts   Options
	paths  Paths
	repo   *gitx.Repo
	graph  *spec.Graph
	log    *eventlog.Log
	mu     sync.Mutex // guards state and progress output
	state  *State
	out    io.Writer
	cancel context.CancelCauseFunc
	gov    *Governor
	// Security: one secret scanner for every attempt, the audit log, and the
	// verified rules cache ("" when rules are off or not fetched).
	scanner  *security.Scanner
	audit    *security.Audit
	rulesDir string
	// live holds each running attempt's progress for the heartbeat file.
	live map[string]liveAttempt
}

// liveAttempt is a running attempt's heartbeat.
type liveAttempt struct {
	Attempt   int            `json:"attempt"`
	PID       int            `json:"pid,omitempty"`
	Started   time.Time      `json:"started"`
	LastEvent time.Time      `json:"last_event,omitempty"`
	Turns     int            `json:"turns"`
	ToolCalls map[string]int `json:"tool_calls,omitempty"`
	Tokens    int64          `json:"tokens"`
}

// Run executes (or resumes) the run and returns its report. The returned
// error wraps ErrNotDelivered, ErrInterrupted, ErrFatal or ErrBadInput.
func Run(ctx context.Context, opts Options) (*Report, error) {
	c, err := open(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer c.close()
	return c.run(ctx)
}

func open(ctx context.Context, opts Options) (*Coordinator, error) {
	paths, err := PathsFor(ctx, opts.Root, opts.Feature)
	if err != nil {
		return nil, err
	}
	if opts.GraphFile == "" {
		opts.GraphFile = paths.Graph
	}
	paths.Graph = opts.GraphFile
	r, err := spec.Load(opts.GraphFile, spec.Options{RepoRoot: opts.Root})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	if !r.Valid() {
		return nil, fmt.Errorf("%w: %s: invalid task graph: %v", ErrBadInput, opts.GraphFile, strings.ReplaceAll(r.Err().Error(), "\n", "; "))
	}
	if r.Graph.Feature != opts.Feature {
		return nil, fmt.Errorf("%w: %s is the graph of feature %q, not %q", ErrBadInput, opts.GraphFile, r.Graph.Feature, opts.Feature)
	}
	if opts.Workers <= 0 {
		opts.Workers = opts.Config.Workers
	}
	if opts.Workers <= 0 {
		opts.Workers = 1
	}
	out := opts.Progress
	if out == nil {
		out = io.Discard
	}
	repo := &gitx.Repo{Runner: gitx.New(opts.Root)}
	c := &Coordinator{opts: opts, paths: paths, repo: repo, graph: r.Graph, out: out, live: map[string]liveAttempt{}}

	if _, statErr := os.Stat(paths.Events); statErr == nil {
		existing, err := eventlog.Read(paths.Events)
		if err != nil {
			return nil, fmt.Errorf("%w: %v; the log is damaged, inspect it or run zerg cleanup --feature %s --logs", ErrBadInput, err, opts.Feature)
		}
		if len(existing) > 0 && !opts.Resume {
			return nil, fmt.Errorf("%w: %s has a run (%s); continue it with zerg rush %s --resume, or remove it with zerg cleanup %s --all",
				ErrAlreadyExists, opts.Feature, paths.Events, opts.Feature, opts.Feature)
		}
	} else if opts.Resume {
		return nil, fmt.Errorf("%w: %w: no run of %s to resume (%s does not exist)", ErrBadInput, ErrNothingToDo, opts.Feature, paths.Events)
	}
	if !opts.Resume {
		if ok, err := repo.BranchExists(ctx, IntegrationBranch(opts.Feature)); err != nil {
			return nil, err
		} else if ok {
			return nil, fmt.Errorf("%w: branch %s already exists; remove it (zerg cleanup %s --all) or pick another feature name",
				ErrAlreadyExists, IntegrationBranch(opts.Feature), opts.Feature)
		}
	}
	if err := c.openSecurity(); err != nil {
		return nil, err
	}
	log, events, err := eventlog.Open(paths.Events)
	if err != nil {
		if errors.Is(err, eventlog.ErrLocked) {
			return nil, fmt.Errorf("%w: another zerg rush is running %s; watch it with zerg status, stop it with zerg stop", ErrBadInput, opts.Feature)
		}
		return nil, err
	}
	c.log = log
	c.state = Replay(events)
	return c, nil
}

func (c *Coordinator) close() {
	os.Remove(c.paths.Coordinator)
	c.log.Close()
	if c.audit != nil {
		c.audit.Close()
	}
}

func (c *Coordinator) printf(format string, a ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.out, format+"\n", a...)
}

// emit appends an event and folds it into the state under one lock, so the
// state never runs ahead of the log.
func (c *Coordinator) emit(typ, task string, attemptN int, data any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, err := c.log.AppendData(typ, task, attemptN, data)
	if err != nil {
		return fmt.Errorf("write event log: %w", err)
	}
	c.state.Apply(e)
	return nil
}

func (c *Coordinator) run(ctx context.Context) (*Report, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c.cancel = cancel
	if err := c.writeCoordinatorFile(); err != nil {
		return nil, err
	}
	c.gov = NewGovernor(c.opts.Config, c.opts.Workers, func(typ string, data any) { _ = c.emit(typ, "", 0, data) })
	stopLive := c.startHeartbeats(ctx)
	defer stopLive()
	start := time.Now()
	if c.state.Started == nil {
		if err := c.begin(ctx); err != nil {
			return nil, err
		}
	} else {
		if err := c.reconcile(ctx); err != nil {
			return nil, err
		}
	}
	integration := IntegrationBranch(c.opts.Feature)
	levels := c.levels()
	c.printf("zerg: %s: %d tasks in %d levels, %d workers%s → %s", c.opts.Feature, len(c.graph.Tasks), len(levels),
		c.opts.Workers, map[bool]string{true: " (rehearsal: scripted model)", false: ""}[c.opts.Rehearsal], integration)

	var runErr error
	for _, level := range levels {
		if _, done := c.state.Merged[level]; done {
			continue
		}
		if err := c.runLevel(ctx, level); err != nil {
			runErr = err
			break
		}
	}
	return c.finish(ctx, runErr, time.Since(start))
}

// begin starts a new run: the integration branch at the user's HEAD.
func (c *Coordinator) begin(ctx context.Context) error {
	base, err := c.repo.RevParse(ctx, "HEAD")
	if err != nil {
		return fmt.Errorf("%w: the repository has no commit yet; commit something first (%v)", ErrBadInput, err)
	}
	ref, _ := c.repo.Run(ctx, "symbolic-ref", "--quiet", "--short", "HEAD")
	sum := sha256.Sum256(c.graph.Raw)
	if err := c.emit(EvRunStarted, "", 0, RunStarted{
		Feature: c.opts.Feature, Base: base, BaseRef: strings.TrimSpace(ref), Integration: IntegrationBranch(c.opts.Feature),
		GraphSHA256: hex.EncodeToString(sum[:]), Workers: c.opts.Workers, Rehearsal: c.opts.Rehearsal,
	}); err != nil {
		return err
	}
	return c.repo.SetBranch(ctx, IntegrationBranch(c.opts.Feature), base, "")
}

// reconcile makes git and the process table agree with a replayed log after
// a crash: recorded worker processes are reaped (only those), open attempts
// are closed as infra failures with their work preserved, and the
// integration branch is moved to the last merged head when the crash came
// between the level_merged event and the branch update.
func (c *Coordinator) reconcile(ctx context.Context) error {
	st := c.state
	if st.Finished != nil && st.Finished.Delivered {
		return fmt.Errorf("%w: %s was already delivered on %s; nothing to resume", ErrBadInput, c.opts.Feature, IntegrationBranch(c.opts.Feature))
	}
	if err := c.emit(EvRunResumed, "", 0, map[string]any{"workers": c.opts.Workers}); err != nil {
		return err
	}
	ids := slices.Clone(st.Order)
	for _, id := range ids {
		t := c.state.Tasks[id]
		if t.Open == nil {
			continue
		}
		o := *t.Open
		if len(o.PIDs) > 0 || o.Marker != "" {
			if killed := claude.KillRecorded(o.Marker, o.PIDs, 2*time.Second); len(killed) > 0 {
				c.printf("  %s: reaped %d leftover worker process(es) of attempt %d", id, len(killed), o.Number)
			}
		}
		commit := c.preserve(ctx, o, id)
		if err := c.emit(EvAttemptFinished, id, o.Number, AttemptFinished{
			Class: "infra", Reason: "abandoned", Detail: "the coordinator stopped during this attempt", Commit: commit,
		}); err != nil {
			return err
		}
	}
	// The branch must be at the last merged head (or the base).
	want := c.state.Head
	integration := IntegrationBranch(c.opts.Feature)
	have, err := c.repo.RevParse(ctx, "refs/heads/"+integration)
	if err != nil {
		if err := c.repo.SetBranch(ctx, integration, want, ""); err != nil {
			return err
		}
	} else if have != want {
		// Only a forward move from the previous merged head is safe to repair.
		if anc, _ := c.repo.Run(ctx, "merge-base", "--is-ancestor", have, want); anc == "" {
			if err := c.repo.SetBranch(ctx, integration, want, have); err != nil {
				return fmt.Errorf("integration branch %s is at %s, the log says %s: %w", integration, short(have), short(want), err)
			}
		}
	}
	c.printf("zerg: resuming %s: %d level(s) already merged, integration at %s", c.opts.Feature, len(c.state.Merged), short(c.state.Head))
	return nil
}

// preserve commits whatever an abandoned attempt left in its workspace to its
// own branch, then removes the workspace; dirty work is never deleted.
func (c *Coordinator) preserve(ctx context.Context, o OpenAttempt, task string) string {
	if _, err := os.Stat(o.Workspace); err != nil {
		return ""
	}
	// A workspace handed to the worker user is trusted only by exact path.
	c.repo.TrustWorkspace(o.Workspace)
	defer c.repo.UntrustWorkspace(o.Workspace)
	w := c.repo.In(o.Workspace)
	if _, err := w.ChangedFiles(ctx, "HEAD"); err != nil {
		return ""
	}
	commit, err := w.Commit(ctx, fmt.Sprintf("%s: attempt %d abandoned", task, o.Number),
		map[string]string{"Task-Id": task, "Zerg-Status": "abandoned", "Zerg-Attempt": fmt.Sprint(o.Number)})
	if err != nil {
		return ""
	}
	_ = c.repo.RemoveWorktree(ctx, o.Workspace)
	return commit
}

func (c *Coordinator) levels() []int {
	seen := map[int]bool{}
	var ls []int
	for _, t := range c.graph.Tasks {
		if !seen[t.Level] {
			seen[t.Level] = true
			ls = append(ls, t.Level)
		}
	}
	slices.Sort(ls)
	return ls
}

func (c *Coordinator) tasksOf(level int) []*spec.Task {
	var ts []*spec.Task
	for _, t := range c.graph.Tasks {
		if t.Level == level {
			ts = append(ts, t)
		}
	}
	slices.SortFunc(ts, func(a, b *spec.Task) int { return strings.Compare(a.ID, b.ID) })
	return ts
}

// runLevel runs every task of the level on the worker pool, then merges the
// level. No partial merges: any failure leaves the integration branch at the
// previous level.
func (c *Coordinator) runLevel(ctx context.Context, level int) error {
	base := c.state.Head
	tasks := c.tasksOf(level)
	c.printf("level %d: %d task(s) from %s", level, len(tasks), short(base))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.opts.Workers)
	var failed []string
	var fmu sync.Mutex
	for _, t := range tasks {
		c.mu.Lock()
		ts := c.state.Tasks[t.ID]
		done := ts != nil && ts.Status == StatusCommitted && ts.CommitBase == base && ts.Commit != ""
		c.mu.Unlock()
		if done {
			c.printf("  %s: already committed (%s), kept", t.ID, short(ts.Commit))
			continue
		}
		if ts != nil && ts.Status == StatusFailed {
			// A task that failed for good runs again only after zerg retry.
			c.printf("  %s: failed earlier (%s); zerg retry %s runs it again", t.ID, ts.Reason, t.ID)
			failed = append(failed, t.ID)
			continue
		}
		g.Go(func() error {
			ok, err := c.runTask(gctx, t, level, base)
			if err != nil {
				return err
			}
			if !ok {
				fmu.Lock()
				failed = append(failed, t.ID)
				fmu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if len(failed) > 0 {
		slices.Sort(failed)
		_ = c.emit(EvLevelFailed, "", 0, LevelFailed{Level: level, Reason: "task(s) failed", Tasks: failed})
		return fmt.Errorf("%w: level %d: %s failed", ErrNotDelivered, level, strings.Join(failed, ", "))
	}
	return c.mergeLevel(ctx, level, base, tasks)
}

// runTask runs attempts of one task until it commits, fails for good, or the
// run stops. It returns false when the task failed for good.
func (c *Coordinator) runTask(ctx context.Context, t *spec.Task, level int, base string) (bool, error) {
	cfg := c.opts.Config
	infraStreak := 0
	for {
		if ctx.Err() != nil {
			return false, context.Cause(ctx)
		}
		probe, err := c.gov.Acquire(ctx)
		if err != nil {
			return false, err
		}
		c.mu.Lock()
		ts := c.state.task(t.ID)
		n := ts.Attempts + 1
		// Only the model's own failures go into the retry prompt, and an infra
		// failure in between does not erase them.
		previous := ts.Diagnosis
		c.mu.Unlock()

		in := attempt.Input{
			Repo: c.repo, Feature: c.opts.Feature, Graph: c.graph, Task: t, Number: n, Base: base,
			Workspace: c.paths.workspace(t.ID, n), Branch: AttemptBranch(c.opts.Feature, t.ID, n),
			Dir: c.paths.attemptDir(t.ID, n), WorkerDir: c.paths.workerDir(t.ID, n), Previous: previous, SpecText: c.specText(),
			Worker: c.workerSpec(t), VerifyTimeout: cfg.Verification.Timeout, VerifyEnv: cfg.Env.Pass,
			Scanner: c.scanner, Audit: c.audit, Rules: c.rulesFor(t),
		}
		in.OnStart = func(pids []claude.Proc, marker string) {
			_ = c.emit(EvAttemptPIDs, t.ID, n, AttemptPIDs{PIDs: pids, Marker: marker})
			c.setLive(t.ID, func(l *liveAttempt) {
				if len(pids) > 0 {
					l.PID = pids[0].PID
				}
			})
		}
		in.OnProgress = func(p claude.Progress) {
			c.setLive(t.ID, func(l *liveAttempt) {
				l.LastEvent, l.Turns, l.ToolCalls, l.Tokens = p.LastEvent, p.Turns, p.ToolCalls, p.Tokens.Total()
			})
		}
		if err := c.emit(EvAttemptStarted, t.ID, n, AttemptStarted{Level: level, Base: base, Workspace: in.Workspace, Branch: in.Branch, Dir: in.Dir}); err != nil {
			c.gov.Release(probe, Outcome{})
			return false, err
		}
		c.setLive(t.ID, func(l *liveAttempt) { *l = liveAttempt{Attempt: n, Started: time.Now()} })
		c.printf("  %s: attempt %d started%s", t.ID, n, map[bool]string{true: " (probe)", false: ""}[probe])
		res, err := attempt.Run(ctx, in)
		c.dropLive(t.ID)
		c.gov.Release(probe, governorOutcome(res))
		if err != nil {
			return false, err
		}
		fin := AttemptFinished{
			Class: string(res.Class), Reason: res.Reason, Detail: res.Detail, Commit: res.Commit,
			CostUSD: res.Worker.CostUSD, Tokens: res.Worker.Usage.Total(), Turns: res.Worker.NumTurns,
			DurationMS: res.Duration.Milliseconds(), WorkerMS: res.Worker.Duration.Milliseconds(), VerifyExit: res.VerifyExit,
		}
		for _, ch := range res.Changes {
			fin.Changed = append(fin.Changed, ch.Path)
		}
		if err := c.emit(EvAttemptFinished, t.ID, n, fin); err != nil {
			return false, err
		}
		switch res.Class {
		case attempt.Success:
			c.printf("  %s: committed %s in %s%s", t.ID, short(res.Commit), res.Duration.Round(100*time.Millisecond), cost(res.Worker.CostUSD))
			return true, nil
		case attempt.Fatal:
			c.printf("  %s: fatal: %s", t.ID, res.Detail)
			_ = c.emit(EvTaskFailed, t.ID, n, TaskFailed{Reason: res.Reason, Detail: res.Detail})
			c.cancel(fmt.Errorf("%w: %s: %s", ErrFatal, t.ID, res.Detail))
			return false, context.Cause(ctx)
		case attempt.Task:
			infraStreak = 0
			c.mu.Lock()
			spent := c.state.Tasks[t.ID].TaskFailures
			c.mu.Unlock()
			if spent > cfg.Retry.TaskRetries {
				c.printf("  %s: failed for good after %d attempt(s): %s", t.ID, n, res.Detail)
				return false, c.emit(EvTaskFailed, t.ID, n, TaskFailed{Reason: res.Reason, Detail: res.Detail})
			}
			c.printf("  %s: attempt %d failed (%s), retrying: %s", t.ID, n, res.Reason, clip(res.Detail, 200))
		case attempt.Infra:
			if ctx.Err() != nil {
				return false, context.Cause(ctx)
			}
			infraStreak++
			c.mu.Lock()
			infra := c.state.Tasks[t.ID].InfraFailures
			c.mu.Unlock()
			if cfg.Retry.InfraMaxAttempts > 0 && infra >= cfg.Retry.InfraMaxAttempts {
				c.printf("  %s: failed for good after %d infrastructure failures: %s", t.ID, infra, res.Detail)
				return false, c.emit(EvTaskFailed, t.ID, n, TaskFailed{Reason: res.Reason, Detail: res.Detail})
			}
			wait := backoff(cfg.Retry.InfraBackoffInitial, cfg.Retry.InfraBackoffMax, infraStreak)
			c.printf("  %s: infrastructure failure (%s), retrying in %s (does not count against retries)", t.ID, res.Reason, wait.Round(time.Millisecond))
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return false, context.Cause(ctx)
			}
		}
	}
}

// governorOutcome is what the launch governor learns from an attempt.
func governorOutcome(res attempt.Result) Outcome {
	o := Outcome{Infra: res.Class == attempt.Infra, Reason: res.Reason, RetryAfter: res.RetryAfter}
	if res.Reason == "cancelled" {
		o.Infra = false // the run was stopped; the API was not at fault
	}
	o.Overload = o.Infra && (res.Reason == claude.ReasonRateLimit || res.Reason == claude.ReasonOverloaded)
	return o
}

// backoff is exponential with ±25 % jitter, so workers that failed together
// do not retry together.
func backoff(initial, maxWait time.Duration, n int) time.Duration {
	if initial <= 0 {
		initial = time.Second
	}
	if maxWait <= 0 {
		maxWait = time.Minute
	}
	d := initial
	for i := 1; i < n && d < maxWait; i++ {
		d *= 2
	}
	d = min(d, maxWait)
	return time.Duration(float64(d) * (0.75 + 0.5*rand.Float64()))
}

func (c *Coordinator) workerSpec(t *spec.Task) claude.Spec {
	sp := c.opts.Worker
	cfg := c.opts.Config
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
	sp.PassEnv = append(slices.Clone(sp.PassEnv), cfg.Env.Pass...)
	return sp
}

// openSecurity builds the secret scanner, opens the audit log and checks the
// security rules cache against its pinned checksum.
func (c *Coordinator) openSecurity() error {
	sc, err := security.NewScanner()
	if err != nil {
		return fmt.Errorf("secret scanner: %w", err)
	}
	c.scanner = sc
	if c.audit, err = security.OpenAudit(security.AuditPath(c.opts.Root)); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	c.recordEnv()
	rules := c.opts.Config.SecurityRules
	if !rules.Enabled {
		return nil
	}
	dir := security.RulesCacheDir(c.opts.Root, rules.Commit)
	if _, err := security.VerifyRules(dir, security.ExpectedChecksum(rules.Commit, rules.SHA256)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			c.printf("zerg: warning: the security rules are not fetched; workers get none (run zerg rules update)")
			return nil
		}
		return fmt.Errorf("%w: the security rules in %s fail verification (%v); fetch them again with zerg rules update --force", ErrBadInput, dir, err)
	}
	c.rulesDir = dir
	return nil
}

// recordEnv writes to the audit log which of zerg's environment variables
// workers will not get (names only), and every dangerous name the config
// passes anyway.
func (c *Coordinator) recordEnv() {
	pass := c.opts.Config.Env.Pass
	var dropped []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if claude.InheritedEnv(name) || slices.Contains(pass, name) ||
			name == claude.EnvAPIKey || name == claude.EnvAuthToken || name == claude.EnvBaseURL {
			continue
		}
		dropped = append(dropped, name)
	}
	slices.Sort(dropped)
	if len(dropped) > 0 {
		_ = c.audit.Record(security.AuditEnvDropped, map[string]any{"feature": c.opts.Feature, "names": dropped})
	}
	for _, name := range c.opts.Config.Env.AllowDangerous {
		if _, set := os.LookupEnv(name); set {
			_ = c.audit.Record(security.AuditDangerousEnvAllowed, map[string]any{"feature": c.opts.Feature, "name": name, "why": security.DangerousEnv(name)})
		}
	}
}

// rulesFor renders the security rules for the languages of a task's files,
// within half of the context budget.
func (c *Coordinator) rulesFor(t *spec.Task) string {
	if c.rulesDir == "" {
		return ""
	}
	files, err := security.RulesFor(c.rulesDir, append(t.Files.Owned(), t.Files.Read...))
	if err != nil {
		return ""
	}
	text, _ := security.RenderRules(files, c.opts.Config.Context.TokenBudget*security.CharsPerToken/2)
	return text
}

// specText is the feature's requirements and design, when present.
func (c *Coordinator) specText() string {
	var parts []string
	for _, f := range []string{"requirements.md", "design.md"} {
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(c.paths.Graph), f)); err == nil {
			parts = append(parts, strings.TrimSpace(string(b)))
		}
	}
	s := strings.Join(parts, "\n\n")
	const maxSpec = 16000 // ≈ 4,000 tokens: the context budget for the task-specific part
	if len(s) > maxSpec {
		s = s[:maxSpec] + "\n…(spec truncated)"
	}
	return s
}

func (c *Coordinator) writeCoordinatorFile() error {
	b, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "started": time.Now().UTC()})
	return fsx.WriteFileAtomic(c.paths.Coordinator, b, 0o644)
}

func short(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

func cost(usd float64) string {
	if usd <= 0 {
		return ""
	}
	return fmt.Sprintf(", $%.4f", usd)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
