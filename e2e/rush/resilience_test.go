package rush

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/runstate"
)

// setConfig replaces the demo's .zerg/config.yaml.
func setConfig(t *testing.T, dir, yaml string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, ".zerg", "config.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
}

// addGlobalFaults appends a global faults section to the demo scenario.
func addGlobalFaults(t *testing.T, dir, faults string) {
	t.Helper()
	editFile(t, scenarioPath(dir), func(s string) string { return s + "\nfaults:\n" + faults })
}

const resilientConfig = `version: 1
workers: 4
retry:
  task_retries: 2
  infra_backoff_initial: 200ms
  infra_backoff_max: 2s
  infra_max_attempts: 10
breaker:
  failures: 5
  cooldown: 3s
heartbeat:
  stall_timeout: 10s
`

// TestChaoticAPI: 30 % of the API requests fail (429, 529, 500, or a stall
// and a dropped connection). The CLI absorbs some of them with its own
// retries; the rest (a 500 it may not retry, repeated 529s) fail attempts,
// which zerg retries. The run still merges every task, and infra failures
// never spend a task's retries: only L2-shout's scripted verification
// failure counts.
func TestChaoticAPI(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		setConfig(t, dir, resilientConfig)
		addGlobalFaults(t, dir, `  - rate: 0.3
    any_of:
      - {http: 429, retry_after: 1}
      - {http: 529}
      - {http: 500, should_retry: false}
      - {stall: before_headers, duration: 1s}
`)
		editFile(t, scenarioPath(dir), func(s string) string { return "seed: 7\n" + s })
	})
	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	st := runstate.Replay(p.events())
	infra := 0
	for _, id := range []string{"L1-names", "L1-greet", "L1-upper", "L1-docs", "L2-greet-all", "L2-shout", "L3-tests"} {
		ts := st.Tasks[id]
		if ts.Status != runstate.StatusMerged || st.MergeCount[id] != 1 {
			t.Errorf("%s: %s, merged %d times", id, ts.Status, st.MergeCount[id])
		}
		want := 0
		if id == "L2-shout" {
			want = 1 // the scripted wrong first attempt
		}
		if ts.TaskFailures != want {
			t.Errorf("%s: %d task failures, want %d (infra failures must not count): %+v", id, ts.TaskFailures, want, ts)
		}
		infra += ts.InfraFailures
	}
	faulted, total := mockapiFaults(t, p)
	t.Logf("%d of %d API requests faulted; %d attempts failed as infra and were retried", faulted, total, infra)
	if float64(faulted) < 0.15*float64(total) {
		t.Errorf("only %d of %d requests faulted; the scenario did not inject ~30%%", faulted, total)
	}
	if infra == 0 {
		t.Error("no attempt failed as infra: the test did not exercise zerg's retries")
	}
}

// mockapiFaults counts faulted requests in the rehearsal's request log.
func mockapiFaults(t *testing.T, p *project) (faulted, total int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.dir, ".zerg", "runs", "demo", "mockapi.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.Contains(line, `"kind":"main"`) {
			continue
		}
		total++
		if strings.Contains(line, `"fault":"`) && !strings.Contains(line, `"fault":""`) {
			faulted++
		}
	}
	return faulted, total
}

// TestBreakerOpensAndProbeCloses: the first five attempts of the run hit a
// non-retryable 500; five consecutive infra failures open the breaker, no
// attempt launches during the 3 s cooldown, then one probe runs, succeeds and
// closes it, and the run delivers.
func TestBreakerOpensAndProbeCloses(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		setConfig(t, dir, resilientConfig)
		addGlobalFaults(t, dir, "  - {http: 500, should_retry: false, sessions: 5}\n")
	})
	r := p.zerg("rush", "demo", "--rehearse", "--workers", "2")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	evs := p.events()
	var opened, closed time.Time
	var openEv eventlog.Event
	states := []string{}
	for _, e := range evs {
		if e.Type != runstate.EvBreaker {
			continue
		}
		var d runstate.BreakerChange
		e.Decode(&d)
		states = append(states, d.State)
		switch d.State {
		case runstate.BreakerOpen:
			if opened.IsZero() {
				opened, openEv = e.Time, e
			}
		case runstate.BreakerClosed:
			closed = e.Time
		}
	}
	if len(states) < 3 || states[0] != runstate.BreakerOpen || states[1] != runstate.BreakerHalfOpen || states[len(states)-1] != runstate.BreakerClosed {
		t.Fatalf("breaker transitions %v, want open, half_open, …, closed", states)
	}
	var d runstate.BreakerChange
	openEv.Decode(&d)
	if d.Failures != 5 {
		t.Errorf("opened after %d failures, want 5", d.Failures)
	}
	// No launch during the cooldown; the first launch after it is the probe.
	// The cooldown ends at the time the breaker recorded, which it computed
	// a moment before it wrote the event.
	until, err := time.Parse(time.RFC3339Nano, d.Until)
	if err != nil || until.Before(opened.Add(3*time.Second-50*time.Millisecond)) {
		t.Fatalf("breaker open until %q (%v), want 3 s after it opened at %s", d.Until, err, opened)
	}
	var probeStart time.Time
	for _, e := range evs {
		if e.Type == runstate.EvAttemptStarted && e.Seq > openEv.Seq {
			if e.Time.Before(until) {
				t.Errorf("%s attempt %d launched %s after the breaker opened, before its cooldown ended at %s", e.Task, e.Attempt, e.Time.Sub(opened), until)
			}
			if probeStart.IsZero() {
				probeStart = e.Time
			}
		}
	}
	if probeStart.IsZero() || !closed.After(probeStart) {
		t.Errorf("probe at %v, closed at %v", probeStart, closed)
	}
	st := runstate.Replay(evs)
	if st.Finished == nil || !st.Finished.Delivered {
		t.Fatal("run not delivered")
	}
	for id, ts := range st.Tasks {
		if id != "L2-shout" && ts.TaskFailures != 0 {
			t.Errorf("%s spent task retries on infra failures: %+v", id, ts)
		}
	}
}

// TestStallDetected: a stream that stalls after its headers (the CLI itself
// waits at least 300 s) is caught by zerg's heartbeat within the configured
// 10 s, killed, recorded as an infra failure and retried.
func TestStallDetected(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		setConfig(t, dir, resilientConfig)
		editFile(t, scenarioPath(dir), func(s string) string {
			return strings.Replace(s, "  - name: names\n    match: \"Task L1-names:\"\n",
				"  - name: names\n    match: \"Task L1-names:\"\n    faults:\n      - {stall: after_headers, sessions: 1}\n", 1)
		})
	})
	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var first runstate.AttemptFinished
	for _, e := range p.events() {
		if e.Type == runstate.EvAttemptFinished && e.Task == "L1-names" && e.Attempt == 1 {
			e.Decode(&first)
		}
	}
	if first.Class != "infra" || first.Reason != "stalled" {
		t.Fatalf("first attempt of L1-names: %+v, want infra/stalled", first)
	}
	// Caught by our watchdog, not by the CLI's 300 s one.
	if first.DurationMS > 120_000 {
		t.Errorf("the stall took %d ms to detect", first.DurationMS)
	}
	st := runstate.Replay(p.events())
	if ts := st.Tasks["L1-names"]; ts.Status != runstate.StatusMerged || ts.TaskFailures != 0 || ts.InfraFailures != 1 {
		t.Errorf("L1-names: %+v", ts)
	}
}
