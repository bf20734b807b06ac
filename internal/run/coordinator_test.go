package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
)

func assertDelivered(t *testing.T, w *world, st *runstate.State, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("not delivered: %v\nevents: %v", err, w.log.types())
	}
	if st.Finished == nil || !st.Finished.Delivered {
		t.Fatalf("run_finished: %+v", st.Finished)
	}
	for _, task := range w.graph.Tasks {
		if s := st.Task(task.ID).Status; s != runstate.StatusMerged || st.MergeCount[task.ID] != 1 {
			t.Errorf("%s: %s, merged %d times", task.ID, s, st.MergeCount[task.ID])
		}
	}
	if got := w.git.branches[IntegrationBranch("f")]; got != st.Head {
		t.Errorf("integration branch at %s, log says %s", got, st.Head)
	}
	// The log replays to the same state the live coordinator had.
	re := w.replay()
	if re.Head != st.Head || len(re.Merged) != len(st.Merged) || re.Finished == nil || *re.Finished != *st.Finished {
		t.Errorf("replay differs from the live state: %+v vs %+v", re, st)
	}
}

func TestHappyPath(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.att.verifies = true
	w.att.together = 2 // A and B wait for each other: both of level 1 at once
	st, err := w.rush(context.Background())
	assertDelivered(t, w, st, err)
	// Level 2 starts from level 1's merge, which holds A and B.
	c := w.att.attemptsOf("C")
	if len(c) != 1 || c[0].Base != "m(base+A,B)" {
		t.Errorf("C ran from %+v", c)
	}
	if w.att.peak != 2 {
		t.Errorf("peak concurrency %d, want 2 (A and B at once)", w.att.peak)
	}
	// Every task went pending → ready → running → verifying → committed → merged.
	var seq []string
	for _, e := range w.log.all() {
		if e.Task == "A" || e.Type == runstate.EvLevelStarted && strings.Contains(string(e.Data), `"A"`) || e.Type == runstate.EvLevelMerged && strings.Contains(string(e.Data), `"A"`) {
			seq = append(seq, e.Type)
		}
	}
	want := []string{runstate.EvLevelStarted, runstate.EvAttemptStarted, runstate.EvAttemptPIDs, runstate.EvAttemptVerifying, runstate.EvAttemptFinished, runstate.EvLevelMerged}
	if !slices.Equal(seq, want) {
		t.Errorf("A's events %v, want %v", seq, want)
	}
	if len(st.Gates) != 2 || st.Gates[0].Head != st.Merged[1].Head {
		t.Errorf("gates %+v", st.Gates)
	}
}

func TestTaskFailureRetriesWithDiagnosis(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.att.script["B"] = []scripted{taskFail("exit 1: missing b.txt"), infra}
	st, err := w.rush(context.Background())
	assertDelivered(t, w, st, err)
	b := w.att.attemptsOf("B")
	if len(b) != 3 {
		t.Fatalf("B ran %d attempts, want 3", len(b))
	}
	// The retry prompt carries the task failure, even after an infra failure.
	if !strings.HasPrefix(b[1].Previous, "attempt 1: exit 1: missing b.txt") || b[2].Previous != b[1].Previous {
		t.Errorf("diagnosis not carried: %q, %q", b[1].Previous, b[2].Previous)
	}
	if ts := st.Task("B"); ts.TaskFailures != 1 || ts.InfraFailures != 1 {
		t.Errorf("B counts: %+v", ts)
	}
}

