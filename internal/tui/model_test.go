package tui

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/runstate"
)

// source is a run whose view the test changes under the model.
type source struct {
	mu sync.Mutex
	v  runstate.View
}

func (s *source) set(f func(v *runstate.View)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.v)
}

func (s *source) poll() (runstate.View, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.v
	v.Tasks = append([]runstate.TaskView(nil), s.v.Tasks...)
	return v, nil
}

// running is a run of two levels: level 1 half merged, L1-b running.
func running() *source {
	now := time.Now()
	return &source{v: runstate.View{Feature: "demo", State: runstate.RunRunning, Rehearsal: true, Workers: 2,
		StartedAt: now.Add(-40 * time.Second), CostUSD: 0.0123, Tokens: 5000,
		Coordinator: runstate.CoordinatorView{Alive: true},
		Governor:    &runstate.GovernorSnapshot{Breaker: runstate.BreakerClosed, Zone: runstate.ZoneGreen, Limit: 2, Running: 1},
		Levels: []runstate.LevelView{{Level: 1, State: "running", Tasks: []string{"L1-a", "L1-b"}},
			{Level: 2, State: "pending", Tasks: []string{"L2-c"}}},
		Tasks: []runstate.TaskView{
			{ID: "L1-a", Level: 1, Status: runstate.StatusMerged, EstimateMS: 60_000, WorkerMS: 30_000},
			{ID: "L1-b", Level: 1, Status: runstate.StatusRunning, EstimateMS: 60_000, Attempts: 1,
				Running: &runstate.RunningView{Attempt: 1, Started: now.Add(-5 * time.Second), Turns: 3, Tokens: 2100, LastTool: "Bash"}},
			{ID: "L2-c", Level: 2, Status: runstate.StatusPending, EstimateMS: 120_000},
		}}}
}

func start(t *testing.T, s *source, mode Mode, edit func(*Config)) *teatest.TestModel {
	t.Helper()
	cfg := Config{Mode: mode, Poll: s.poll, Interval: 20 * time.Millisecond,
		Log: func(task string) string { return "== " + task + " attempt 1\n-- worker\n  Bash: make test\n" }}
	if edit != nil {
		edit(&cfg)
	}
	return teatest.NewTestModel(t, New(cfg), teatest.WithInitialTermSize(110, 40))
}

