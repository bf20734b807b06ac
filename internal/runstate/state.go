package runstate

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/outcome"
)

// TaskState is one task as rebuilt from the log.
type TaskState struct {
	ID            string        `json:"id"`
	Level         int           `json:"level"`
	Status        Status        `json:"status"`
	Attempts      int           `json:"attempts"`
	TaskFailures  int           `json:"task_failures"`  // count against the retry budget
	InfraFailures int           `json:"infra_failures"` // do not
	Reason        string        `json:"reason,omitempty"`
	Detail        string        `json:"detail,omitempty"`
	LastClass     outcome.Class `json:"last_class,omitempty"` // class of the last finished attempt
	// Diagnosis is the detail of the last task-class failure: what the retry
	// prompt tells the model, even when infra failures came in between.
	Diagnosis string `json:"diagnosis,omitempty"`
	// Hypothesis is what the diagnostics engine made of that failure, and
	// DiagnosedAttempt its number (its records hold the output and diff
	// the retry prompt shows).
	Hypothesis       *diagnose.Hypothesis `json:"hypothesis,omitempty"`
	DiagnosedAttempt int                  `json:"-"`
	// GateOutput is the end of the output of the gate the task's work
	// failed on its own after its attempt passed (DAG schedule), for the
	// retry prompt; "" when the last task failure was the attempt's own.
	GateOutput string `json:"-"`
	// RefusedWrites are the refused writes of the task's last finished
	// attempt: of its committed one once it committed.
	RefusedWrites []attempt.RefusedWrite `json:"refused_writes,omitempty"`
	// MergedHead is the integration head its merge made.
	MergedHead string        `json:"-"`
	Commit     string        `json:"commit,omitempty"` // the committed attempt's commit
	CommitBase string        `json:"-"`                // the head it was built on
	Branch     string        `json:"branch,omitempty"`
	CostUSD    float64       `json:"cost_usd"`
	Tokens     int64         `json:"tokens"`
	WorkerTime time.Duration `json:"-"`
	Started    time.Time     `json:"started,omitzero"`
	// The open attempt, if the log says one is running.
	Open *OpenAttempt `json:"open,omitempty"`
}

// OpenAttempt is an attempt with a start and no finish.
type OpenAttempt struct {
	Number    int    `json:"number"`
	Base      string `json:"base"`
	Workspace string `json:"workspace"`
	// WorkspaceKind is what the workspace is ("": a log from before it
	// was recorded).
	WorkspaceKind driver.WorkspaceKind `json:"workspace_kind,omitempty"`
	Branch        string               `json:"branch"`
	Dir           string               `json:"dir"`
	PIDs          []claude.Proc        `json:"pids,omitempty"`
	Marker        string               `json:"marker,omitempty"`
	Started       time.Time            `json:"started"`
}

// State is a run rebuilt by replaying its log.
type State struct {
	Started     *RunStarted
	StartedAt   time.Time
	GraphSHA256 string // the graph the run works on now
	Head        string // the integration head per the log
	Merged      map[int]LevelMerged
	// Schedule is the schedule the run works with (config.Schedules):
	// the one it started with, or the one a resume moved it to.
	Schedule string
	// Batches are the DAG schedule's merges, in order.
	Batches     []BatchMerged
	FailedLevel *LevelFailed
	Tasks       map[string]*TaskState
	Order       []string // task ids in first-seen order
	Gates       []GateFinished
	// GateRefused are the indexes in Gates of gate runs whose merge did
	// not happen (the level or batch failed them, or another try of the
	// batch merged instead); openGates those whose merge is not decided.
	GateRefused map[int]bool
	openGates   []int
	// Projection is the last recorded projection (run_projected).
	Projection *Projection
	Finished   *RunFinished
	Stopped    *RunStopped
	Resumes    int
	Workers    int // as of the last start or resume
	CostUSD    float64
	LastEvent  time.Time
	// MergeCount counts level_merged events per task: more than one would
	// mean a task merged twice.
	MergeCount map[string]int
	// Rejected lists events of the log that the state machine refused
	// (Replay goes on past them; the coordinator never writes one).
	Rejected []error
	// The governor's last reported state.
	Breaker      string
	BreakerOpens int
	Zone         string
	Concurrency  int
	PausedUntil  string
	Pauses       int
	// ResetWait is the last wait for a usage limit's reset (reset_wait).
	ResetWait *ResetWait
}

