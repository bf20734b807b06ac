package run

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
)

// A verification failure the diagnostics engine calls an environment
// problem spends no retry; the same one in a second attempt stops the
// launching with the evidence and the fix, and no task has failed.
func TestEnvironmentFaultStopsTheLaunching(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.cfg.Workers = 1
	offline := &diagnose.Hypothesis{Pattern: diagnose.OfflineCacheMiss, Class: diagnose.Environment, Confidence: 0.9,
		Evidence: []string{"npm error code ENOTCACHED"}, Fix: "fetch it once on this machine"}
	fail := scripted{class: outcome.Task, reason: "verification_failed", detail: "npm ci --offline failed", diag: offline}
	w.att.script["A"] = []scripted{fail}
	w.att.script["B"] = []scripted{fail}
	st, err := w.rush(context.Background())
	var re *Error
	if !errors.As(err, &re) || re.Kind != Environment || !strings.Contains(err.Error(), "offline_cache_miss in 2 attempts of A, B") || !strings.Contains(err.Error(), "ENOTCACHED") {
		t.Fatalf("err %v, want Environment naming the pattern, both tasks and the evidence", err)
	}
	for _, id := range []string{"A", "B"} {
		if ts := st.Task(id); ts.TaskFailures != 0 || ts.Status == runstate.StatusFailed {
			t.Errorf("%s: %+v; no task retry may be spent on the environment", id, ts)
		}
	}
	// The control: the same failure diagnosed as the task's own spends a
	// retry and the run goes on.
	w2 := newWorld(t, twoLevels)
	w2.cfg.Workers = 1
	own := fail
	own.diag = &diagnose.Hypothesis{Pattern: diagnose.TestAssertion, Class: diagnose.Task, Confidence: 0.9}
	w2.att.script["A"] = []scripted{own}
	w2.att.script["B"] = []scripted{own}
	st, err = w2.rush(context.Background())
	assertDelivered(t, w2, st, err)
	if st.Task("A").TaskFailures != 1 {
		t.Errorf("A: %+v, want one task failure", st.Task("A"))
	}
}

// A verification whose test runner is missing (python3 -m pytest, and the
// interpreter has no pytest) stops the launching at its first attempt,
// whatever the engine guessed: every worker would meet it, and each
// attempt is a paid model session. No task has failed.
func TestMissingRunnerStopsTheLaunchingAtOnce(t *testing.T) {
	const pytestGraph = `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "level": 1, "files": {"create": ["a.py"]}, "verification": {"command": "python3 -m pytest -q"}},
 {"id": "B", "title": "b", "level": 1, "files": {"create": ["b.py"]}, "verification": {"command": "python3 -m pytest -q"}}
]}`
	// What the engine said of it before it knew the phrase: the task's.
	guess := &diagnose.Hypothesis{Pattern: diagnose.DependencyMissing, Class: diagnose.Task, Confidence: 0.86}
	noPytest := scripted{class: outcome.Task, reason: "verification_failed", detail: "verification failed", diag: guess,
		verify: "/root/.pyenv/versions/3.11.7/bin/python3: No module named pytest\n"}
	w := newWorld(t, pytestGraph)
	w.cfg.Workers = 1
	w.att.script["A"] = []scripted{noPytest, noPytest, noPytest}
	w.att.script["B"] = []scripted{noPytest, noPytest, noPytest}
	st, err := w.rush(context.Background())
	var re *Error
	if !errors.As(err, &re) || re.Kind != Environment || !strings.Contains(err.Error(), "missing module pytest") {
		t.Fatalf("err %v, want Environment naming the missing module", err)
	}
	if n := len(w.att.calls); n != 1 {
		t.Errorf("%d attempts, want the launching stopped after the first", n)
	}
	for _, id := range []string{"A", "B"} {
		if ts := st.Task(id); ts.TaskFailures != 0 || ts.Status == runstate.StatusFailed {
			t.Errorf("%s: %+v; no task retry may be spent on a missing runner", id, ts)
		}
	}
}