func waitFor(t *testing.T, tm *teatest.TestModel, want ...string) {
	t.Helper()
	var seen bytes.Buffer
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		seen.Write(b)
		for _, w := range want {
			if !bytes.Contains(seen.Bytes(), []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

func outcome(t *testing.T, tm *teatest.TestModel) Outcome {
	t.Helper()
	return tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model).Outcome()
}

// TestViewShowsTheRun: the header with cost, tokens and ETA, a bar per
// level, a row per running worker with its last tool call.
func TestViewShowsTheRun(t *testing.T) {
	tm := start(t, running(), ModeRush, nil)
	waitFor(t, tm, "zerg demo", "running (rehearsal)", "$0.0123", "7.1k tokens", "ETA ",
		"tasks", "1/3 merged", "breaker closed", "backpressure green",
		"level 1", "1/2", "level 2", "0/1", "L1-b", "Bash", "2.1k")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	if o := outcome(t, tm); o != Detached {
		t.Errorf("q: outcome %v, want Detached", o)
	}
}

// TestViewShowsAFailureWithItsDiagnosis: a task that failed and waits for
// its retry is listed with what failed and the diagnosis; the breaker
// opening shows.
func TestViewShowsAFailureWithItsDiagnosis(t *testing.T) {
	s := running()
	tm := start(t, s, ModeRush, nil)
	waitFor(t, tm, "L1-b")
	s.set(func(v *runstate.View) {
		v.Tasks[1].Running, v.Tasks[1].Status, v.Tasks[1].TaskFailures = nil, runstate.StatusRetryWait, 1
		v.Tasks[1].Detail = "verification `make test` failed (exit 2)"
		v.Tasks[1].Diagnosis = &diagnose.Hypothesis{Pattern: "missing-import", Confidence: 0.8,
			Evidence: []string{"undefined: strings.Cut"}, Fix: "import the package"}
		v.Governor = &runstate.GovernorSnapshot{Breaker: runstate.BreakerOpen, Zone: runstate.ZoneRed, Limit: 1, OpenUntil: time.Now().Add(30 * time.Second)}
	})
	waitFor(t, tm, "failures (1)", "failed 1 time(s), now retry_wait", "verification `make test` failed",
		"diagnosis: missing-import (80% sure): undefined: strings.Cut", "fix: import the package", "breaker OPEN for")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	if o := outcome(t, tm); o != Interrupted {
		t.Errorf("ctrl-c: outcome %v, want Interrupted", o)
	}
}

// TestStopAsksFirst: s asks y/n; n goes back; y in a rush ends the view
// with StopRun (the rush stops the run).
func TestStopAsksFirst(t *testing.T) {
	tm := start(t, running(), ModeRush, nil)
	waitFor(t, tm, "L1-b")
	tm.Type("s")
	waitFor(t, tm, "stop the run?")
	tm.Type("n")
	waitFor(t, tm, "q close the view")
	tm.Type("s")
	waitFor(t, tm, "stop the run?")
	tm.Type("y")
	if o := outcome(t, tm); o != StopRun {
		t.Errorf("s y: outcome %v, want StopRun", o)
	}
}

// TestWatchStopCallsStopAndEndsWithTheRun: in a watch, s y asks the
// coordinator to stop (the view goes on), and the view ends by itself once
// the run is no longer running.
func TestWatchStopCallsStopAndEndsWithTheRun(t *testing.T) {
	s := running()
	var stops atomic.Int32
	tm := start(t, s, ModeWatch, func(c *Config) {
		c.Stop = func() error { stops.Add(1); return errors.New("no such process") }
	})
	waitFor(t, tm, "q/ctrl-c quit the watch")
	tm.Type("s")
	waitFor(t, tm, "stop the run?")
	tm.Type("y")
	waitFor(t, tm, "stop failed: no such process")
	if stops.Load() != 1 {
		t.Errorf("Stop called %d times, want 1", stops.Load())
	}
	s.set(func(v *runstate.View) { v.State, v.Coordinator.Alive = runstate.RunHalted, false })
	if o := outcome(t, tm); o != Ended {
		t.Errorf("run stopped: outcome %v, want Ended", o)
	}
}

// TestRushViewEndsOnDone: in a rush the view ends when told, not when a
// poll sees the run end (the report follows it).
func TestRushViewEndsOnDone(t *testing.T) {
	s := running()
	tm := start(t, s, ModeRush, nil)
	waitFor(t, tm, "L1-b")
	s.set(func(v *runstate.View) { v.State = runstate.RunDelivered })
	waitFor(t, tm, "delivered")
	tm.Send(Done{})
	if o := outcome(t, tm); o != Ended {
		t.Errorf("Done: outcome %v, want Ended", o)
	}
}

// TestLogPager: l opens the selected task's log; esc goes back; ↓ moves
// the selection.
func TestLogPager(t *testing.T) {
	tm := start(t, running(), ModeWatch, nil)
	waitFor(t, tm, "> L1-b")
	tm.Type("l")
	waitFor(t, tm, "log of L1-b", "== L1-b attempt 1", "Bash: make test")
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	waitFor(t, tm, "workers (1 running)")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	if o := outcome(t, tm); o != Interrupted {
		t.Errorf("ctrl-c: outcome %v, want Interrupted", o)
	}
}

// TestNoColor: without colour the view has no colour codes; with it, it
// has (the control).
func TestNoColor(t *testing.T) {
	for _, color := range []bool{false, true} {
		m := New(Config{Mode: ModeRush, Poll: running().poll, Color: color})
		v, _ := m.cfg.Poll()
		mm, _ := m.Update(viewMsg{v: v})
		out := mm.View()
		has := strings.Contains(out, "\x1b[3")
		if has != color {
			t.Errorf("color %v: colour codes in the view: %v\n%q", color, has, out)
		}
	}
}

// TestViewFitsTheWidth: no line is wider than the terminal.
func TestViewFitsTheWidth(t *testing.T) {
	s := running()
	s.set(func(v *runstate.View) { v.Tasks[1].Running.LastTool = strings.Repeat("mcp__server__tool", 20) })
	m := New(Config{Mode: ModeRush, Poll: s.poll})
	v, _ := s.poll()
	mm, _ := m.Update(tea.WindowSizeMsg{Width: 60, Height: 30})
	mm, _ = mm.Update(viewMsg{v: v})
	for _, l := range strings.Split(mm.View(), "\n") {
		if w := len([]rune(stripANSI(l))); w > 60 {
			t.Errorf("line %d wide: %q", w, l)
		}
	}
}