func TestTaskFailsForGoodBlocksLaterLevels(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.att.script["A"] = []scripted{taskFail("one"), taskFail("two"), taskFail("three")}
	st, err := w.rush(context.Background())
	if !errors.Is(err, NotDelivered) {
		t.Fatalf("err %v, want NotDelivered", err)
	}
	if n := len(w.att.attemptsOf("A")); n != 2 {
		t.Errorf("A ran %d attempts, want 2 (task_retries 1)", n)
	}
	if s := st.Task("A").Status; s != runstate.StatusFailed {
		t.Errorf("A is %s", s)
	}
	if s := st.Task("B").Status; s != runstate.StatusCommitted {
		t.Errorf("B is %s, want committed (kept for a resume)", s)
	}
	if s := st.Task("C").Status; s != runstate.StatusBlocked {
		t.Errorf("C is %s, want blocked", s)
	}
	if _, merged := st.Merged[1]; merged || w.git.branches[IntegrationBranch("f")] != "base" {
		t.Errorf("a failed level moved the integration branch: %v", w.git.branches)
	}
	if st.Finished == nil || st.Finished.Delivered {
		t.Errorf("finished %+v", st.Finished)
	}
	v := BuildView("f", st, w.graph, nil, runstate.Liveness{})
	if v.State != runstate.RunNotDelivered || v.Levels[0].State != "failed" || v.Levels[1].State != "blocked" {
		t.Errorf("view %+v", v)
	}
}

func TestInfraFailuresBackOffWithoutSpendingRetries(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.cfg.Retry.InfraMaxAttempts = 0
	w.att.script["A"] = []scripted{infra, infra, infra, infra, infra}
	st, err := w.rush(context.Background())
	assertDelivered(t, w, st, err)
	if ts := st.Task("A"); ts.TaskFailures != 0 || ts.InfraFailures != 5 || ts.Attempts != 6 {
		t.Errorf("A: %+v", ts)
	}
	// Backoff doubles from 1 s and is capped at 8 s. The breaker (5 in a
	// row) also waits its cooldown; those waits are the governor's.
	var backoffs []time.Duration
	for _, d := range w.clock.waits {
		if d <= 8*time.Second {
			backoffs = append(backoffs, d)
		}
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second}; !slices.Equal(backoffs, want) {
		t.Errorf("backoff waits %v, want %v", backoffs, want)
	}
}

func TestInfraLimitFailsTheTask(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.att.script["A"] = []scripted{infra, infra, infra}
	st, err := w.rush(context.Background())
	if !errors.Is(err, NotDelivered) || st.Task("A").Status != runstate.StatusFailed {
		t.Fatalf("err %v, A %s", err, st.Task("A").Status)
	}
	if n := len(w.att.attemptsOf("A")); n != 3 {
		t.Errorf("A ran %d attempts, want 3 (infra_max_attempts)", n)
	}
}

func TestFatalStopsTheRun(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.cfg.Workers = 1
	w.att.script["A"] = []scripted{{class: outcome.Fatal, reason: "invalid_api_key", detail: "401 invalid x-api-key"}}
	st, err := w.rush(context.Background())
	var re *Error
	if !errors.As(err, &re) || re.Kind != Fatal || re.Task != "A" {
		t.Fatalf("err %v, want Fatal naming A", err)
	}
	if n := len(w.att.calls); n != 1 {
		t.Errorf("%d attempts after a fatal error, want 1", n)
	}
	// Not the task's fault: a resume with a good key runs it again.
	if s := st.Task("A").Status; s != runstate.StatusCancelled {
		t.Errorf("A is %s, want cancelled", s)
	}
	st, err = w.resume(context.Background())
	assertDelivered(t, w, st, err)
}

func TestInterruptThenResume(t *testing.T) {
	w := newWorld(t, twoLevels)
	hold := make(chan struct{})
	w.att.script["A"] = []scripted{{class: outcome.Success, reason: "completed", hold: hold}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(w.att.attemptsOf("A")) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	st, err := w.rush(ctx)
	if !errors.Is(err, Interrupted) {
		t.Fatalf("err %v, want Interrupted", err)
	}
	if st.Stopped == nil || st.Finished != nil {
		t.Errorf("stopped %+v finished %+v", st.Stopped, st.Finished)
	}
	for id, ts := range st.Tasks {
		if ts.Status.Active() || ts.Open != nil {
			t.Errorf("%s left %s after the stop", id, ts.Status)
		}
	}
	if v := BuildView("f", st, w.graph, nil, runstate.Liveness{}); v.State != runstate.RunHalted {
		t.Errorf("view state %s", v.State)
	}
	st, err = w.resume(context.Background())
	assertDelivered(t, w, st, err)
}

func TestZergErrorClosesTheAttempt(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.att.script["A"] = []scripted{{err: errors.New("git worktree add: already exists")}}
	st, err := w.rush(context.Background())
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("err %v", err)
	}
	for id, ts := range st.Tasks {
		if ts.Status.Active() || ts.Open != nil {
			t.Errorf("%s stuck %s", id, ts.Status)
		}
	}
	if st.Finished == nil || st.Finished.Delivered {
		t.Errorf("finished %+v", st.Finished)
	}
}

