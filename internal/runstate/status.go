package runstate

import (
	"fmt"
	"slices"
)

// Status is a task's place in the run. Every change of status is caused by
// one event of the run's log; transitions lists which are legal.
type Status string

const (
	StatusPending   Status = "pending"    // in the graph, not yet scheduled
	StatusReady     Status = "ready"      // its level started (dag: its dependencies merged); waiting for a worker slot
	StatusRunning   Status = "running"    // an attempt's worker is running
	StatusVerifying Status = "verifying"  // the worker finished; zerg runs the verification command
	StatusCommitted Status = "committed"  // zerg committed the attempt's work on its branch
	StatusMerged    Status = "merged"     // on the integration branch, gates passed
	StatusRetryWait Status = "retry_wait" // an attempt failed; the task will be tried again
	StatusFailed    Status = "failed"     // failed for good; only zerg retry runs it again
	StatusBlocked   Status = "blocked"    // an earlier level (dag: a dependency) failed, so it cannot run
	StatusCancelled Status = "cancelled"  // the run stopped before the task could finish
)

// Statuses lists every status, in the order of a task's life.
var Statuses = []Status{StatusPending, StatusReady, StatusRunning, StatusVerifying, StatusCommitted,
	StatusMerged, StatusRetryWait, StatusFailed, StatusBlocked, StatusCancelled}

// transitions is the state machine: for each event, the statuses a task may
// be in when the event applies to it, and the status it leaves it in.
// Events that end in a status depending on their data (attempt_finished)
// list every possible result. Anything else is an illegal event.
var transitions = map[string]struct {
	from []Status
	to   []Status
}{
	EvLevelStarted:     {from: []Status{StatusPending, StatusRetryWait, StatusCancelled, StatusBlocked, StatusCommitted}, to: []Status{StatusReady}},
	EvAttemptStarted:   {from: []Status{StatusReady, StatusRetryWait}, to: []Status{StatusRunning}},
	EvAttemptVerifying: {from: []Status{StatusRunning}, to: []Status{StatusVerifying}},
	EvAttemptFinished:  {from: []Status{StatusRunning, StatusVerifying}, to: []Status{StatusCommitted, StatusRetryWait}},
	EvTaskFailed:       {from: []Status{StatusRetryWait}, to: []Status{StatusFailed}},
	EvTaskRequeued:     {from: []Status{StatusFailed, StatusRetryWait, StatusCancelled, StatusBlocked, StatusCommitted}, to: []Status{StatusPending}},
	EvTaskBlocked:      {from: []Status{StatusPending, StatusReady, StatusRetryWait, StatusCancelled}, to: []Status{StatusBlocked}},
	EvLevelMerged:      {from: []Status{StatusCommitted}, to: []Status{StatusMerged}},
	// The DAG schedule: a task is scheduled when its dependencies are
	// merged, merged in a batch, or refused by the gates on its own.
	EvTaskScheduled:   {from: []Status{StatusPending, StatusReady, StatusRetryWait, StatusCancelled}, to: []Status{StatusReady}},
	EvBatchMerged:     {from: []Status{StatusCommitted}, to: []Status{StatusMerged}},
	EvTaskMergeFailed: {from: []Status{StatusCommitted}, to: []Status{StatusRetryWait}},
	// A stop, or the end of a run that did not deliver, cancels what was
	// waiting; running attempts are closed first.
	EvRunStopped:  {from: []Status{StatusReady, StatusRetryWait}, to: []Status{StatusCancelled}},
	EvRunFinished: {from: []Status{StatusReady, StatusRetryWait}, to: []Status{StatusCancelled}},
	// A resume gives blocked and cancelled tasks back to the scheduler, and
	// the ready ones of a coordinator that died before it could launch them.
	EvRunResumed: {from: []Status{StatusReady, StatusBlocked, StatusCancelled}, to: []Status{StatusPending}},
	// run_projected (the cost projection) moves no task, like the
	// governor's events; it needs a started run.
	// A changed task that is not merged starts over.
	EvGraphChanged: {from: []Status{StatusPending, StatusRetryWait, StatusFailed, StatusBlocked, StatusCancelled, StatusCommitted}, to: []Status{StatusPending}},
}

// CanTransition reports whether the event typ may move a task from one
// status to another.
func CanTransition(typ string, from, to Status) bool {
	t, ok := transitions[typ]
	return ok && slices.Contains(t.from, from) && slices.Contains(t.to, to)
}

// TransitionError is an event that the state machine refuses: applying it
// would move a task from a status it cannot leave that way.
type TransitionError struct {
	Event string
	Task  string
	From  Status
	To    Status
}

func (e *TransitionError) Error() string {
	if e.To == "" {
		return fmt.Sprintf("event %s for task %s: not allowed while the task is %s", e.Event, e.Task, e.From)
	}
	return fmt.Sprintf("event %s for task %s: %s → %s is not a legal transition", e.Event, e.Task, e.From, e.To)
}

// Active reports whether an attempt of the task is in flight.
func (s Status) Active() bool { return s == StatusRunning || s == StatusVerifying }
