package runstate

import (
	"testing"
	"time"
)

func TestRunStateWords(t *testing.T) {
	for s, want := range map[RunState]string{
		RunDelivered:    "DELIVERED",
		RunNotDelivered: "NOT DELIVERED",
		RunHalted:       "stopped",
		RunDead:         "interrupted (its coordinator died)",
		RunNotStarted:   "not started",
		RunRunning:      string(RunRunning),
	} {
		if got := s.Words(); got != want {
			t.Errorf("%s.Words() = %q, want %q", s, got, want)
		}
	}
}

// TestViewWords: a delivery with refused writes never reads as a plain
// DELIVERED.
func TestViewWords(t *testing.T) {
	for _, c := range []struct {
		v    View
		want string
	}{
		{View{State: RunDelivered}, "DELIVERED"},
		{View{State: RunDelivered, RefusedWrites: 1}, "DELIVERED with 1 refused write"},
		{View{State: RunDelivered, RefusedWrites: 3}, "DELIVERED with 3 refused writes"},
		{View{State: RunHalted, RefusedWrites: 3}, "stopped"},
	} {
		if got := c.v.Words(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.v, got, c.want)
		}
	}
}

func TestStatusWord(t *testing.T) {
	if got := (TaskView{Status: StatusRunning, Abandoned: &AbandonedView{Attempt: 1}}).StatusWord(); got != "interrupted" {
		t.Errorf("abandoned: %q", got)
	}
	if got := (TaskView{Status: StatusFailed}).StatusWord(); got != string(StatusFailed) {
		t.Errorf("failed: %q", got)
	}
}

// TestGateFailedCommittedLevel: only a required gate's failure on a level
// whose tasks are all committed is one "zerg retry" cannot help.
func TestGateFailedCommittedLevel(t *testing.T) {
	failed := []LevelView{{Level: 1, State: "merged"}, {Level: 2, State: "failed", Reason: "gate test failed"}}
	gate := func(name string, level, exit int, required bool) GateView {
		return GateView{GateFinished: GateFinished{Level: level, Name: name, Exit: exit, Required: required}}
	}
	committed := []TaskView{{ID: "A", Level: 1, Status: StatusMerged}, {ID: "B", Level: 2, Status: StatusCommitted}}
	for _, c := range []struct {
		name  string
		v     View
		level int
		gate  string
		ok    bool
	}{
		{"committed level, required gate", View{Levels: failed, Tasks: committed,
			Gates: []GateView{gate("lint", 2, 1, false), gate("test", 2, 1, true), gate("vet", 1, 1, true)}}, 2, "test", true},
		{"the last required failure counts", View{Levels: failed, Tasks: committed,
			Gates: []GateView{gate("test", 2, 1, true), gate("e2e", 2, 2, true)}}, 2, "e2e", true},
		{"a task failed", View{Levels: failed, Tasks: append([]TaskView{{ID: "C", Level: 2, Status: StatusFailed}}, committed...),
			Gates: []GateView{gate("test", 2, 1, true)}}, 0, "", false},
		{"only an optional gate failed", View{Levels: failed, Tasks: committed,
			Gates: []GateView{gate("lint", 2, 1, false)}}, 0, "", false},
		{"not a gate's failure", View{Levels: []LevelView{{Level: 2, State: "failed", Reason: "task B failed"}}, Tasks: committed,
			Gates: []GateView{gate("test", 2, 1, true)}}, 0, "", false},
	} {
		l, g, ok := c.v.GateFailedCommittedLevel()
		if l != c.level || g != c.gate || ok != c.ok {
			t.Errorf("%s: %d %q %v, want %d %q %v", c.name, l, g, ok, c.level, c.gate, c.ok)
		}
	}
}

// TestSeenAt: today's time of day alone, another day's with its date.
func TestSeenAt(t *testing.T) {
	now := time.Date(2026, 11, 24, 15, 0, 0, 0, time.Local)
	if got := SeenAt(now.Add(-2*time.Hour), now); got != "13:00:00" {
		t.Errorf("today: %q", got)
	}
	if got := SeenAt(now.Add(-24*time.Hour), now); got != "2026-11-23 15:00:00" {
		t.Errorf("yesterday: %q", got)
	}
}
