package runstate

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/outcome"
)

// stateWith puts task T in the given status by legal events only.
func stateWith(t *testing.T, status Status) *State {
	t.Helper()
	st := NewState()
	apply := func(typ string, n int, data any) {
		t.Helper()
		e, err := eventlog.NewEvent(typ, "T", n, data)
		if err != nil {
			t.Fatal(err)
		}
		if typ == EvLevelStarted || typ == EvLevelMerged || typ == EvRunStopped || typ == EvRunStarted {
			e.Task = ""
		}
		if err := st.Apply(e); err != nil {
			t.Fatalf("reaching %s: %v", status, err)
		}
	}
	apply(EvRunStarted, 0, RunStarted{Feature: "f", Base: "b"})
	ready := func() { apply(EvLevelStarted, 0, LevelStarted{Level: 1, Base: "b", Tasks: []string{"T"}}) }
	running := func() { ready(); apply(EvAttemptStarted, 1, AttemptStarted{Level: 1, Base: "b"}) }
	retryWait := func() { running(); apply(EvAttemptFinished, 1, AttemptFinished{Class: outcome.Task}) }
	switch status {
	case StatusPending:
	case StatusReady:
		ready()
	case StatusRunning:
		running()
	case StatusVerifying:
		running()
		apply(EvAttemptVerifying, 1, nil)
	case StatusCommitted:
		running()
		apply(EvAttemptFinished, 1, AttemptFinished{Class: outcome.Success, Commit: "c"})
	case StatusMerged:
		running()
		apply(EvAttemptFinished, 1, AttemptFinished{Class: outcome.Success, Commit: "c"})
		apply(EvLevelMerged, 0, LevelMerged{Level: 1, Head: "h", Tasks: []string{"T"}})
	case StatusRetryWait:
		retryWait()
	case StatusFailed:
		retryWait()
		apply(EvTaskFailed, 1, TaskFailed{Reason: "x"})
	case StatusBlocked:
		apply(EvTaskBlocked, 0, TaskBlocked{Reason: "level 0 failed"})
	case StatusCancelled:
		ready()
		apply(EvRunStopped, 0, RunStopped{Reason: "test"})
	default:
		t.Fatalf("no way to %s", status)
	}
	if got := st.Task("T").Status; got != status {
		t.Fatalf("reached %s, want %s", got, status)
	}
	return st
}

// probe is an event that moves task T, with the status it should lead to.
type probe struct {
	name string
	typ  string
	to   Status
	make func(st *State) eventlog.Event
}

func probes(t *testing.T) []probe {
	ev := func(typ, task string, n int, data any) eventlog.Event {
		e, err := eventlog.NewEvent(typ, task, n, data)
		if err != nil {
			t.Fatal(err)
		}
		e.Time = time.Now()
		return e
	}
	next := func(st *State) int { return st.Task("T").Attempts + 1 }
	cur := func(st *State) int { return max(st.Task("T").Attempts, 1) }
	return []probe{
		{"level_started", EvLevelStarted, StatusReady, func(st *State) eventlog.Event {
			return ev(EvLevelStarted, "", 0, LevelStarted{Level: 1, Tasks: []string{"T"}})
		}},
		{"attempt_started", EvAttemptStarted, StatusRunning, func(st *State) eventlog.Event {
			return ev(EvAttemptStarted, "T", next(st), AttemptStarted{Level: 1})
		}},
		{"attempt_verifying", EvAttemptVerifying, StatusVerifying, func(st *State) eventlog.Event { return ev(EvAttemptVerifying, "T", cur(st), nil) }},
		{"attempt_finished success", EvAttemptFinished, StatusCommitted, func(st *State) eventlog.Event {
			return ev(EvAttemptFinished, "T", cur(st), AttemptFinished{Class: outcome.Success})
		}},
		{"attempt_finished task", EvAttemptFinished, StatusRetryWait, func(st *State) eventlog.Event {
			return ev(EvAttemptFinished, "T", cur(st), AttemptFinished{Class: outcome.Task})
		}},
		{"attempt_finished infra", EvAttemptFinished, StatusRetryWait, func(st *State) eventlog.Event {
			return ev(EvAttemptFinished, "T", cur(st), AttemptFinished{Class: outcome.Infra})
		}},
		{"task_failed", EvTaskFailed, StatusFailed, func(st *State) eventlog.Event { return ev(EvTaskFailed, "T", 0, TaskFailed{}) }},
		{"task_requeued", EvTaskRequeued, StatusPending, func(st *State) eventlog.Event { return ev(EvTaskRequeued, "T", 0, nil) }},
		{"task_blocked", EvTaskBlocked, StatusBlocked, func(st *State) eventlog.Event { return ev(EvTaskBlocked, "T", 0, TaskBlocked{}) }},
		{"level_merged", EvLevelMerged, StatusMerged, func(st *State) eventlog.Event {
			return ev(EvLevelMerged, "", 0, LevelMerged{Level: 1, Head: "h2", Tasks: []string{"T"}})
		}},
		{"graph_changed", EvGraphChanged, StatusPending, func(st *State) eventlog.Event {
			return ev(EvGraphChanged, "", 0, GraphChanged{Changed: []TaskChange{{Task: "T", Fields: []string{"files.create"}}}})
		}},
	}
}