func TestGateFailureKeepsTheLevelUnmerged(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.git.gateExit["tests"] = 1
	st, err := w.rush(context.Background())
	if !errors.Is(err, NotDelivered) || !strings.Contains(err.Error(), "gate tests failed") {
		t.Fatalf("err %v", err)
	}
	if len(st.Merged) != 0 || w.git.branches[IntegrationBranch("f")] != "base" {
		t.Errorf("merged %v, branch %s", st.Merged, w.git.branches[IntegrationBranch("f")])
	}
	if len(st.Gates) != 1 || st.Gates[0].Exit != 1 {
		t.Errorf("gates %+v", st.Gates)
	}
	// Fixed gate: the resume keeps the committed work and only merges.
	w.git.gateExit["tests"] = 0
	st, err = w.resume(context.Background())
	assertDelivered(t, w, st, err)
	if n := len(w.att.attemptsOf("A")); n != 1 {
		t.Errorf("A ran %d attempts, want 1 (its commit was kept)", n)
	}
}

func TestMergeConflictFailsTheLevel(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.git.conflict = "B"
	st, err := w.rush(context.Background())
	if !errors.Is(err, NotDelivered) || st.FailedLevel == nil || st.FailedLevel.Tasks[0] != "B" {
		t.Fatalf("err %v, failed level %+v", err, st.FailedLevel)
	}
}

func TestEventLogWriteErrorStopsTheRun(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.log.failOn = runstate.EvLevelMerged
	_, err := w.rush(context.Background())
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err %v, want the write error", err)
	}
	if w.git.branches[IntegrationBranch("f")] != "base" {
		t.Error("the branch moved although level_merged was not written")
	}
}

// crashedWhileCRan is a delivered run whose log is cut inside level 2,
// after C's attempt started (a SIGKILL there), and the attempts run so far.
func crashedWhileCRan(t *testing.T) (*world, int) {
	t.Helper()
	w := newWorld(t, twoLevels)
	st, err := w.rush(context.Background())
	assertDelivered(t, w, st, err)
	evs := w.log.all()
	cut := slices.IndexFunc(evs, func(e eventlogEvent) bool { return e.Type == runstate.EvAttemptPIDs && e.Task == "C" })
	w.log.events = evs[:cut+1]
	w.git.branches[IntegrationBranch("f")] = w.replay().Head
	return w, len(w.att.calls)
}

// A crash mid-attempt: the resume reaps the recorded processes, keeps the
// abandoned work, closes the attempt, and does not redo merged levels.
func TestResumeAfterCrash(t *testing.T) {
	w, calls := crashedWhileCRan(t)
	st, err := w.resume(context.Background())
	assertDelivered(t, w, st, err)
	if !slices.Equal(w.salv.reaped, []string{"marker-C"}) || !slices.Equal(w.salv.preserved, []string{"C"}) {
		t.Errorf("reaped %v preserved %v", w.salv.reaped, w.salv.preserved)
	}
	if got := w.att.calls[calls:]; len(got) != 1 || got[0].Task.ID != "C" || got[0].Number != 2 {
		t.Errorf("the resume ran %+v, want only C attempt 2", got)
	}
	var abandoned runstate.AttemptFinished
	for _, e := range w.log.all() {
		if e.Type == runstate.EvAttemptFinished && e.Task == "C" && e.Attempt == 1 {
			abandoned = data[runstate.AttemptFinished](t, e)
		}
	}
	if abandoned.Reason != outcome.ReasonAbandoned || abandoned.Commit != "saved-C-1" {
		t.Errorf("abandoned attempt recorded as %+v", abandoned)
	}
}

