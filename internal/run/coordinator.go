package run

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/diskwatch"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
	"github.com/zergrush/zerg/internal/textx"
)

// Deps are what the coordinator acts through (see ports.go).
type Deps struct {
	Log        EventLog
	Attempter  Attempter
	Integrator Integrator
	Refs       Refs
	Salvager   Salvager
	Clock      Clock
	// Rand returns a number in [0, 1) for backoff jitter.
	Rand func() float64
	// Snapshot records the graph the run works on (written before the
	// event that names its hash).
	Snapshot func(raw []byte) error
}

// Coordinator runs one feature. It is the only writer of the run's log and
// holds orchestration only: what each event means is in state.go, what to
// do after an attempt in decide.go, graph edits in graphchange.go, crash
// recovery in reconcile.go.
type Coordinator struct {
	feature string
	cfg     config.Config
	// caps are what the config's mode's driver can (nil: not known, in
	// tests of the coordinator alone): recorded in the run's first event,
	// and each attempt's workspace kind in its start.
	caps    *driver.Capabilities
	workers int
	graph   *spec.Graph
	paths   Paths
	// rehearsal and scenario: the mode the run is in (recorded at start).
	rehearsal bool
	// credential says which model-API credential the workers use, for the
	// run's first line (never its value).
	credential   string
	subscription bool
	scenario     string
	// schedule is the schedule the run works with (config.Schedules): the
	// config's for a new run, the recorded one (or the one resumeSchedule
	// allows) for a resume.
	schedule string
	// dagAfter is what each task waits for under the DAG schedule
	// (dagOrder), computed once.
	dagAfter map[string][]string
	// resume is the plan Open made for a resume (nil for a new run).
	resume *resumePlan
	// setup lists what Open found to tidy before the first write.
	setup setupPlan

	d  Deps
	mu sync.Mutex // guards state, live and progress output
	// launch orders the start of an attempt against a stop of launching:
	// an attempt_started is never written after the attempt_finished
	// that stopped the launching (an account refusal).
	launch   sync.Mutex
	state    *runstate.State
	progress *progress
	cancel   context.CancelCauseFunc
	gov      *Governor
	live     map[string]runstate.LiveAttempt
	// projection is the cost projection the run starts from (nil: none, so
	// the run budget counts only what was spent).
	projection *runstate.Projection
	// halt is why launching stopped (budget or account), nil while it goes
	// on; reserved holds the projected cost of each attempt in flight.
	halt     *Error
	reserved map[string]float64
	// waitUntil is when launching resumes after a usage limit's reset
	// (retry.wait_for_reset), zero while no reset is waited for; cancels
	// stop each attempt in flight, by task, for such a wait (reset.go).
	waitUntil time.Time
	cancels   map[string]context.CancelCauseFunc
	// faults correlates failures across attempts (correlate.go).
	faults faults
}

// emit appends an event and folds it into the state under one lock, so the
// state never runs ahead of the log. An event the state machine refuses is
// never written: it is a bug, reported as an Internal error.
func (c *Coordinator) emit(typ, task string, attemptN int, data any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	probe, err := eventlog.NewEvent(typ, task, attemptN, data)
	if err != nil {
		return err
	}
	if err := c.state.Check(probe); err != nil {
		return &Error{Kind: Internal, Feature: c.feature, Task: task, Err: err}
	}
	e, err := c.d.Log.AppendData(typ, task, attemptN, data)
	if err != nil {
		return fmt.Errorf("write the event log: %w", err)
	}
	return c.state.Apply(e)
}

// taskState returns a copy of a task's state for reading.
func (c *Coordinator) taskState(id string) runstate.TaskState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.Task(id)
}