// NewState is the state of a log with no events.
func NewState() *State {
	return &State{Merged: map[int]LevelMerged{}, Tasks: map[string]*TaskState{}, MergeCount: map[string]int{}, GateRefused: map[int]bool{}}
}

// Task returns the task's state; a task the log never named is pending.
func (s *State) Task(id string) TaskState {
	if t := s.Tasks[id]; t != nil {
		return *t
	}
	return TaskState{ID: id, Status: StatusPending}
}

func (s *State) task(id string) *TaskState {
	t := s.Tasks[id]
	if t == nil {
		t = &TaskState{ID: id, Status: StatusPending}
		s.Tasks[id] = t
		s.Order = append(s.Order, id)
	}
	return t
}

// Replay folds a run's events into its state. Events the state machine
// refuses are kept in Rejected and skipped; unknown event types are skipped,
// so an older zerg can read the parts of a newer log it knows.
func Replay(events []eventlog.Event) *State {
	s := NewState()
	for _, e := range events {
		if err := s.Apply(e); err != nil {
			s.Rejected = append(s.Rejected, fmt.Errorf("event %d: %w", e.Seq, err))
		}
	}
	return s
}

// ErrBadEvent marks an event whose data cannot be decoded.
var ErrBadEvent = errors.New("malformed event")

// Apply folds one event into the state: the single definition of what each
// event means, for replay and for the live coordinator alike. An event that
// would make an illegal transition is refused with a *TransitionError and
// changes nothing.
func (s *State) Apply(e eventlog.Event) error {
	if err := s.check(e); err != nil {
		return err
	}
	s.LastEvent = e.Time
	s.apply(e)
	return nil
}

// Check reports whether Apply would accept the event, without applying it.
func (s *State) Check(e eventlog.Event) error { return s.check(e) }

