// Package tasksmode is the commands' side of tasks mode's control plane
// (docs/modes.md): zerg tasks next (Next) follows the run, starts its
// coordinator when none runs and hands out the leases the coordinator
// posted, a level together; zerg tasks done (Report) reports a lease back
// and waits for what zerg made of the result. The board's files are
// driver's (driver/tasks_board.go); the coordinator is reached through the
// Coordinator port, so that the decisions are tested with fakes. The
// commands parse their flags and print.
package tasksmode

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
)

// Coordinator is the run's coordinator as zerg tasks next sees it.
type Coordinator interface {
	// Inspect is the run's view (a run with no log yet is not started).
	Inspect() (runstate.View, error)
	// Starting reports whether a coordinator an earlier zerg tasks next
	// started is still alive (it holds the run's log only after its
	// environment check).
	Starting() bool
	// Start starts a coordinator in the background, resuming a run that
	// exists; its exit comes on the channel.
	Start(resume bool) (<-chan error, error)
}

// Outcome is how a zerg tasks next ended.
type Outcome int

const (
	// Handed: the run goes on; Tasks are the leases handed out now (none
	// when nothing was ready within the wait), Working those out before.
	Handed Outcome = iota
	// Delivered: the run delivered and no coordinator runs.
	Delivered
	// NotDelivered: the run ended without delivering, nothing to run
	// again; Failed are the tasks that failed for good.
	NotDelivered
	// Starting: the coordinator is still checking the environment when
	// the wait ran out.
	Starting
	// Ended: the coordinator ended before handing anything out (a bad
	// graph, a failing check, a run that ended at once); Exit is how.
	Ended
)

// NextResult is what zerg tasks next found.
type NextResult struct {
	Outcome Outcome
	View    runstate.View
	Tasks   []driver.Lease
	Working []driver.Lease
	Failed  []string
	Exit    error
}

// Next follows the run until there is something to say: leases to hand
// out, the run's end, or the wait's. It looks again every poll.
func Next(ctx context.Context, c Coordinator, board string, wait, poll time.Duration) (NextResult, error) {
	deadline := time.Now().Add(wait)
	var exited <-chan error // the coordinator this call started, nil for none
	for {
		v, err := c.Inspect()
		if err != nil {
			return NextResult{}, err
		}
		if !v.Coordinator.Alive {
			switch {
			case v.State == runstate.RunDelivered:
				return NextResult{Outcome: Delivered, View: v}, nil
			case v.State == runstate.RunNotDelivered && !HasWork(v):
				return NextResult{Outcome: NotDelivered, View: v, Failed: FailedTasks(v)}, nil
			}
			if exited == nil && !c.Starting() {
				if exited, err = c.Start(v.State != runstate.RunNotStarted); err != nil {
					return NextResult{}, err
				}
			} else if !time.Now().Before(deadline) {
				// Still checking the environment before its first launch.
				return NextResult{Outcome: Starting, View: v}, nil
			}
		}
		select {
		case err := <-exited:
			// It ended before handing anything out. Or another zerg tasks
			// next started one first (this one then found the run
			// locked): follow that one.
			if v2, ierr := c.Inspect(); ierr == nil && (v2.Coordinator.Alive ||
				(v2.State == runstate.RunDelivered || v2.State == runstate.RunNotDelivered) && !HasWork(v2)) {
				exited = nil
				continue
			}
			return NextResult{Outcome: Ended, View: v, Exit: err}, nil
		default:
		}
		if v.Coordinator.Alive {
			b, err := driver.ReadBoard(board, v.Coordinator.PID)
			if err != nil {
				return NextResult{}, err
			}
			// A level's attempts post their leases one by one, each once its
			// clone is made: hand out the level together, so that one message
			// of the session starts all its subagents.
			settled := len(b.Fresh) > 0 && Launching(v, b.Open) == 0
			if settled || !time.Now().Before(deadline) {
				var out []driver.Lease
				for _, l := range b.Fresh {
					h, ok, err := driver.HandOut(board, l)
					if err != nil {
						return NextResult{}, err
					}
					if !ok {
						continue // another zerg tasks next handed it out
					}
					out = append(out, h)
				}
				return NextResult{Outcome: Handed, View: v, Tasks: out, Working: b.Working}, nil
			}
		}
		select {
		case <-ctx.Done():
			return NextResult{}, context.Cause(ctx)
		case <-time.After(poll):
		}
	}
}