// A crash while C's worker ran, after it had finished: the resume takes its
// work through the checks (Recover) and commits it; C is not run again.
func TestResumeCommitsAFinishedLostAttempt(t *testing.T) {
	w, calls := crashedWhileCRan(t)
	w.att.recovered = map[string]attempt.Result{"C": {Class: outcome.Success, Reason: "completed", Commit: "c-recovered",
		Detail: "recovered after the coordinator stopped"}}

	st, err := w.resume(context.Background())
	assertDelivered(t, w, st, err)
	if got := w.att.calls[calls:]; len(got) != 0 {
		t.Errorf("the resume ran %+v again, want nothing: its work was finished", got)
	}
	if len(w.salv.preserved) != 0 {
		t.Errorf("preserved %v: a recovered attempt needs no salvage", w.salv.preserved)
	}
	if c := st.Task("C"); c.Attempts != 1 || c.Commit != "c-recovered" {
		t.Errorf("C: %+v, want its one attempt committed as recovered", c)
	}
}

// A crash after level_started, before every task of the level launched:
// the tasks left ready run on resume. (Found by the chaos test.)
func TestResumeAfterCrashWithTasksStillReady(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.cfg.Workers = 1
	st, err := w.rush(context.Background())
	assertDelivered(t, w, st, err)
	evs := w.log.all()
	cut := slices.IndexFunc(evs, func(e eventlogEvent) bool { return e.Type == runstate.EvAttemptPIDs && e.Task == "A" })
	w.log.events = evs[:cut+1]
	if s := w.replay().Task("B").Status; s != runstate.StatusReady {
		t.Fatalf("B is %s at the crash, want ready", s)
	}
	w.git.branches[IntegrationBranch("f")] = "base"
	st, err = w.resume(context.Background())
	assertDelivered(t, w, st, err)
}

// The crash came between level_merged and the branch update: the resume
// moves the branch forward to the recorded head.
func TestResumeMovesABranchBehindTheLogForward(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.att.script["C"] = []scripted{taskFail("x"), taskFail("y")}
	st, _ := w.rush(context.Background())
	merged := st.Merged[1].Head
	w.git.branches[IntegrationBranch("f")] = "base" // as if the update never happened
	w.log.events = w.log.all()[:slices.IndexFunc(w.log.all(), func(e eventlogEvent) bool { return e.Type == runstate.EvLevelMerged })+1]
	w.att.script["C"] = nil
	st, err := w.resume(context.Background())
	assertDelivered(t, w, st, err)
	if c := w.att.attemptsOf("C"); c[len(c)-1].Base != merged {
		t.Errorf("C ran from %s, want the recorded head %s", c[len(c)-1].Base, merged)
	}
}

// A user's commit on the integration branch is built upon, never dropped.
func TestResumeBuildsOnAUserCommit(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.att.script["C"] = []scripted{taskFail("x"), taskFail("y")}
	st, _ := w.rush(context.Background())
	user := w.git.commit("user-fix", st.Head)
	w.git.branches[IntegrationBranch("f")] = user
	if _, err := w.replayRetry("C"); err != nil {
		t.Fatal(err)
	}
	st, err := w.resume(context.Background())
	assertDelivered(t, w, st, err)
	if c := w.att.attemptsOf("C"); c[len(c)-1].Base != user {
		t.Errorf("C ran from %s, want the user's commit", c[len(c)-1].Base)
	}
	if ok, _ := w.git.IsAncestor(context.Background(), user, st.Head); !ok {
		t.Error("the user's commit is not in the delivered head")
	}
}

