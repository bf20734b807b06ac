package run

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
)

func TestDecideReset(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	on := config.Default().Retry
	on.WaitForReset = true
	off := config.Default().Retry
	for _, tc := range []struct {
		name          string
		retry         config.Retry
		reason, reset string
		wait          bool
		until         time.Time
		whyNot        string // a substring; "" for none
	}{
		{"off: stop as before, nothing to explain", off, outcome.ReasonUsageLimit, "2026-11-24T12:00:20Z", false, time.Time{}, ""},
		{"a usage limit 20 s ahead: a second past it", on, outcome.ReasonUsageLimit, "2026-11-24T12:00:20Z", true, now.Add(21 * time.Second), ""},
		{"the message's form", on, outcome.ReasonUsageLimit, "2026-11-24 at 15:30 UTC", true, now.Add(3*time.Hour + 30*time.Minute + time.Second), ""},
		{"credit does not pass with time", on, outcome.ReasonCredit, "2026-11-24T12:00:20Z", false, time.Time{}, "credit refusal does not pass with time"},
		{"a bad key does not either", on, outcome.ReasonAuth, "", false, time.Time{}, "auth refusal"},
		{"no reset time", on, outcome.ReasonUsageLimit, "", false, time.Time{}, "no reset time"},
		{"an unreadable one", on, outcome.ReasonUsageLimit, "next Tuesday", false, time.Time{}, `"next Tuesday" cannot be read`},
		{"one that passed", on, outcome.ReasonUsageLimit, "2026-11-24T11:59:59Z", false, time.Time{}, "has passed and the API still refuses"},
		{"now is not ahead", on, outcome.ReasonUsageLimit, "2026-11-24T12:00:00Z", false, time.Time{}, "has passed"},
		{"beyond the cap", on, outcome.ReasonUsageLimit, "2026-12-01T00:00:00Z", false, time.Time{}, "its reset (2026-12-01T00:00:00Z) is 156h0m0s away, beyond retry.wait_for_reset_max (6h0m0s)"},
		{"just within the cap", on, outcome.ReasonUsageLimit, "2026-11-24T18:00:00Z", true, now.Add(6*time.Hour + time.Second), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := DecideReset(tc.retry, tc.reason, tc.reset, now)
			if d.Wait != tc.wait || !d.Until.Equal(tc.until) {
				t.Errorf("wait %v until %s, want %v until %s", d.Wait, d.Until, tc.wait, tc.until)
			}
			if (tc.whyNot == "") != (d.WhyNot == "") || !strings.Contains(d.WhyNot, tc.whyNot) {
				t.Errorf("why not %q, want %q", d.WhyNot, tc.whyNot)
			}
		})
	}
}

// usageLimitWorld: A's first attempt is refused for a usage limit that
// resets 20 s later while B's first attempt runs (it holds until stopped).
func usageLimitWorld(t *testing.T, wait bool) *world {
	w := newWorld(t, twoLevels)
	w.cfg.Retry.WaitForReset = wait
	reset := w.clock.Now().Add(20 * time.Second).Format(time.RFC3339)
	w.att.script["A"] = []scripted{{class: outcome.Account, reason: outcome.ReasonUsageLimit,
		detail: "the API answered 429: You have reached your specified API usage limits.", reset: reset}}
	// B is stopped for the wait at once; were it not, it would succeed
	// after a while, and its single attempt would fail the tests below
	// rather than hang them.
	hold := make(chan struct{})
	timer := time.AfterFunc(3*time.Second, func() { close(hold) })
	t.Cleanup(func() { timer.Stop() })
	w.att.script["B"] = []scripted{{class: outcome.Success, reason: "completed", hold: hold}}
	w.att.together = 2
	return w
}

// With retry.wait_for_reset, a usage limit with a reset 20 s ahead holds
// every launch until a second past it, stops the attempt in flight, then
// runs both tasks again by themselves: the run delivers, the refusal
// spends no retry, and the log says the wait. Without it (the control) the
// same refusal ends the run resumable, as before.
func TestUsageLimitWaitsForTheReset(t *testing.T) {
	w := usageLimitWorld(t, true)
	start := w.clock.Now()
	var out bytes.Buffer
	c := w.coordinator(runstate.NewState())
	c.progress = newProgress(&out)
	st, err := c.execute(context.Background())
	assertDelivered(t, w, st, err)

	until := start.Add(21 * time.Second)
	var waits []runstate.ResetWait
	refused := false
	for _, e := range w.log.all() {
		switch e.Type {
		case runstate.EvResetWait:
			waits = append(waits, data[runstate.ResetWait](t, e))
		case runstate.EvAttemptFinished:
			if e.Task == "A" && e.Attempt == 1 {
				refused = true
			}
		case runstate.EvAttemptStarted:
			// Nothing starts between the refusal and the reset.
			if refused && e.Time.Before(until) {
				t.Errorf("%s attempt %d started at %s, during the wait (until %s)", e.Task, e.Attempt, e.Time, until)
			}
		}
	}
	if len(waits) != 1 || waits[0].Task != "A" || waits[0].Reason != outcome.ReasonUsageLimit || waits[0].Until != until.Format(time.RFC3339) {
		t.Errorf("reset_wait events %+v, want one for A until %s", waits, until.Format(time.RFC3339))
	}
	if st.ResetWait == nil || st.ResetWait.Until != until.Format(time.RFC3339) {
		t.Errorf("state's reset wait %+v", st.ResetWait)
	}
	a, b := st.Task("A"), st.Task("B")
	if a.Attempts != 2 || a.TaskFailures != 0 || b.Attempts != 2 || b.TaskFailures != 0 {
		t.Errorf("A %+v\nB %+v: want two attempts each and no task failure", a, b)
	}
	// B's first attempt was stopped for the wait, not by the run.
	for _, e := range w.log.all() {
		if e.Type == runstate.EvAttemptFinished && e.Task == "B" && e.Attempt == 1 {
			if f := data[runstate.AttemptFinished](t, e); f.Reason != outcome.ReasonCancelled || f.Detail != errResetWait.Error() {
				t.Errorf("B's first attempt finished %+v, want cancelled for the reset wait", f)
			}
		}
	}
	text := out.String()
	for _, want := range []string{"zerg: usage limit (task A): waiting until 12:00:21 (in 21s) for the reset; Ctrl-C stops the run (resume later with --resume)",
		"B: attempt 1 stopped for the reset wait", "the usage limit's reset time passed: launching resumes"} {
		if !strings.Contains(text, want) {
			t.Errorf("progress lacks %q:\n%s", want, text)
		}
	}
}