// Three workers meeting the same non-transient infrastructure fault (the
// gateway cannot reach the API) stop the launching; one task meeting it
// twice does not (it may be that task's), six times does; transient ones
// (rate limits) are the breaker's.
func TestSameInfraFaultStopsTheLaunching(t *testing.T) {
	const threeWide = `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "level": 1, "files": {"create": ["a.txt"]}},
 {"id": "B", "title": "b", "level": 1, "files": {"create": ["b.txt"]}},
 {"id": "D", "title": "d", "level": 1, "files": {"create": ["d.txt"]}}
]}`
	down := scripted{class: outcome.Infra, reason: outcome.ReasonAPIUnreachable, detail: "the gateway could not reach the model API: dial tcp 127.0.0.1:1: connect: connection refused"}
	w := newWorld(t, threeWide)
	w.cfg.Workers = 3
	w.cfg.Retry.InfraMaxAttempts = 10
	for _, id := range []string{"A", "B", "D"} {
		// The API stays down: no attempt would succeed.
		w.att.script[id] = slices.Repeat([]scripted{down}, 10)
	}
	st, err := w.rush(context.Background())
	var re *Error
	if !errors.As(err, &re) || re.Kind != Environment || !strings.Contains(err.Error(), "the gateway could not reach the model API") {
		t.Fatalf("err %v, want Environment naming the fault (%d calls, state %+v)", err, len(w.att.calls), st)
	}
	for _, id := range []string{"A", "B", "D"} {
		if ts := st.Task(id); ts.Status == runstate.StatusFailed || ts.TaskFailures != 0 {
			t.Errorf("%s: %+v; the fault is not the task's", id, ts)
		}
	}
	// The launching stops at the sixth attempt met by the fault at the
	// latest (three tasks, or twice three attempts); the attempts the
	// other two workers are running by then still finish.
	if n := len(w.att.calls); n > 2*infraAttempts+w.cfg.Workers-1 {
		t.Errorf("%d attempts, want the launching stopped once three workers met the fault", n)
	}
	// One task alone: six attempts.
	w1 := newWorld(t, twoLevels)
	w1.cfg.Workers = 1
	w1.cfg.Retry.InfraMaxAttempts = 10
	w1.att.script["A"] = []scripted{down, down, down, down, down, down, down}
	_, err = w1.rush(context.Background())
	if !errors.As(err, &re) || re.Kind != Environment || !strings.Contains(err.Error(), "in 6 attempts of A") {
		t.Fatalf("err %v, want Environment after 6 attempts of A", err)
	}
	// A rate limit is not everybody's problem for long.
	w2 := newWorld(t, twoLevels)
	w2.cfg.Workers = 1
	w2.cfg.Retry.InfraMaxAttempts = 10
	w2.att.script["A"] = []scripted{infra, infra, infra}
	st, err = w2.rush(context.Background())
	assertDelivered(t, w2, st, err)
}

// zerg's own verdicts stay the task's whatever their pattern's class: a
// worker that filled its workspace is not the environment's problem.
func TestOwnVerdictsStayTheTasks(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.cfg.Workers = 1
	full := scripted{class: outcome.Task, reason: "workspace_too_large", detail: "it wrote 400 MiB, more than its 256 MiB",
		diag: &diagnose.Hypothesis{Pattern: diagnose.DiskFull, Class: diagnose.Environment, Confidence: 1}}
	w.att.script["A"] = []scripted{full}
	w.att.script["B"] = []scripted{full}
	st, err := w.rush(context.Background())
	assertDelivered(t, w, st, err)
	if st.Task("A").TaskFailures != 1 || st.Task("B").TaskFailures != 1 {
		t.Errorf("A %+v, B %+v: want one task failure each", st.Task("A"), st.Task("B"))
	}
}

// The gateway refusing the CLI's own request (a setting against this CLI
// release) stops the launching after two attempts, of one task or of
// several, spends no task retry, and says the fix once. The control: the
// same refusal after the model's first answer (gateway_refused) is the
// task's failure and the run goes on.
func TestCLIRefusalStopsTheLaunching(t *testing.T) {
	refusedCLI := scripted{class: outcome.Infra, reason: outcome.ReasonCLIRefused,
		detail: "zerg's gateway refused the CLI's own request (POST /v1/messages, before the model had answered anything): max_tokens 128000 is above the cap of 64000 (gateway.max_tokens); set gateway.max_tokens in .zerg/config.yaml to at least 128000"}
	for _, workers := range []int{1, 2} {
		w := newWorld(t, twoLevels)
		w.cfg.Workers = workers
		w.cfg.Retry.InfraMaxAttempts = 10
		w.att.script["A"] = slices.Repeat([]scripted{refusedCLI}, 10)
		w.att.script["B"] = slices.Repeat([]scripted{refusedCLI}, 10)
		st, err := w.rush(context.Background())
		var re *Error
		if !errors.As(err, &re) || re.Kind != Environment || !strings.Contains(err.Error(), "in 2 attempts") || !strings.Contains(err.Error(), "at least 128000") {
			t.Fatalf("%d workers: err %v, want Environment after 2 attempts with the fix", workers, err)
		}
		// (With two workers, one more attempt may have started before the
		// second refusal came back.)
		if n := len(w.att.calls); n > 1+workers {
			t.Errorf("%d workers: %d attempts, want the launching stopped after 2", workers, n)
		}
		for _, id := range []string{"A", "B"} {
			if ts := st.Task(id); ts.TaskFailures != 0 || ts.Status == runstate.StatusFailed {
				t.Errorf("%d workers: %s: %+v; no task retry may be spent on it", workers, id, ts)
			}
		}
	}
	w := newWorld(t, twoLevels)
	w.cfg.Workers = 1
	worker := scripted{class: outcome.Task, reason: outcome.ReasonGatewayRefused, detail: "the gateway refused 1 request(s) from the sandbox after the model's first answer"}
	w.att.script["A"] = []scripted{worker}
	w.att.script["B"] = []scripted{worker}
	st, err := w.rush(context.Background())
	assertDelivered(t, w, st, err)
	if st.Task("A").TaskFailures != 1 {
		t.Errorf("A: %+v, want one task failure", st.Task("A"))
	}
}
