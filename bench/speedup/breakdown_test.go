package main

import (
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/mockapi"
	"github.com/zergrush/zerg/internal/runstate"
)

func TestBreakDownSaysWhereTheTimeWent(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(sec))) }
	ok := func(prep, launch, verify, commit int64) runstate.AttemptFinished {
		return runstate.AttemptFinished{Class: "success", Phases: &runstate.PhasesMS{Prepare: prep, Launch: launch, Verify: verify, Commit: commit}}
	}
	ts := []task{{ID: "a", Level: 1}, {ID: "b", Level: 1}}
	think := map[string]time.Duration{"a": 4 * sec, "b": 8 * sec}
	evs := []eventlog.Event{
		ev(t, runstate.EvLevelStarted, "", 0, at(0), runstate.LevelStarted{Level: 1, Tasks: []string{"a", "b"}}),
		ev(t, runstate.EvAttemptStarted, "a", 1, at(0.5), nil),
		ev(t, runstate.EvAttemptStarted, "b", 1, at(0.5), nil),
		// a: prepare 1 s, launch 6 s (first request 1.5 s in), verify 0.5 s, commit 0.5 s: ends at 8.5 + 0.5 other.
		ev(t, runstate.EvAttemptFinished, "a", 1, at(9), ok(1000, 6000, 500, 500)),
		// b: prepare 1 s, launch 10 s, verify 1 s, commit 1 s: ends at 13.5.
		ev(t, runstate.EvAttemptFinished, "b", 1, at(13.5), ok(1000, 10000, 1000, 1000)),
		ev(t, runstate.EvGateFinished, "", 0, at(15), runstate.GateFinished{Level: 1, Name: "g", DurationMS: 1200}),
		ev(t, runstate.EvLevelMerged, "", 0, at(16), runstate.LevelMerged{Level: 1, Tasks: []string{"a", "b"}}),
	}
	reqs := []mockapi.Request{
		{Task: "a", Kind: mockapi.KindMain, Time: at(3)},    // 1.5 s after a's launch at 1.5
		{Task: "a", Kind: mockapi.KindMain, Time: at(6)},    // a later turn: not the first
		{Task: "b", Kind: mockapi.KindTitle, Time: at(1.6)}, // not the model's turn
		{Task: "b", Kind: mockapi.KindMain, Time: at(2.5)},  // 1 s after b's launch
	}
	b := breakDown(evs, reqs, ts, think, 4)
	if len(b.Attempts) != 2 || len(b.Levels) != 1 {
		t.Fatalf("breakdown %+v, want 2 attempts and 1 level", b)
	}
	a := b.Attempts[0]
	want := attemptTime{Task: "a", Level: 1, Total: 8500 * time.Millisecond, Prepare: sec, Start: 1500 * time.Millisecond,
		Think: 4 * sec, Turns: 500 * time.Millisecond, Verify: 500 * time.Millisecond, Commit: 500 * time.Millisecond, Other: 500 * time.Millisecond}
	if a != want {
		t.Errorf("attempt a\n got %+v\nwant %+v", a, want)
	}
	if b.Attempts[1].Start != sec || b.Attempts[1].Turns != sec {
		t.Errorf("attempt b: start %v turns %v, want 1s and 1s (10 s launch − 1 s start − 8 s think)", b.Attempts[1].Start, b.Attempts[1].Turns)
	}
	l := b.Levels[0]
	wantL := levelTime{Level: 1, Wall: 16 * sec, Model: 8 * sec, ToFirst: 500 * time.Millisecond, Slowest: 13 * sec,
		Wait: 2250 * time.Millisecond, Gates: 1200 * time.Millisecond, Merge: 1300 * time.Millisecond}
	if l != wantL {
		t.Errorf("level\n got %+v\nwant %+v", l, wantL)
	}
	if l.Beyond() != 8*sec {
		t.Errorf("beyond the model %v, want 8s", l.Beyond())
	}
	var out strings.Builder
	writeBreakdown(&out, []shapeRun{{Shape: shape{Name: "3x4"}, Rushes: []rushResult{{Schedule: "level", Workers: 4, Breakdown: &b}}}})
	if !strings.Contains(out.String(), "| 3x4 | 4 | 1 | 16.00 | 8.00 | 8.00 |") {
		t.Errorf("report lacks the level's row:\n%s", out.String())
	}

	// One worker does the level's tasks one after the other: its model
	// time is their sum (12 s), not the longest (8 s).
	if l := breakDown(evs, reqs, ts, think, 1).Levels[0]; l.Model != 12*sec {
		t.Errorf("one worker: model %v, want 12s", l.Model)
	}

	// Control: without the request log the worker's start cannot be told
	// from its turns, and the breakdown must not make it up.
	b = breakDown(evs, nil, ts, think, 4)
	if a := b.Attempts[0]; a.Start != 0 || a.Turns != 2*sec {
		t.Errorf("without requests: start %v turns %v, want 0 and 2s", a.Start, a.Turns)
	}
}

func TestCPUBusyFromProcStat(t *testing.T) {
	before, err := parseCPU("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\n")
	if err != nil {
		t.Fatal(err)
	}
	after, err := parseCPU("cpu  250 0 100 850 100 0 0 0 0 0\n")
	if err != nil {
		t.Fatal(err)
	}
	// 200 busy ticks (user 150, system 50) of 300 (idle 50, iowait 50).
	if got := after.busySince(before); got < 0.666 || got > 0.667 {
		t.Errorf("busy %.3f, want 0.667", got)
	}
	// Control: an idle interval is 0 busy, and a line that is not the cpu
	// total is refused.
	if got := before.busySince(before); got != 0 {
		t.Errorf("no time passed: busy %.3f", got)
	}
	if _, err := parseCPU("intr 1 2 3 4 5 6\n"); err == nil {
		t.Error("a /proc/stat without its cpu line was read")
	}
	if _, err := readCPU(); err != nil {
		t.Logf("this machine's /proc/stat: %v", err)
	}
}