// TestEveryTransition applies every task event to a task in every status:
// exactly the transitions of the table are accepted, and a refused event
// changes nothing.
func TestEveryTransition(t *testing.T) {
	for _, from := range Statuses {
		for _, p := range probes(t) {
			t.Run(fmt.Sprintf("%s/%s", from, p.name), func(t *testing.T) {
				st := stateWith(t, from)
				e := p.make(st)
				legal := CanTransition(p.typ, from, p.to)
				if p.typ == EvGraphChanged && from == StatusPending {
					legal = true // already where a change puts it
				}
				before := TaskState{}
				if st.Tasks["T"] != nil {
					before = *st.Tasks["T"]
				}
				err := st.Apply(e)
				if legal {
					if err != nil {
						t.Fatalf("legal transition refused: %v", err)
					}
					if got := st.Task("T").Status; got != p.to {
						t.Errorf("status %s, want %s", got, p.to)
					}
					return
				}
				var te *TransitionError
				if !errors.As(err, &te) {
					t.Fatalf("illegal %s → %s accepted (err %v)", from, p.to, err)
				}
				after := TaskState{}
				if st.Tasks["T"] != nil {
					after = *st.Tasks["T"]
				}
				if !reflect.DeepEqual(before, after) {
					t.Errorf("a refused event changed the task: %+v → %+v", before, after)
				}
			})
		}
	}
}

// Replay skips an event the state machine refuses and says so.
func TestReplayReportsRejectedEvents(t *testing.T) {
	e1, _ := eventlog.NewEvent(EvRunStarted, "", 0, RunStarted{Feature: "f", Base: "b"})
	e2, _ := eventlog.NewEvent(EvTaskFailed, "T", 0, TaskFailed{}) // pending → failed: illegal
	e2.Seq = 2
	st := Replay([]eventlog.Event{e1, e2})
	if len(st.Rejected) != 1 || st.Task("T").Status != StatusPending {
		t.Errorf("rejected %v, T %s", st.Rejected, st.Task("T").Status)
	}
}

// The run-level events refuse to run over an attempt in flight.
func TestStopAndResumeNeedNoAttemptInFlight(t *testing.T) {
	for _, typ := range []string{EvRunStopped, EvRunResumed, EvRunFinished} {
		st := stateWith(t, StatusRunning)
		e, _ := eventlog.NewEvent(typ, "", 0, map[string]string{})
		if err := st.Apply(e); err == nil {
			t.Errorf("%s accepted with an attempt running", typ)
		}
	}
}

// Every status can be reached, and every status but merged can be left.
func TestTransitionTableIsComplete(t *testing.T) {
	reach, leave := map[Status]bool{StatusPending: true}, map[Status]bool{}
	for _, tr := range transitions {
		for _, s := range tr.to {
			reach[s] = true
		}
		for _, s := range tr.from {
			leave[s] = true
		}
	}
	for _, s := range Statuses {
		if !reach[s] {
			t.Errorf("%s cannot be reached", s)
		}
		if !leave[s] && s != StatusMerged {
			t.Errorf("%s cannot be left", s)
		}
	}
	if leave[StatusMerged] {
		t.Error("merged work can be undone by an event")
	}
}
