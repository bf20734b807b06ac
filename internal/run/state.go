package run

import (
	"slices"
	"time"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/eventlog"
)

// Task statuses, as shown by status and the report.
const (
	StatusPending   = "pending"
	StatusRunning   = "running"
	StatusRetryWait = "retry_wait"
	StatusCommitted = "committed"
	StatusMerged    = "merged"
	StatusFailed    = "failed"
	StatusBlocked   = "blocked"
)

// TaskState is one task as rebuilt from the log.
type TaskState struct {
	ID            string `json:"id"`
	Level         int    `json:"level"`
	Status        string `json:"status"`
	Attempts      int    `json:"attempts"`
	TaskFailures  int    `json:"task_failures"`  // count against the retry budget
	InfraFailures int    `json:"infra_failures"` // do not
	Reason        string `json:"reason,omitempty"`
	Detail        string `json:"detail,omitempty"`
	LastClass     string `json:"last_class,omitempty"` // class of the last finished attempt
	// Diagnosis is the detail of the last task-class failure: what the retry
	// prompt tells the model, even when infra failures came in between.
	Diagnosis  string        `json:"diagnosis,omitempty"`
	Commit     string        `json:"commit,omitempty"` // the committed attempt's commit
	CommitBase string        `json:"-"`                // the head it was built on
	Branch     string        `json:"branch,omitempty"`
	CostUSD    float64       `json:"cost_usd"`
	Tokens     int64         `json:"tokens"`
	WorkerTime time.Duration `json:"-"`
	Started    time.Time     `json:"started,omitempty"`
	// The open attempt, if the log says one is running.
	Open *OpenAttempt `json:"open,omitempty"`
}

// OpenAttempt is an attempt with a start and no finish.
type OpenAttempt struct {
	Number    int           `json:"number"`
	Base      string        `json:"base"`
	Workspace string        `json:"workspace"`
	Branch    string        `json:"branch"`
	Dir       string        `json:"dir"`
	PIDs      []claude.Proc `json:"pids,omitempty"`
	Marker    string        `json:"marker,omitempty"`
	Started   time.Time     `json:"started"`
}

// State is a run rebuilt by replaying its log.
type State struct {
	Started     *RunStarted
	StartedAt   time.Time
	Head        string // the integration head per the log
	Merged      map[int]LevelMerged
	FailedLevel *LevelFailed
	Tasks       map[string]*TaskState
	Order       []string // task ids in first-seen order
	Gates       []GateFinished
	Finished    *RunFinished
	Stopped     *RunStopped
	Resumes     int
	CostUSD     float64
	LastEvent   time.Time
	// MergeCount counts level_merged events per task: more than one would
	// mean a task merged twice.
	MergeCount map[string]int
	// The governor's last reported state.
	Breaker      string
	BreakerOpens int
	Zone         string
	Concurrency  int
	PausedUntil  string
	Pauses       int
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

// Replay folds a run's events into its state. Unknown event types are
// skipped, so old zergs can read newer logs' known parts.
func Replay(events []eventlog.Event) *State {
	s := &State{Merged: map[int]LevelMerged{}, Tasks: map[string]*TaskState{}, MergeCount: map[string]int{}}
	for _, e := range events {
		s.Apply(e)
	}
	return s
}

// Apply folds one event into the state: the single definition of what each
// event means, for replay and for the live coordinator alike.
func (s *State) Apply(e eventlog.Event) {
	s.LastEvent = e.Time
	{
		switch e.Type {
		case EvRunStarted:
			var d RunStarted
			if e.Decode(&d) == nil {
				s.Started, s.StartedAt, s.Head = &d, e.Time, d.Base
			}
		case EvRunResumed:
			s.Resumes++
			s.Finished, s.Stopped = nil, nil
		case EvAttemptStarted:
			var d AttemptStarted
			if e.Decode(&d) != nil {
				return
			}
			t := s.task(e.Task)
			t.Level = d.Level
			t.Attempts = max(t.Attempts, e.Attempt)
			t.Status = StatusRunning
			t.Open = &OpenAttempt{Number: e.Attempt, Base: d.Base, Workspace: d.Workspace, Branch: d.Branch, Dir: d.Dir, Started: e.Time}
			if t.Started.IsZero() {
				t.Started = e.Time
			}
		case EvAttemptPIDs:
			var d AttemptPIDs
			if t := s.Tasks[e.Task]; t != nil && t.Open != nil && e.Decode(&d) == nil {
				t.Open.PIDs, t.Open.Marker = d.PIDs, d.Marker
			}
		case EvAttemptFinished:
			var d AttemptFinished
			if e.Decode(&d) != nil {
				return
			}
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
			switch d.Class {
			case "success":
				t.Status, t.Commit, t.CommitBase, t.Branch = StatusCommitted, d.Commit, base, branch
			case "task":
				t.TaskFailures++
				t.Status = StatusRetryWait
				t.Diagnosis = d.Detail
			default:
				t.InfraFailures++
				t.Status = StatusRetryWait
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
			t.Status, t.TaskFailures, t.Commit = StatusPending, 0, ""
			if s.FailedLevel != nil && s.FailedLevel.Level == t.Level {
				s.FailedLevel = nil
			}
		case EvLevelMerged:
			var d LevelMerged
			if e.Decode(&d) != nil {
				return
			}
			s.Merged[d.Level] = d
			s.Head = d.Head
			for _, id := range d.Tasks {
				s.task(id).Status = StatusMerged
				s.MergeCount[id]++
			}
		case EvLevelFailed:
			var d LevelFailed
			if e.Decode(&d) == nil {
				s.FailedLevel = &d
			}
		case EvGateFinished:
			var d GateFinished
			if e.Decode(&d) == nil {
				s.Gates = append(s.Gates, d)
			}
		case EvRunStopped:
			var d RunStopped
			if e.Decode(&d) == nil {
				s.Stopped = &d
			}
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
		case EvRunFinished:
			var d RunFinished
			if e.Decode(&d) == nil {
				s.Finished = &d
			}
		}
	}
}

// MergedLevels returns the merged level numbers in order.
func (s *State) MergedLevels() []int {
	var ls []int
	for l := range s.Merged {
		ls = append(ls, l)
	}
	slices.Sort(ls)
	return ls
}