// check validates an event against the transition table.
func (s *State) check(e eventlog.Event) error {
	move := func(id string, to Status) error {
		from := s.Task(id).Status
		if !CanTransition(e.Type, from, to) {
			return &TransitionError{Event: e.Type, Task: id, From: from, To: to}
		}
		return nil
	}
	decode := func(v any) error {
		if err := e.Decode(v); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrBadEvent, e.Type, err)
		}
		return nil
	}
	switch e.Type {
	case EvRunStarted:
		if s.Started != nil {
			return errors.New("run_started: the run has started already")
		}
		return decode(&RunStarted{})
	case EvLevelStarted:
		var d LevelStarted
		if err := decode(&d); err != nil {
			return err
		}
		for _, id := range d.Tasks {
			if err := move(id, StatusReady); err != nil {
				return err
			}
		}
	case EvAttemptStarted:
		if err := decode(&AttemptStarted{}); err != nil {
			return err
		}
		return move(e.Task, StatusRunning)
	case EvAttemptPIDs:
		if t := s.Tasks[e.Task]; t == nil || t.Open == nil || t.Open.Number != e.Attempt {
			return &TransitionError{Event: e.Type, Task: e.Task, From: s.Task(e.Task).Status}
		}
	case EvAttemptVerifying:
		return move(e.Task, StatusVerifying)
	case EvAttemptFinished:
		var d AttemptFinished
		if err := decode(&d); err != nil {
			return err
		}
		if t := s.Tasks[e.Task]; t == nil || t.Open == nil || t.Open.Number != e.Attempt {
			return &TransitionError{Event: e.Type, Task: e.Task, From: s.Task(e.Task).Status}
		}
		return move(e.Task, finishedStatus(d.Class))
	case EvTaskFailed:
		return move(e.Task, StatusFailed)
	case EvTaskScheduled:
		if err := decode(&TaskScheduled{}); err != nil {
			return err
		}
		return move(e.Task, StatusReady)
	case EvBatchMerged:
		var d BatchMerged
		if err := decode(&d); err != nil {
			return err
		}
		for _, id := range d.Tasks {
			if err := move(id, StatusMerged); err != nil {
				return err
			}
		}
	case EvTaskMergeFailed:
		if err := decode(&TaskMergeFailed{}); err != nil {
			return err
		}
		return move(e.Task, StatusRetryWait)
	case EvTaskRequeued:
		return move(e.Task, StatusPending)
	case EvTaskBlocked:
		return move(e.Task, StatusBlocked)
	case EvLevelMerged:
		var d LevelMerged
		if err := decode(&d); err != nil {
			return err
		}
		for _, id := range d.Tasks {
			if err := move(id, StatusMerged); err != nil {
				return err
			}
		}
	case EvGraphChanged:
		var d GraphChanged
		if err := decode(&d); err != nil {
			return err
		}
		for _, c := range d.Changed {
			if st := s.Task(c.Task).Status; st != StatusPending {
				if err := move(c.Task, StatusPending); err != nil {
					return err
				}
			}
		}
		for _, id := range d.Removed {
			if st := s.Task(id).Status; st == StatusMerged || st.Active() {
				return &TransitionError{Event: e.Type, Task: id, From: st}
			}
		}
	case EvRunProjected:
		if s.Started == nil {
			return errors.New("run_projected: the run has not started")
		}
		return decode(&Projection{})
	case EvRunStopped, EvRunResumed, EvRunFinished:
		for _, t := range s.Tasks {
			if t.Status.Active() {
				return &TransitionError{Event: e.Type, Task: t.ID, From: t.Status}
			}
		}
	}
	return nil
}

// finishedStatus is where an attempt of the class leaves its task: only a
// success commits; every failure waits for the retry policy's decision.
func finishedStatus(class outcome.Class) Status {
	if class == outcome.Success {
		return StatusCommitted
	}
	return StatusRetryWait
}

