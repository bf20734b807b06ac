package run

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/textx"
)

// The DAG schedule (schedule: dag, docs/schedule.md). A task starts as soon
// as its dependencies are merged, up to the run's workers at once, never
// beside a task in flight that owns a common path; finished tasks merge in
// batches through the gates, and a batch that fails them is bisected to
// the task that broke it. What is decided is in dag.go; this carries it
// out with the same attempts, retries, governor, budget and log as the
// level schedule.

// Reasons of task_merge_failed.
const (
	ReasonGateFailed    = "gate_failed"
	ReasonMergeConflict = "merge_conflict"
)

// dagDone is a task's runner or the merger coming back to the scheduler.
type dagDone struct {
	task  string // "" for the merger
	err   error
	merge bool
}

// runDAG runs the graph under the DAG schedule until nothing more can start
// or merge.
func (c *Coordinator) runDAG(ctx context.Context) error {
	gctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if p, ok := c.preparing(); ok {
		go c.prepareDAG(ctx, gctx, p)
	}
	for _, t := range c.graph.Tasks {
		if ts := c.taskState(t.ID); ts.Status == runstate.StatusFailed {
			c.progress.failedEarlier(t.ID, ts.Reason)
		}
	}
	done := make(chan dagDone)
	busy := map[string]bool{}
	var merging []string
	var runErr error
	for {
		stopping := runErr != nil || gctx.Err() != nil
		if !stopping && c.halted() == nil {
			if err := c.startReady(gctx, busy, done); err != nil {
				runErr = err
				cancel(err)
			}
		}
		if !stopping && runErr == nil && merging == nil {
			if batch := dagBatch(c.dagView(busy)); len(batch) > 0 {
				merging = batch
				go func() { done <- dagDone{merge: true, err: c.mergeBatch(gctx, batch)} }()
			}
		}
		if len(busy) == 0 && merging == nil {
			break
		}
		d := <-done
		if d.merge {
			merging = nil
		} else {
			delete(busy, d.task)
		}
		if d.err != nil && runErr == nil {
			runErr = d.err
			cancel(d.err)
		}
	}
	if runErr != nil {
		return runErr
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if err := c.blockDependents(); err != nil {
		return err
	}
	if h := c.halted(); h != nil {
		// Launching stopped: what was not launched is not failed, and what
		// committed was merged or stays for the resume.
		return h
	}
	var failed []string
	for _, t := range c.graph.Tasks {
		if c.taskState(t.ID).Status == runstate.StatusFailed {
			failed = append(failed, t.ID)
		}
	}
	if len(failed) > 0 {
		slices.Sort(failed)
		return errorf(NotDelivered, c.feature, "%s failed", strings.Join(failed, ", "))
	}
	return nil
}

// dagView is the run as the DAG decisions read it.
func (c *Coordinator) dagView(busy map[string]bool) dagView {
	if c.dagAfter == nil {
		c.dagAfter = dagOrder(c.graph)
	}
	return newDAGView(c.graph, c.dagAfter, func(id string) runstate.Status { return c.taskState(id).Status }, busy)
}

// startReady starts what may start now: task_scheduled, then a runner that
// makes the task's attempts (runTask, as a level's tasks) from the
// integration head as it is now, which holds every dependency.
func (c *Coordinator) startReady(ctx context.Context, busy map[string]bool, done chan<- dagDone) error {
	for _, id := range dagStarts(c.dagView(busy), c.workers-len(busy)) {
		t := c.graph.Task(id)
		c.mu.Lock()
		base := c.state.Head
		c.mu.Unlock()
		if err := c.emit(runstate.EvTaskScheduled, id, 0, runstate.TaskScheduled{Level: t.Level, Base: base}); err != nil {
			return err
		}
		busy[id] = true
		go func() {
			_, err := c.runTask(ctx, t, t.Level, base)
			done <- dagDone{task: t.ID, err: err}
		}()
	}
	return nil
}

// blockDependents records task_blocked for every task that waits for a
// task that failed for good.
func (c *Coordinator) blockDependents() error {
	blocked := dagBlocked(c.dagView(nil))
	ids := make([]string, 0, len(blocked))
	for id := range blocked {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if err := c.emit(runstate.EvTaskBlocked, id, 0, runstate.TaskBlocked{Reason: fmt.Sprintf("it depends on %s, which failed", blocked[id])}); err != nil {
			return err
		}
	}
	return nil
}

// mergeBatch merges a batch of committed tasks through the gates, and when
// they fail, bisects it (mergePlan): every task of the batch ends merged,
// or refused on its own (task_merge_failed) and tried again or failed.
func (c *Coordinator) mergeBatch(ctx context.Context, batch []string) error {
	plan := newMergePlan(batch)
	if len(batch) > 1 {
		c.progress.printf("  merging %d tasks: %s", len(batch), strings.Join(batch, ", "))
	}
	for {
		step, ok := plan.Next()
		if !ok {
			return nil
		}
		if step.Fail != "" {
			if err := c.refuseMerge(step.Fail, step.Why); err != nil {
				return err
			}
			continue
		}
		pass, why, err := c.tryMerge(ctx, step.Test)
		if err != nil {
			return err
		}
		if !pass && len(step.Test) > 1 {
			c.progress.printf("  bisecting %s: %s", strings.Join(step.Test, ", "), whyShort(why))
		}
		plan.Result(pass, why)
	}
}

// tryMerge merges tasks onto the integration head in the merge workspace
// and runs the gates on the merged head. When every required gate passes,
// batch_merged is written and only then the branch moves (compare-and-swap
// from the head it was merged onto), as a level's merge does.
func (c *Coordinator) tryMerge(ctx context.Context, ids []string) (bool, GateFailure, error) {
	c.mu.Lock()
	base, n := c.state.Head, len(c.state.Batches)+1
	c.mu.Unlock()
	var merges []TaskMerge
	for _, id := range ids {
		merges = append(merges, TaskMerge{Task: id, Title: c.graph.Task(id).Title, Commit: c.taskState(id).Commit})
	}
	m, err := c.d.Integrator.Merge(ctx, base, merges)
	if err != nil {
		var ce *ConflictError
		if errors.As(err, &ce) {
			return false, GateFailure{Conflict: err.Error()}, nil
		}
		return false, GateFailure{}, err
	}
	defer m.Discard()
	head := m.Head()
	runs := runGates(ctx, m, gatesFor(c.cfg.Gates, c.completes(ids)))
	if ctx.Err() != nil {
		return false, GateFailure{}, context.Cause(ctx)
	}
	failed, err := c.recordGates(gateOn{batch: n, tasks: ids, merged: ids}, head, runs)
	if err != nil {
		return false, GateFailure{}, err
	}
	if g := failed; g != nil {
		return false, GateFailure{Gate: g.Name, Exit: g.Exit, Output: g.Output, Head: head}, nil
	}
	if err := c.emit(runstate.EvBatchMerged, "", 0, runstate.BatchMerged{Batch: n, Base: base, Head: head, Tasks: ids}); err != nil {
		return false, GateFailure{}, err
	}
	if err := c.d.Refs.SetBranch(ctx, IntegrationBranch(c.feature), head, base); err != nil {
		return false, GateFailure{}, err
	}
	c.progress.printf("  merged %s → %s", strings.Join(ids, ", "), gitx.ShortHash(head))
	return true, GateFailure{}, nil
}

// refuseMerge records that a task's work broke the gates (or the merge) on
// its own: a task failure, with the gate's output for the retry prompt;
// the retry policy decides whether it runs again.
func (c *Coordinator) refuseMerge(id string, why GateFailure) error {
	ts := c.taskState(id)
	d := runstate.TaskMergeFailed{Reason: ReasonGateFailed, Gate: why.Gate, Exit: why.Exit, Output: why.Output, Head: why.Head}
	if why.Conflict != "" {
		d.Reason = ReasonMergeConflict
		d.Detail = "its work did not merge onto the integration branch (another task changed the same lines): " + textx.Clip(textx.OneLine(why.Conflict), 500)
	} else {
		d.Detail = fmt.Sprintf("its work passed its own verification, but the quality gate %s failed (exit %d) on the integration branch with it merged; fix what the gate reports", why.Gate, why.Exit)
	}
	if err := c.emit(runstate.EvTaskMergeFailed, id, ts.Attempts, d); err != nil {
		return err
	}
	c.progress.printf("  %s: bisection names it: %s", id, whyShort(why))
	after := c.taskState(id)
	if Decide(PolicyFrom(c.cfg.Retry), after, outcome.Task, d.Reason, 0, false).Action == ActFail {
		c.progress.failedForGood(id, after, d.Detail)
		return c.emit(runstate.EvTaskFailed, id, ts.Attempts, runstate.TaskFailed{Reason: d.Reason, Detail: d.Detail})
	}
	c.progress.retrying(id, ts.Attempts, d.Reason, d.Detail)
	return nil
}

func whyShort(why GateFailure) string {
	if why.Conflict != "" {
		return "merge conflict: " + textx.Clip(textx.OneLine(why.Conflict), 200)
	}
	return fmt.Sprintf("gate %s failed (exit %d)", why.Gate, why.Exit)
}
