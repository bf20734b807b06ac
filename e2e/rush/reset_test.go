package rush

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
)

// usageLimitIn is a usage limit that resets in 20 s, for the first worker
// session that reaches the API (whichever task it runs): every request of
// that session is refused, and the CLI does not retry (should_retry).
const usageLimitIn = `  - {http: 429, error_type: rate_limit_error, message: "You have reached your specified API usage limits.",
     should_retry: false, reset_in: 20s, sessions: 1}
`

// TestWaitForReset: a usage limit mid-run whose reset is 20 s ahead. With
// --wait-for-reset the rush says the time, waits (the API hears nothing
// meanwhile), then runs the refused and stopped tasks again by itself and
// delivers, exit 0, with no task retry spent. The control, the same rush
// without the flag, stops at the refusal as before: exit 1, cause account,
// the reset time named, no wait.
func TestWaitForReset(t *testing.T) {
	t.Parallel()
	t.Run("control", func(t *testing.T) {
		t.Parallel()
		p := newProject(t, func(dir string) { addGlobalFaults(t, dir, usageLimitIn) })
		r := p.zerg("rush", "demo", "--rehearse")
		if r.code != 1 || !strings.Contains(r.stderr, "usage limit") || strings.Contains(r.stderr, "waiting until") {
			t.Fatalf("exit %d, want 1 naming the usage limit and no wait\n%s", r.code, r.stderr)
		}
		st := runstate.Replay(p.events())
		if st.Finished == nil || st.Finished.Cause != "account" || st.Finished.ResumeAfter == "" || st.ResetWait != nil {
			t.Errorf("run_finished %+v, reset wait %+v: want cause account with the reset time, no wait", st.Finished, st.ResetWait)
		}
	})
	t.Run("wait", func(t *testing.T) {
		t.Parallel()
		p := newProject(t, func(dir string) { addGlobalFaults(t, dir, usageLimitIn) })
		began := time.Now()
		r := p.zerg("rush", "demo", "--rehearse", "--wait-for-reset")
		took := time.Since(began)
		t.Logf("exit %d in %s\n%s", r.code, took.Round(100*time.Millisecond), r.stderr)
		if r.code != 0 {
			t.Fatalf("exit %d, want 0 (delivered after the wait)\n%s%s", r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "for the reset; Ctrl-C stops the run (resume later with --resume)") ||
			!strings.Contains(r.stderr, "launching resumes") {
			t.Errorf("the rush did not show the wait and its end:\n%s", r.stderr)
		}
		files := p.integrationFiles()
		for _, f := range allDemoFiles {
			if !files[f] {
				t.Errorf("%s is missing from the delivered branch", f)
			}
		}

		evs := p.events()
		st := runstate.Replay(evs)
		w := st.ResetWait
		if w == nil {
			t.Fatal("no reset_wait in the run's log")
		}
		until, err := time.Parse(time.RFC3339, w.Until)
		if err != nil {
			t.Fatal(err)
		}
		var refusedAt, waitAt time.Time
		for _, e := range evs {
			switch e.Type {
			case runstate.EvAttemptFinished:
				var d runstate.AttemptFinished
				if err := e.Decode(&d); err != nil {
					t.Fatal(err)
				}
				if d.Class == outcome.Account {
					if !refusedAt.IsZero() {
						t.Errorf("%s attempt %d was refused too: one session was", e.Task, e.Attempt)
					}
					refusedAt = e.Time
					// The reset the gateway read from the API's headers, 20 s
					// after the answer (it came before the attempt ended).
					reset, err := time.Parse(time.RFC3339, d.Reset)
					if err != nil || e.Task != w.Task || reset.Before(e.Time.Add(15*time.Second)) || reset.After(e.Time.Add(21*time.Second)) {
						t.Errorf("%s attempt %d refused with reset %q at %s (wait for %s): want about 20 s ahead", e.Task, e.Attempt, d.Reset, e.Time, w.Task)
					}
				}
			case runstate.EvResetWait:
				waitAt = e.Time
			case runstate.EvAttemptStarted:
				if !refusedAt.IsZero() && e.Time.Before(until) {
					t.Errorf("%s attempt %d started at %s, during the wait (until %s)", e.Task, e.Attempt, e.Time.Format(time.TimeOnly), w.Until)
				}
			}
		}
		if refusedAt.IsZero() || waitAt.Before(refusedAt) {
			t.Fatalf("refused at %s, wait recorded at %s", refusedAt, waitAt)
		}
		if ts := st.Task(w.Task); ts.TaskFailures != 0 || ts.Attempts != 2 || ts.Status != runstate.StatusMerged {
			t.Errorf("the refused task %s: %+v; want merged at its second attempt, no task failure", w.Task, ts)
		}
		// The API heard nothing during the wait (the stopped workers' last
		// requests aside, sent before they were stopped).
		for _, q := range mockRequests(t, filepath.Join(p.dir, ".zerg", "runs", "demo")) {
			if q.Time.After(waitAt.Add(2*time.Second)) && q.Time.Before(until) {
				t.Errorf("a %s request at %s, during the wait (until %s)", q.Kind, q.Time.Format(time.TimeOnly), w.Until)
			}
		}
		if wait := until.Sub(refusedAt); wait < 15*time.Second || took < wait {
			t.Errorf("waited %s of a %s rush; want about 20 s", wait, took)
		}
	})
}