func (s *State) apply(e eventlog.Event) {
	switch e.Type {
	case EvRunStarted:
		var d RunStarted
		_ = e.Decode(&d)
		s.Started, s.StartedAt, s.Head, s.GraphSHA256, s.Workers = &d, e.Time, d.Base, d.GraphSHA256, d.Workers
		s.Schedule = d.Schedule
	case EvRunResumed:
		var d RunResumed
		if e.Decode(&d) == nil && d.Workers > 0 {
			s.Workers = d.Workers
		}
		if d.Schedule != "" {
			s.Schedule = d.Schedule
		}
		s.Resumes++
		// A wait for a reset ended with the coordinator that waited.
		s.Finished, s.Stopped, s.FailedLevel, s.ResetWait = nil, nil, nil, nil
		s.moveAll(e.Type, StatusPending)
	case EvGraphChanged:
		var d GraphChanged
		_ = e.Decode(&d)
		s.GraphSHA256 = d.GraphSHA256
		for _, c := range d.Changed {
			t := s.task(c.Task)
			t.Status, t.TaskFailures, t.InfraFailures, t.Commit, t.CommitBase, t.Diagnosis = StatusPending, 0, 0, "", "", ""
			t.Hypothesis, t.DiagnosedAttempt, t.GateOutput, t.RefusedWrites = nil, 0, "", nil
		}
		for _, id := range d.Removed {
			delete(s.Tasks, id)
			s.Order = slices.DeleteFunc(s.Order, func(o string) bool { return o == id })
		}
	case EvIntegrationAdopted:
		var d IntegrationAdopted
		_ = e.Decode(&d)
		s.Head = d.To
	case EvLevelStarted:
		var d LevelStarted
		_ = e.Decode(&d)
		for _, id := range d.Tasks {
			t := s.task(id)
			t.unblock(StatusReady)
			t.Level, t.Status = d.Level, StatusReady
		}
		if s.FailedLevel != nil && s.FailedLevel.Level == d.Level {
			s.FailedLevel = nil
		}
	case EvAttemptStarted:
		var d AttemptStarted
		_ = e.Decode(&d)
		t := s.task(e.Task)
		t.Level = d.Level
		t.Attempts = max(t.Attempts, e.Attempt)
		t.Status = StatusRunning
		t.Open = &OpenAttempt{Number: e.Attempt, Base: d.Base, Workspace: d.Workspace, WorkspaceKind: d.WorkspaceKind,
			Branch: d.Branch, Dir: d.Dir, Started: e.Time}
		if t.Started.IsZero() {
			t.Started = e.Time
		}
	case EvAttemptPIDs:
		var d AttemptPIDs
		if e.Decode(&d) == nil {
			t := s.Tasks[e.Task]
			t.Open.PIDs, t.Open.Marker = d.PIDs, d.Marker
		}
	case EvAttemptVerifying:
		s.task(e.Task).Status = StatusVerifying
	case EvAttemptFinished:
		var d AttemptFinished
		_ = e.Decode(&d)
		t := s.task(e.Task)
		var base, branch string
		if t.Open != nil {
			base, branch = t.Open.Base, t.Open.Branch
		}
		t.Open = nil
		t.CostUSD += d.CostUSD
		t.Tokens += d.Tokens
		t.WorkerTime += time.Duration(d.WorkerMS) * time.Millisecond
		s.CostUSD += d.CostUSD
		t.Reason, t.Detail, t.LastClass = d.Reason, d.Detail, d.Class
		t.RefusedWrites = d.RefusedWrites
		t.Status = finishedStatus(d.Class)
		switch d.Class {
		case outcome.Success:
			t.Commit, t.CommitBase, t.Branch = d.Commit, base, branch
		case outcome.Task:
			t.TaskFailures++
			t.Diagnosis, t.Hypothesis, t.DiagnosedAttempt, t.GateOutput = d.Detail, d.Diagnosis, e.Attempt, ""
		case outcome.Infra:
			t.InfraFailures++
		}
	case EvTaskFailed:
		var d TaskFailed
		t := s.task(e.Task)
		if e.Decode(&d) == nil {
			t.Reason, t.Detail = d.Reason, d.Detail
		}
		t.Status = StatusFailed
	case EvTaskRequeued:
		t := s.task(e.Task)
		t.unblock(StatusPending)
		t.Status, t.TaskFailures, t.InfraFailures, t.Commit, t.CommitBase, t.RefusedWrites = StatusPending, 0, 0, "", "", nil
		if s.FailedLevel != nil && s.FailedLevel.Level == t.Level {
			s.FailedLevel = nil
		}
	case EvTaskBlocked:
		var d TaskBlocked
		t := s.task(e.Task)
		if e.Decode(&d) == nil {
			t.Reason, t.Detail = "blocked", d.Reason
		}
		t.Status = StatusBlocked
	case EvLevelMerged:
		var d LevelMerged
		_ = e.Decode(&d)
		s.Merged[d.Level] = d
		s.Head = d.Head
		s.decideGates(d.Head)
		for _, id := range d.Tasks {
			t := s.task(id)
			t.Status, t.Level, t.MergedHead = StatusMerged, d.Level, d.Head
			s.MergeCount[id]++
		}
	case EvTaskScheduled:
		var d TaskScheduled
		_ = e.Decode(&d)
		t := s.task(e.Task)
		t.unblock(StatusReady)
		t.Level, t.Status = d.Level, StatusReady
	case EvBatchMerged:
		var d BatchMerged
		_ = e.Decode(&d)
		s.Batches = append(s.Batches, d)
		s.Head = d.Head
		s.decideGates(d.Head)
		for _, id := range d.Tasks {
			t := s.task(id)
			t.Status, t.MergedHead = StatusMerged, d.Head
			s.MergeCount[id]++
		}
	case EvTaskMergeFailed:
		var d TaskMergeFailed
		_ = e.Decode(&d)
		s.decideGates("")
		t := s.task(e.Task)
		// A task failure like a failed verification: it spends a retry and
		// the retry prompt says what broke, from the gate's output; the
		// attempt's work (its diff) is what the gate ran on.
		t.Status, t.TaskFailures, t.LastClass = StatusRetryWait, t.TaskFailures+1, outcome.Task
		t.Reason, t.Detail, t.Diagnosis, t.GateOutput = d.Reason, d.Detail, d.Detail, d.Output
		t.Hypothesis, t.DiagnosedAttempt = nil, t.Attempts
		t.Commit, t.CommitBase = "", ""
	case EvLevelFailed:
		var d LevelFailed
		if e.Decode(&d) == nil {
			s.FailedLevel = &d
		}
		s.decideGates("")
	case EvRunProjected:
		var d Projection
		if e.Decode(&d) == nil {
			s.Projection = &d
		}
	case EvGateFinished:
		var d GateFinished
		if e.Decode(&d) == nil {
			s.openGates = append(s.openGates, len(s.Gates))
			s.Gates = append(s.Gates, d)
		}
	case EvRunStopped:
		var d RunStopped
		if e.Decode(&d) == nil {
			s.Stopped = &d
		}
		s.moveAll(e.Type, StatusCancelled)
	case EvBreaker:
		var d BreakerChange
		if e.Decode(&d) == nil {
			s.Breaker = d.State
			if d.State == BreakerOpen {
				s.BreakerOpens++
			}
		}
	case EvZone:
		var d ZoneChange
		if e.Decode(&d) == nil {
			s.Zone = d.Zone
		}
	case EvConcurrency:
		var d ConcurrencyChange
		if e.Decode(&d) == nil {
			s.Concurrency = d.To
		}
	case EvPaused:
		var d LaunchPause
		if e.Decode(&d) == nil {
			s.PausedUntil = d.Until
			s.Pauses++
		}
	case EvResetWait:
		var d ResetWait
		if e.Decode(&d) == nil {
			s.ResetWait = &d
		}
	case EvRunFinished:
		var d RunFinished
		if e.Decode(&d) == nil {
			s.Finished = &d
		}
		s.moveAll(e.Type, StatusCancelled)
	}
}