func TestUsageLimitWithoutWaitingStops(t *testing.T) {
	w := usageLimitWorld(t, false)
	st, err := w.rush(context.Background())
	var re *Error
	if !errors.As(err, &re) || re.Kind != Account || re.ResumeAfter == "" {
		t.Fatalf("err %v, want an account stop with the reset time", err)
	}
	if st.ResetWait != nil || len(w.att.calls) != 2 {
		t.Errorf("reset wait %+v, %d attempts: want no wait, A and B only", st.ResetWait, len(w.att.calls))
	}
}

// A reset beyond retry.wait_for_reset_max is not waited for: the run stops
// as without waiting, with a line saying why.
func TestUsageLimitBeyondTheCapStops(t *testing.T) {
	w := usageLimitWorld(t, true)
	w.cfg.Retry.WaitForResetMax = 10 * time.Second
	var out bytes.Buffer
	c := w.coordinator(runstate.NewState())
	c.progress = newProgress(&out)
	st, err := c.execute(context.Background())
	if !errors.Is(err, Account) || st.ResetWait != nil {
		t.Fatalf("err %v, reset wait %+v: want an account stop and no wait", err, st.ResetWait)
	}
	if want := "zerg: A: not waiting for the reset: its reset (2026-11-24T12:00:20Z) is 20s away, beyond retry.wait_for_reset_max (10s)"; !strings.Contains(out.String(), want) {
		t.Errorf("progress lacks %q:\n%s", want, out.String())
	}
}

// stallClock is a clock whose waits of a reset's length never end: the run
// stays in its wait until the test stops it.
type stallClock struct {
	*jumpClock
	once    sync.Once
	waiting chan struct{} // closed when the first long wait begins
}

func (c *stallClock) After(d time.Duration) <-chan time.Time {
	if d < 10*time.Second {
		return c.jumpClock.After(d)
	}
	c.once.Do(func() { close(c.waiting) })
	return nil
}

// Ctrl-C during the wait stops the run as any interrupt does (resumable),
// and status shows the wait while it lasts.
func TestInterruptDuringTheResetWait(t *testing.T) {
	w := usageLimitWorld(t, true)
	clk := &stallClock{jumpClock: w.clock, waiting: make(chan struct{})}
	c := w.coordinator(runstate.NewState())
	c.d.Clock = clk
	ctx, cancel := context.WithCancel(context.Background())
	viewed := make(chan runstate.View, 1)
	go func() {
		<-clk.waiting
		// The wait is set before its event is written (announceReset runs
		// after waitForReset): look until the log has it, as status would.
		var v runstate.View
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			c.mu.Lock()
			st := runstate.Replay(w.log.all())
			c.mu.Unlock()
			if v = BuildView("f", st, w.graph, nil, runstate.Liveness{Alive: true}); v.ResetWait != nil {
				break
			}
		}
		viewed <- v
		cancel()
	}()
	st, err := c.execute(ctx)
	if !errors.Is(err, Interrupted) || st.Stopped == nil {
		t.Fatalf("err %v, stopped %+v: want interrupted", err, st.Stopped)
	}
	if v := <-viewed; v.ResetWait == nil || v.ResetWait.Task != "A" {
		t.Errorf("the view during the wait has no reset wait: %+v", v.ResetWait)
	}
	if v := BuildView("f", st, w.graph, nil, runstate.Liveness{}); v.ResetWait != nil {
		t.Errorf("a stopped run's view still shows the wait: %+v", v.ResetWait)
	}
	st, err = w.resume(context.Background())
	assertDelivered(t, w, st, err)
	if st.ResetWait != nil {
		t.Errorf("the resumed run still records the wait its stopped coordinator began: %+v", st.ResetWait)
	}
}