// execute runs (or resumes) the run with the given dependencies.
func (c *Coordinator) execute(ctx context.Context) (*runstate.State, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c.cancel = cancel
	c.prepare()
	if c.resume == nil {
		if err := c.begin(ctx); err != nil {
			return c.state, err
		}
	} else if err := c.reconcile(ctx); err != nil {
		return c.state, err
	}
	levels := graphLevels(c.graph)
	c.progress.start(c.feature, len(c.graph.Tasks), len(levels), c.workers, c.schedule, c.rehearsal, c.credential)
	if c.projection != nil {
		c.progress.projection(c.projection, func(id string) bool { return c.taskState(id).Status == runstate.StatusMerged }, c.state.CostUSD, c.cfg.Budget.RunUSD)
		if err := c.emit(runstate.EvRunProjected, "", 0, c.projection); err != nil {
			return c.state, err
		}
	}

	var runErr error
	if c.schedule == config.ScheduleDAG {
		runErr = c.runDAG(ctx)
	} else {
		for _, level := range levels {
			if err := c.runLevel(ctx, level); err != nil {
				runErr = err
				break
			}
		}
	}
	if p, ok := c.preparing(); ok {
		p.DiscardPrepared()
	}
	return c.state, c.finish(ctx, runErr)
}

// prepare fills the defaults of what the run needs besides its ports.
func (c *Coordinator) prepare() {
	if c.d.Clock == nil {
		c.d.Clock = realClock{}
	}
	if c.schedule == "" {
		c.schedule = c.cfg.Schedule
	}
	if c.d.Rand == nil {
		c.d.Rand = rand.Float64
	}
	if c.gov == nil {
		c.gov = NewGovernor(c.cfg, c.workers, c.governorEvent)
		c.gov.now, c.gov.after = c.d.Clock.Now, c.d.Clock.After
	}
	if c.live == nil {
		c.live = map[string]runstate.LiveAttempt{}
	}
	if c.reserved == nil {
		c.reserved = map[string]float64{}
	}
	if c.cancels == nil {
		c.cancels = map[string]context.CancelCauseFunc{}
	}
}

// governorEvent records a governor change; a log write error stops the run.
func (c *Coordinator) governorEvent(typ string, data any) {
	if err := c.emit(typ, "", 0, data); err != nil && c.cancel != nil {
		c.cancel(err)
	}
}

// begin starts a new run: the graph recorded, the integration branch at the
// user's HEAD.
func (c *Coordinator) begin(ctx context.Context) error {
	base, ref, err := c.d.Refs.UserHead(ctx)
	if err != nil {
		return errorf(BadInput, c.feature, "the repository has no commit yet; commit something first (%v)", err)
	}
	if err := c.d.Snapshot(c.graph.Raw); err != nil {
		return fmt.Errorf("record the task graph: %w", err)
	}
	if err := c.emit(runstate.EvRunStarted, "", 0, runstate.RunStarted{
		Feature: c.feature, Base: base, BaseRef: ref, Integration: IntegrationBranch(c.feature),
		GraphSHA256: graphHash(c.graph), Workers: c.workers, Rehearsal: c.rehearsal, Scenario: c.scenario,
		Subscription: c.subscription, Mode: c.cfg.Mode, Capabilities: c.caps, Schedule: c.schedule,
	}); err != nil {
		return err
	}
	return c.d.Refs.SetBranch(ctx, IntegrationBranch(c.feature), base, "")
}

// workspaceKind is the kind of workspace the run's attempts get ("": not
// known).
func (c *Coordinator) workspaceKind() driver.WorkspaceKind {
	if c.caps == nil {
		return ""
	}
	return c.caps.Workspace
}

// graphLevels are the graph's level numbers in order.
func graphLevels(g *spec.Graph) []int {
	var ls []int
	for _, t := range g.Tasks {
		if !slices.Contains(ls, t.Level) {
			ls = append(ls, t.Level)
		}
	}
	slices.Sort(ls)
	return ls
}

// tasksOf are the ids of a level's tasks, sorted.
func tasksOf(g *spec.Graph, level int) []*spec.Task {
	var ts []*spec.Task
	for _, t := range g.Tasks {
		if t.Level == level {
			ts = append(ts, t)
		}
	}
	slices.SortFunc(ts, func(a, b *spec.Task) int { return strings.Compare(a.ID, b.ID) })
	return ts
}