// Launching counts the tasks whose lease is still to come: an attempt
// started (its workspace being made) without an open lease (open: the
// tasks with one), and, while worker slots are free, tasks ready to start.
func Launching(v runstate.View, open map[string]bool) int {
	n, running, ready := 0, 0, 0
	for _, t := range v.Tasks {
		switch t.Status {
		case runstate.StatusRunning:
			running++
			if !open[t.ID] {
				n++
			}
		case runstate.StatusReady:
			ready++
		}
	}
	if free := v.Workers - running; free > 0 {
		n += min(free, ready)
	}
	return n
}

// HasWork reports whether a run that ended has tasks to run again (zerg
// retry requeued one since).
func HasWork(v runstate.View) bool {
	return slices.ContainsFunc(v.Tasks, func(t runstate.TaskView) bool { return t.Status == runstate.StatusPending })
}

// FailedTasks are the tasks of the run that failed for good.
func FailedTasks(v runstate.View) []string {
	var out []string
	for _, t := range v.Tasks {
		if t.Status == runstate.StatusFailed {
			out = append(out, t.ID)
		}
	}
	return out
}

// NotOpenError: the lease reported is not the task's open lease (expired
// and handed out again, reported already, or never printed).
type NotOpenError struct {
	// Open is the attempt whose lease is open for the task, 0 for none.
	Open int
}

func (e *NotOpenError) Error() string {
	if e.Open == 0 {
		return "the task has no open lease"
	}
	return fmt.Sprintf("its open lease is attempt %d's", e.Open)
}

// Done is what became of a reported lease's attempt.
type Done struct {
	// Finished is the log's record of how the attempt ended, nil when
	// the wait ran out first (still being checked).
	Finished *runstate.AttemptFinished
	// TaskFailed: the attempt failed and the task with it, for good (else
	// a failed attempt's task is handed out again).
	TaskFailed bool
}

// Report reports lease (a token) of task to the coordinator of pid
// coordinator and waits up to wait for the attempt's end in the log at
// events, looking every poll; inspect is the run's view afterwards.
func Report(ctx context.Context, board, events string, coordinator int, task, lease string, wait, poll time.Duration, inspect func() (runstate.View, error)) (Done, error) {
	open, ok, err := driver.OpenLease(board, task, coordinator)
	if err != nil {
		return Done{}, err
	}
	if !ok || !open.Holds(lease) {
		// Never the open lease's token: only the session and the task's
		// prompt hold it.
		e := &NotOpenError{}
		if ok {
			e.Open = open.Attempt
		}
		return Done{}, e
	}
	if err := driver.Report(board, task, lease); err != nil {
		return Done{}, err
	}
	deadline := time.Now().Add(wait)
	for {
		fin, err := attemptFinished(events, task, open.Attempt)
		if err != nil {
			return Done{}, err
		}
		if fin != nil || !time.Now().Before(deadline) {
			d := Done{Finished: fin}
			if fin != nil && fin.Class != outcome.Success {
				// What the coordinator made of the failure: a retry
				// (handed out again) or the task's end.
				if v, err := inspect(); err == nil {
					if t := taskView(v, task); t != nil && t.Status == runstate.StatusFailed {
						d.TaskFailed = true
					}
				}
			}
			return d, nil
		}
		select {
		case <-ctx.Done():
			return Done{}, context.Cause(ctx)
		case <-time.After(poll):
		}
	}
}

// attemptFinished is the log's record of how attempt n of task ended, nil
// while it has none.
func attemptFinished(events, task string, n int) (*runstate.AttemptFinished, error) {
	evs, err := eventlog.Read(events)
	if err != nil {
		return nil, err
	}
	for _, e := range slices.Backward(evs) {
		if e.Type == runstate.EvAttemptFinished && e.Task == task && e.Attempt == n {
			var f runstate.AttemptFinished
			if err := e.Decode(&f); err != nil {
				return nil, err
			}
			return &f, nil
		}
	}
	return nil, nil
}

func taskView(v runstate.View, id string) *runstate.TaskView {
	for i := range v.Tasks {
		if v.Tasks[i].ID == id {
			return &v.Tasks[i]
		}
	}
	return nil
}