// A branch moved sideways or backwards is refused, and nothing is written.
func TestResumeRefusesAMovedBranch(t *testing.T) {
	for name, move := range map[string]func(w *world, head string) string{
		"sideways": func(w *world, head string) string { return w.git.commit("elsewhere", "base") },
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, twoLevels)
			w.att.script["C"] = []scripted{taskFail("x"), taskFail("y")}
			st, _ := w.rush(context.Background())
			w.git.branches[IntegrationBranch("f")] = move(w, st.Head)
			before := len(w.log.all())
			_, err := w.resume(context.Background())
			var re *Error
			if !errors.As(err, &re) || re.Kind != IntegrationMoved || re.Branch != IntegrationBranch("f") {
				t.Fatalf("err %v, want IntegrationMoved naming the branch", err)
			}
			if len(w.log.all()) != before {
				t.Error("a refused resume wrote to the log")
			}
		})
	}
}

func TestResumeRecreatesAMissingBranch(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.att.script["C"] = []scripted{taskFail("x"), taskFail("y")}
	_, _ = w.rush(context.Background())
	delete(w.git.branches, IntegrationBranch("f"))
	w.replayRetry("C")
	st, err := w.resume(context.Background())
	assertDelivered(t, w, st, err)
}

// replayRetry appends what `zerg retry TASK` appends.
func (w *world) replayRetry(task string) (eventlogEvent, error) {
	st := w.replay()
	e, _ := newEvent(runstate.EvTaskRequeued, task, 0, map[string]string{"by": "zerg retry"})
	if err := st.Check(e); err != nil {
		return e, err
	}
	return w.log.AppendData(runstate.EvTaskRequeued, task, 0, map[string]string{"by": "zerg retry"})
}

func TestResumeOfADeliveredRunIsRefused(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.rush(context.Background())
	_, err := w.resume(context.Background())
	if !errors.Is(err, Delivered) {
		t.Fatalf("err %v, want Delivered", err)
	}
}

// A log write that fails inside a worker's callback stops the run as a
// failure naming the write, never as an interrupt that --resume would hide.
func TestEventLogWriteErrorInACallback(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.log.failOn = runstate.EvAttemptPIDs
	st, err := w.rush(context.Background())
	if err == nil || errors.Is(err, Interrupted) || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err %v, want the write error", err)
	}
	if st.Stopped != nil || st.Finished == nil || st.Finished.Delivered {
		t.Errorf("stopped %+v finished %+v", st.Stopped, st.Finished)
	}
}

// zerg retry gives a fresh budget for infra failures too.
func TestRetryResetsTheInfraBudget(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.att.script["A"] = []scripted{infra, infra, infra, infra, pass}
	if _, err := w.rush(context.Background()); !errors.Is(err, NotDelivered) {
		t.Fatalf("first run: %v", err)
	}
	if _, err := w.replayRetry("A"); err != nil {
		t.Fatal(err)
	}
	st, err := w.resume(context.Background())
	assertDelivered(t, w, st, err)
}

// The retry prompt tells the model what the failed attempt did and what
// broke: the diagnosis, the end of the verification's output, the diff
// (the retry starts from the base again), but never a diff that held a
// secret.
func TestRetryPromptCarriesTheFailure(t *testing.T) {
	c := &Coordinator{paths: Paths{RunDir: t.TempDir()}}
	dir := c.paths.AttemptDir("A", 1)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "verify.log"), []byte("--- FAIL: TestKeepsDigits (0.00s)\n    upper_test.go:9: upper(\"a1\") = \"A\", want \"A1\"\nFAIL\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "diff.patch"), []byte("+++ b/upper.go\n+func Upper(s string) string { return strings.ToUpper(onlyLetters(s)) }\n"), 0o600)
	ts := runstate.TaskState{Diagnosis: "verification_failed: exit 1", DiagnosedAttempt: 1,
		Hypothesis: &diagnose.Hypothesis{Pattern: diagnose.TestAssertion, Confidence: 0.93, Evidence: []string{"upper_test.go:9 TestKeepsDigits"}, Fix: "make the code give what the failing test expects"}}
	got := c.previous("A", ts)
	for _, want := range []string{"attempt 1: verification_failed", "Diagnosis: test_assertion (93% sure): upper_test.go:9 TestKeepsDigits",
		`want "A1"`, "starts from the base again", "onlyLetters"} {
		if !strings.Contains(got, want) {
			t.Errorf("the retry prompt lacks %q:\n%s", want, got)
		}
	}
	ts.Hypothesis = &diagnose.Hypothesis{Pattern: diagnose.SecretFound, Confidence: 1, Fix: "never put credentials in files"}
	if got := c.previous("A", ts); strings.Contains(got, "onlyLetters") || !strings.Contains(got, "held a secret") {
		t.Errorf("a diff that held a secret is shown again:\n%s", got)
	}
	if got := c.previous("A", runstate.TaskState{}); got != "" {
		t.Errorf("before any failure: %q", got)
	}
}