// runLevel runs what the level still needs, then merges it. A level whose
// tasks are all merged is done; a task added to a merged level runs from
// the current head and is merged on top. No partial merges: any failure
// leaves the integration branch where it was.
func (c *Coordinator) runLevel(ctx context.Context, level int) error {
	c.mu.Lock()
	base := c.state.Head
	c.mu.Unlock()
	var toRun, toMerge, failedBefore []*spec.Task
	for _, t := range tasksOf(c.graph, level) {
		ts := c.taskState(t.ID)
		switch {
		case ts.Status == runstate.StatusMerged:
			continue
		case ts.Status == runstate.StatusFailed:
			// Failed for good: only zerg retry runs it again.
			c.progress.failedEarlier(t.ID, ts.Reason)
			failedBefore = append(failedBefore, t)
			continue
		case ts.Status == runstate.StatusCommitted && ts.CommitBase == base && ts.Commit != "":
			c.progress.kept(t.ID, ts.Commit)
		default:
			toRun = append(toRun, t)
		}
		toMerge = append(toMerge, t)
	}
	if len(toMerge) == 0 && len(failedBefore) == 0 {
		return nil
	}
	c.progress.levelStart(level, len(toRun), base)
	if len(toRun) > 0 {
		ids := make([]string, len(toRun))
		for i, t := range toRun {
			ids[i] = t.ID
		}
		if err := c.emit(runstate.EvLevelStarted, "", 0, runstate.LevelStarted{Level: level, Base: base, Tasks: ids}); err != nil {
			return err
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	if p, ok := c.preparing(); ok && len(toRun) > 0 {
		lctx, stop := context.WithCancel(gctx)
		defer stop()
		go c.prepareWhenThinking(ctx, lctx, p, toRun, level, base)
	}
	g.SetLimit(c.workers)
	var fmu sync.Mutex
	failed := slices.Clone(failedBefore)
	for _, t := range toRun {
		g.Go(func() error {
			ok, err := c.runTask(gctx, t, level, base)
			if err != nil {
				return err
			}
			if !ok {
				fmu.Lock()
				failed = append(failed, t)
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
	if h := c.halted(); h != nil {
		// Launching stopped: what was not launched is not failed, and
		// what committed stays for the resume to merge.
		return h
	}
	if len(failed) > 0 {
		var ids []string
		for _, t := range failed {
			ids = append(ids, t.ID)
		}
		slices.Sort(ids)
		return c.failLevel(level, "task(s) failed", ids, errorf(NotDelivered, c.feature, "level %d: %s failed", level, strings.Join(ids, ", ")))
	}
	return c.mergeLevel(ctx, level, base, toMerge)
}

// failLevel records a level that did not merge and blocks every task of the
// later levels, then returns err.
func (c *Coordinator) failLevel(level int, reason string, tasks []string, err error) error {
	if e := c.emit(runstate.EvLevelFailed, "", 0, runstate.LevelFailed{Level: level, Reason: reason, Tasks: tasks}); e != nil {
		return e
	}
	for _, t := range c.graph.Tasks {
		if t.Level <= level {
			continue
		}
		st := c.taskState(t.ID).Status
		if runstate.CanTransition(runstate.EvTaskBlocked, st, runstate.StatusBlocked) {
			if e := c.emit(runstate.EvTaskBlocked, t.ID, 0, runstate.TaskBlocked{Reason: fmt.Sprintf("level %d failed", level)}); e != nil {
				return e
			}
		}
	}
	return err
}

// runTask runs attempts of one task until it commits, fails for good, or the
// run stops. It returns false when the task failed for good.
func (c *Coordinator) runTask(ctx context.Context, t *spec.Task, level int, base string) (bool, error) {
	policy := PolicyFrom(c.cfg.Retry)
	infraStreak := 0
	for {
		if ctx.Err() != nil {
			return false, context.Cause(ctx)
		}
		if c.halted() != nil {
			return false, nil
		}
		// A wait for a usage limit's reset holds every launch.
		if err := c.awaitReset(ctx); err != nil {
			return false, err
		}
		probe, err := c.gov.Acquire(ctx)
		if err != nil {
			return false, err
		}
		if c.halted() != nil {
			c.gov.Release(probe, Outcome{})
			return false, nil
		}
		// No attempt starts on a nearly full disk: zerg's own records (the
		// log, the audit) must always have room.
		if err := diskwatch.Check(int64(c.cfg.Disk.MinFreeMB)<<20, c.paths.RunDir, c.paths.Workspaces); err != nil {
			c.gov.Release(probe, Outcome{})
			c.stopLaunching(&Error{Kind: DiskFull, Feature: c.feature, Task: t.ID, Err: err}, false)
			return false, nil
		}
		if err := c.reserve(t.ID); err != nil {
			c.gov.Release(probe, Outcome{})
			c.stopLaunching(err, c.cfg.Budget.OnExceed == config.OnExceedCancel)
			return false, context.Cause(ctx)
		}
		ts := c.taskState(t.ID)
		n := ts.Attempts + 1
		req := c.attemptRequest(t, n, level, base, ts)
		req.OnStart = func(pids []claude.Proc, marker string) {
			if err := c.emit(runstate.EvAttemptPIDs, t.ID, n, runstate.AttemptPIDs{PIDs: pids, Marker: marker}); err != nil {
				c.cancel(err)
			}
			c.setLive(t.ID, func(l *runstate.LiveAttempt) {
				if len(pids) > 0 {
					l.PID = pids[0].PID
				}
			})
		}
		req.OnProgress = func(p claude.Progress) {
			c.setLive(t.ID, func(l *runstate.LiveAttempt) {
				l.LastEvent, l.Turns, l.ToolCalls, l.LastTool, l.Tokens = p.LastEvent, p.Turns, p.ToolCalls, p.LastTool, p.Tokens.Total()
			})
		}
		req.OnVerify = func() {
			if err := c.emit(runstate.EvAttemptVerifying, t.ID, n, nil); err != nil {
				c.cancel(err)
			}
		}
		// A stop recorded since the check above (an account refusal, a
		// refusal everybody meets) stops this start too: every request of
		// it would be refused. (A budget stop does not: this attempt's cost
		// was reserved before it.) A wait
		// for a reset begun since holds it back until the reset.
		actx, acancel := context.WithCancelCause(ctx)
		c.launch.Lock()
		if h := c.halted(); h != nil && h.Kind != Budget {
			c.launch.Unlock()
			acancel(nil)
			c.gov.Release(probe, Outcome{})
			c.unreserve(t.ID)
			return false, nil
		}
		if c.waiting() {
			c.launch.Unlock()
			acancel(nil)
			c.gov.Release(probe, Outcome{})
			c.unreserve(t.ID)
			continue
		}
		c.mu.Lock()
		c.cancels[t.ID] = acancel
		c.mu.Unlock()
		err = c.emit(runstate.EvAttemptStarted, t.ID, n, runstate.AttemptStarted{Level: level, Base: base, Workspace: req.Workspace,
			WorkspaceKind: c.workspaceKind(), Branch: req.Branch, Dir: req.Dir})
		c.launch.Unlock()
		if err != nil {
			c.dropCancel(t.ID, acancel)
			c.gov.Release(probe, Outcome{})
			c.unreserve(t.ID)
			return false, err
		}
		c.setLive(t.ID, func(l *runstate.LiveAttempt) { *l = runstate.LiveAttempt{Attempt: n, Started: c.d.Clock.Now()} })
		c.progress.attemptStart(t.ID, n, probe)
		res, err := c.d.Attempter.Attempt(actx, req)
		c.dropLive(t.ID)
		// Stopped for a reset wait, not by the run: the task is not at fault
		// and runs again after the reset.
		stoppedForReset := errors.Is(context.Cause(actx), errResetWait) && ctx.Err() == nil
		c.dropCancel(t.ID, acancel)
		if err != nil {
			// zerg's own failure (git, disk): the attempt is closed in the log
			// so that no task is left running, and the run stops with it.
			c.gov.Release(probe, Outcome{})
			fin := runstate.AttemptFinished{Class: outcome.Infra, Reason: outcome.ReasonZerg, Detail: err.Error()}
			e := c.emit(runstate.EvAttemptFinished, t.ID, n, fin)
			c.unreserve(t.ID)
			if e != nil {
				return false, errors.Join(err, e)
			}
			return false, fmt.Errorf("%s attempt %d: %w", t.ID, n, err)
		}
		if stoppedForReset && res.Reason == outcome.ReasonCancelled {
			res.Detail = errResetWait.Error()
		}
		c.gov.Release(probe, governorOutcome(res.Class, res.Reason, res.RetryAfter))
		verifyCmd := ""
		if t.Verification != nil {
			verifyCmd = t.Verification.Command
		}
		environmental(&res, verifyCmd)
		fin := finishedEvent(res, req.Model)
		// An account refusal stops launching (or, for a usage limit's
		// reset, holds it) before it is recorded, so no other task's
		// attempt starts after it in the log.
		var reset ResetDecision
		announce := false
		c.launch.Lock()
		if res.Class == outcome.Account && ctx.Err() == nil {
			reset = DecideReset(c.cfg.Retry, res.Reason, res.Reset, c.d.Clock.Now())
			c.mu.Lock()
			if c.halt != nil {
				reset.Wait = false // stopped already: nothing to wait for
			} else if !reset.Wait {
				c.halt = accountStop(c.feature, t.ID, res)
			}
			c.mu.Unlock()
			if reset.Wait {
				announce = c.waitForReset(t.ID, reset.Until)
			}
		}
		err = c.emit(runstate.EvAttemptFinished, t.ID, n, fin)
		c.launch.Unlock()
		c.unreserve(t.ID)
		if err != nil {
			return false, err
		}
		if over := c.overBudget(); over != nil {
			c.stopLaunching(over, c.cfg.Budget.OnExceed == config.OnExceedCancel)
		}
		if stoppedForReset && res.Reason == outcome.ReasonCancelled {
			c.progress.stoppedForReset(t.ID, n)
			continue
		}
		c.mu.Lock()
		everybody := c.faults.note(c.feature, t.ID, res)
		if everybody != nil && c.halt == nil {
			// Halted in the same step as the fault is counted: another
			// task's attempt finishing meanwhile must not start a retry
			// before stopLaunching below has run.
			c.halt = everybody
		}
		c.mu.Unlock()
		if everybody != nil {
			// Every worker would meet it: the running ones are stopped,
			// nothing new starts, and no task has failed.
			c.progress.note("%s", everybody.Err)
			c.stopLaunching(everybody, true)
			return false, context.Cause(ctx)
		}
		if res.Class == outcome.Infra {
			infraStreak++
		} else {
			infraStreak = 0
		}
		after := c.taskState(t.ID)
		d := Decide(policy, after, res.Class, res.Reason, infraStreak, ctx.Err() != nil)
		switch d.Action {
		case ActDone:
			c.progress.committed(t.ID, res.Commit, res.Duration, res.Worker.CostUSD)
			return true, nil
		case ActStopped:
			return false, context.Cause(ctx)
		case ActStopLaunch:
			// Every request of every worker would be refused the same way:
			// the running ones are stopped, nothing new starts, committed
			// work stays, and the task has not failed. A usage limit's
			// reset is waited for when asked: then the task runs again.
			if reset.Wait && c.halted() == nil {
				if announce {
					if err := c.announceReset(t.ID, res, reset.Until); err != nil {
						return false, err
					}
				}
				continue
			}
			if reset.WhyNot != "" {
				c.progress.note("%s: not waiting for the reset: %s", t.ID, reset.WhyNot)
			}
			c.progress.account(t.ID, res.Reason, res.Detail, res.Reset)
			c.stopLaunching(accountStop(c.feature, t.ID, res), true)
			return false, context.Cause(ctx)
		case ActStopBudget:
			c.stopLaunching(&Error{Kind: Budget, Feature: c.feature, Task: t.ID, Err: fmt.Errorf(
				"budget.run_usd $%.2f reached: the gateway refused %s's next request", c.cfg.Budget.RunUSD, t.ID)}, c.cfg.Budget.OnExceed == config.OnExceedCancel)
			return false, nil
		case ActStopRun:
			c.progress.fatal(t.ID, res.Detail)
			c.cancel(&Error{Kind: Fatal, Feature: c.feature, Task: t.ID, Err: fmt.Errorf("%s: %s", t.ID, res.Detail)})
			return false, context.Cause(ctx)
		case ActFail:
			c.progress.failedForGood(t.ID, after, res.Detail)
			return false, c.emit(runstate.EvTaskFailed, t.ID, n, runstate.TaskFailed{Reason: res.Reason, Detail: res.Detail})
		case ActRetry:
			c.progress.retrying(t.ID, n, res.Reason, retryLine(res))
		case ActWait:
			wait := Jitter(d.Wait, c.d.Rand())
			c.progress.infraWait(t.ID, res.Reason, wait)
			select {
			case <-c.d.Clock.After(wait):
			case <-ctx.Done():
				return false, context.Cause(ctx)
			}
		}
	}
}

// mergeLevel merges the level's committed branches onto base in a scratch
// workspace, runs the gates on the merged head, records level_merged and
// only then moves the branch (compare-and-swap from base). The user's
// branches and working tree are never touched.
func (c *Coordinator) mergeLevel(ctx context.Context, level int, base string, tasks []*spec.Task) error {
	var merges []TaskMerge
	var ids []string
	for _, t := range tasks {
		merges = append(merges, TaskMerge{Task: t.ID, Title: t.Title, Commit: c.taskState(t.ID).Commit})
		ids = append(ids, t.ID)
	}
	m, err := c.d.Integrator.Merge(ctx, base, merges)
	if err != nil {
		var ce *ConflictError
		if errors.As(err, &ce) {
			return c.failLevel(level, "merge conflict (an ownership violation): "+err.Error(), []string{ce.Task},
				errorf(NotDelivered, c.feature, "level %d: %v", level, err))
		}
		return err
	}
	defer m.Discard()
	head := m.Head()
	runs := runGates(ctx, m, gatesFor(c.cfg.Gates, c.completes(ids)))
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	failed, err := c.recordGates(gateOn{level: level, merged: ids}, head, runs)
	if err != nil {
		return err
	}
	if g := failed; g != nil {
		why := fmt.Sprintf("gate %s failed (exit %d)", g.Name, g.Exit)
		if len(g.Named) > 0 {
			why += "; its output names files of " + strings.Join(g.Named, ", ")
		}
		return c.failLevel(level, why, ids, errorf(NotDelivered, c.feature, "level %d: %s", level, why))
	}
	// The event goes first: a crash before the branch moves is repaired on
	// resume from the event; a crash before the event redoes only the merge.
	if err := c.emit(runstate.EvLevelMerged, "", 0, runstate.LevelMerged{Level: level, Base: base, Head: head, Tasks: ids}); err != nil {
		return err
	}
	if err := c.d.Refs.SetBranch(ctx, IntegrationBranch(c.feature), head, base); err != nil {
		return err
	}
	c.progress.merged(level, len(ids), head)
	return nil
}

// finish records the end of the run. A run is delivered only when every
// task of the graph is merged: whatever happened, a report never says
// delivered with a task missing.
func (c *Coordinator) finish(ctx context.Context, runErr error) error {
	if runErr != nil && ctx.Err() != nil {
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, Fatal), errors.Is(cause, Account), errors.Is(cause, Budget):
			runErr = cause
		case errors.Is(cause, context.Canceled), errors.Is(cause, context.DeadlineExceeded):
			// A signal or zerg stop: the run can go on later.
			if err := c.emit(runstate.EvRunStopped, "", 0, runstate.RunStopped{Reason: "interrupted"}); err != nil {
				return errors.Join(runErr, err)
			}
			c.progress.stopped(c.feature)
			return &Error{Kind: Interrupted, Feature: c.feature, Err: errors.New("the run was stopped")}
		default:
			runErr = cause // zerg's own failure (the log could not be written)
		}
	}
	if runErr == nil {
		if missing := c.unmerged(); len(missing) > 0 {
			runErr = &Error{Kind: Internal, Feature: c.feature, Task: missing[0],
				Err: fmt.Errorf("the run ended with task(s) %s not merged", strings.Join(missing, ", "))}
		}
	}
	c.mu.Lock()
	fin := runstate.RunFinished{Delivered: runErr == nil, Head: c.state.Head}
	c.mu.Unlock()
	if runErr != nil {
		fin.Reason = runErr.Error()
		var re *Error
		if errors.As(runErr, &re) && (re.Kind == Account || re.Kind == Budget || re.Kind == Environment) {
			fin.Cause, fin.ResumeAfter = string(re.Kind), re.ResumeAfter
			c.progress.halted(re)
		}
	}
	if err := c.emit(runstate.EvRunFinished, "", 0, fin); err != nil {
		return errors.Join(runErr, err)
	}
	if runErr != nil {
		var re *Error
		if !errors.As(runErr, &re) {
			runErr = &Error{Kind: NotDelivered, Feature: c.feature, Err: runErr}
		}
	}
	return runErr
}

// unmerged lists the graph's tasks that are not merged.
func (c *Coordinator) unmerged() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, t := range c.graph.Tasks {
		if c.state.Task(t.ID).Status != runstate.StatusMerged {
			out = append(out, t.ID)
		}
	}
	slices.Sort(out)
	return out
}

func (c *Coordinator) setLive(task string, f func(*runstate.LiveAttempt)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.live[task]
	f(&l)
	c.live[task] = l
}

// dropCancel forgets a finished attempt's cancel and releases its context.
func (c *Coordinator) dropCancel(task string, cancel context.CancelCauseFunc) {
	c.mu.Lock()
	delete(c.cancels, task)
	c.mu.Unlock()
	cancel(nil)
}

func (c *Coordinator) dropLive(task string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.live, task)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// finishedEvent is the attempt_finished record of an attempt's result.
func finishedEvent(res attempt.Result, model string) runstate.AttemptFinished {
	fin := runstate.AttemptFinished{
		Class: res.Class, Reason: res.Reason, Detail: res.Detail, Commit: res.Commit,
		CostUSD: res.Worker.CostUSD, Tokens: res.Worker.Usage.Total(), Turns: res.Worker.NumTurns,
		DurationMS: res.Duration.Milliseconds(), WorkerMS: res.Worker.Duration.Milliseconds(), VerifyExit: res.VerifyExit,
		Model: model, Reset: res.Reset, MemoryPeakMB: res.MemoryPeak >> 20, Diagnosis: res.Diagnosis,
		RefusedWrites: res.RefusedWrites,
	}
	if u := runstate.TokensOf(res.Worker.Usage); u.Total() > 0 {
		fin.Usage = &u
	}
	if p := res.Phases; p != (attempt.Phases{}) {
		fin.Phases = &runstate.PhasesMS{Prepare: p.Prepare.Milliseconds(), Launch: p.Launch.Milliseconds(),
			Verify: p.Verify.Milliseconds(), Commit: p.Commit.Milliseconds(), Prepared: p.Prepared}
	}
	for i, ch := range res.Changes {
		if i == runstate.MaxChangedListed {
			fin.ChangedOmitted = len(res.Changes) - i
			break
		}
		fin.Changed = append(fin.Changed, ch.Path)
	}
	return fin
}

// previous is what the retry prompt says of the task's last failed
// attempt: why it failed, the diagnosis, the end of the verification's
// output and what the attempt changed. The retry starts from the base
// again, so the model must be told the failed work is not in front of it,
// and what it was. "" before any task failure.
func (c *Coordinator) previous(task string, ts runstate.TaskState) string {
	if ts.Diagnosis == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "attempt %d: %s", ts.DiagnosedAttempt, ts.Diagnosis)
	// A diagnosis the engine is unsure of would mislead more than help.
	if h := ts.Hypothesis; h != nil && h.Confidence >= sureEnough {
		fmt.Fprintf(&b, "\nDiagnosis: %s (%.0f%% sure)", h.Pattern, 100*h.Confidence)
		if len(h.Evidence) > 0 {
			fmt.Fprintf(&b, ": %s", strings.Join(h.Evidence, "; "))
		}
		fmt.Fprintf(&b, ". What to do: %s.", h.Fix)
	}
	if ts.DiagnosedAttempt > 0 {
		rec := c.paths.Attempt(task, ts.DiagnosedAttempt)
		if ts.GateOutput != "" {
			// The attempt's own verification passed; the gate, on the
			// integration branch with its work merged, did not.
			fmt.Fprintf(&b, "\nThe gate's output ended with:\n\n%s\n", indent(tailLines(ts.GateOutput, 30, 3000)))
		} else if out := readTail(rec.Verify(), 30, 3000); strings.TrimSpace(out) != "" {
			fmt.Fprintf(&b, "\nThe verification's output ended with:\n\n%s\n", indent(out))
		}
		diff := readHead(rec.Diff(), 4000)
		switch {
		case ts.Hypothesis != nil && ts.Hypothesis.Pattern == diagnose.SecretFound:
			// The changes held a credential: it is not sent to the API again.
			b.WriteString("\nThat attempt's changes are not shown: they held a secret.")
		case strings.TrimSpace(diff) != "":
			fmt.Fprintf(&b, "\nWhat that attempt changed (your workspace starts from the base again, without these changes):\n\n%s\n", indent(diff))
		default:
			b.WriteString("\nThat attempt changed nothing.")
		}
	}
	return b.String()
}

// retryLine is what the progress line of a retry says of the failure: the
// diagnosis and its first evidence (the test, file and message) for a
// verification the engine read, else the attempt's detail. The end of a
// test runner's output is its summary ("# fail 1", a suite's block), which
// says nothing of what failed.
func retryLine(res attempt.Result) string {
	if h := res.Diagnosis; h != nil && res.Reason == outcome.ReasonVerificationFailed && h.Confidence >= sureEnough && len(h.Evidence) > 0 {
		return fmt.Sprintf("%s: %s", h.Pattern, h.Evidence[0])
	}
	return res.Detail
}

// sureEnough is the confidence from which the retry prompt carries a
// diagnosis.
const sureEnough = 0.5

// readTail is the last n lines of a file, at most max bytes.
func readTail(path string, n, max int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return tailLines(string(data), n, max)
}

// tailLines is the last n lines of s, at most max bytes.
func tailLines(s string, n, max int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := strings.Join(lines, "\n")
	if len(out) > max {
		out = "…" + out[len(out)-max:]
	}
	return out
}

// readHead is the first max bytes of a file.
func readHead(path string, max int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if len(data) > max {
		return string(data[:max]) + "\n… (cut)"
	}
	return string(data)
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// accountStop is the stop of launching an account refusal of task's
// attempt causes.
func accountStop(feature, task string, res attempt.Result) *Error {
	return &Error{Kind: Account, Feature: feature, Task: task, ResumeAfter: res.Reset,
		Err: fmt.Errorf("%s: %s (%s)", accountCause(res.Reason), textx.Clip(textx.OneLine(res.Detail), 300), task)}
}