// decideGates settles the gate runs since the last merge or refusal: those
// on head (the merge that happened) stand, the others were refused ("":
// every one of them).
func (s *State) decideGates(head string) {
	if s.GateRefused == nil {
		s.GateRefused = map[int]bool{}
	}
	for _, i := range s.openGates {
		if head == "" || s.Gates[i].Head != head {
			s.GateRefused[i] = true
		}
	}
	s.openGates = nil
}

// moveAll applies a run-level event to every task the transition table
// lets it move: a stop or the end cancels what waited for a worker, a
// resume gives the scheduler back what nobody will launch otherwise.
func (s *State) moveAll(typ string, to Status) {
	for _, t := range s.Tasks {
		if CanTransition(typ, t.Status, to) {
			t.unblock(to)
			t.Status = to
		}
	}
}

// unblock forgets why a blocked task was blocked once it moves on: a
// resume gives it back to the scheduler, and "level 1 failed" would be
// stale once level 1 merged.
func (t *TaskState) unblock(to Status) {
	if t.Status == StatusBlocked && to != StatusBlocked && t.Reason == "blocked" {
		t.Reason, t.Detail = "", ""
	}
}

// OpenAttempts returns the attempts the log says are running, by task id.
func (s *State) OpenAttempts() map[string]OpenAttempt {
	out := map[string]OpenAttempt{}
	for id, t := range s.Tasks {
		if t.Open != nil {
			out[id] = *t.Open
		}
	}
	return out
}

// RecordedSchedule is the schedule the log says the run works with; a log
// from before the choice existed ran levels.
func (st *State) RecordedSchedule() string {
	if st.Schedule == "" {
		return config.ScheduleLevel
	}
	return st.Schedule
}