// TestGateRecords: a failed gate's whole output is in its log in the run's
// directory (the event keeps its beginning and its end), and the tasks
// whose files the output names are recorded and named in the level's
// reason, a clone's absolute prefix and a line number notwithstanding.
func TestGateRecords(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.git.breaks = map[string]bool{}
	// c.txt is C's, a task of level 2: its work is not on this head.
	long := "collected 3 items\nFAILED /tmp/zerg/_gate-tests/b.txt:12: in test_b, which reads c.txt\n" + strings.Repeat("warning: noise\n", 400) + "1 failed\n"
	w.git.gateOut = long
	w.git.gateExit["tests"] = 1
	st, err := w.rush(context.Background())
	if !errors.Is(err, NotDelivered) || len(st.Gates) != 1 {
		t.Fatalf("err %v, gates %+v", err, st.Gates)
	}
	g := st.Gates[0]
	if got, ok := ReadGateLog(w.runDir, g); !ok || got != long {
		t.Errorf("gate log %q (%v): not the whole output", g.Log, ok)
	}
	if !strings.Contains(g.Output, "FAILED /tmp/zerg/_gate-tests/b.txt:12: in test_b, which reads c.txt") || !strings.Contains(g.Output, "1 failed") || len(g.Output) > 3200 {
		t.Errorf("the event's excerpt (%d bytes) lacks the beginning or the end:\n%s", len(g.Output), g.Output)
	}
	if !slices.Equal(g.Named, []string{"B"}) || st.FailedLevel == nil || !strings.Contains(st.FailedLevel.Reason, "its output names files of B") {
		t.Errorf("named %v, level %+v", g.Named, st.FailedLevel)
	}
}

// TestGateWhenLastLevel: a last_level gate runs only on the merge that
// completes the graph, an every_level one on each; a last_level gate that
// fails fails the last level.
func TestGateWhenLastLevel(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.cfg.Gates = []config.Gate{{Name: "lint", Command: "true", Required: true},
		{Name: "suite", Command: "true", Required: true, When: config.GateLastLevel}}
	st, err := w.rush(context.Background())
	assertDelivered(t, w, st, err)
	var ran []string
	for _, g := range st.Gates {
		ran = append(ran, fmt.Sprintf("%s@%d", g.Name, g.Level))
	}
	if want := []string{"lint@1", "lint@2", "suite@2"}; !slices.Equal(ran, want) {
		t.Errorf("gates ran %v, want %v", ran, want)
	}

	w = newWorld(t, twoLevels)
	w.cfg.Gates = []config.Gate{{Name: "suite", Command: "true", Required: true, When: config.GateLastLevel}}
	w.git.gateExit["suite"] = 1
	st, err = w.rush(context.Background())
	if !errors.Is(err, NotDelivered) || len(st.Merged) != 1 || st.FailedLevel == nil || st.FailedLevel.Level != 2 {
		t.Errorf("err %v, merged %v, failed %+v", err, st.Merged, st.FailedLevel)
	}
}
