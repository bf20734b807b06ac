package rush

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// The DAG schedule (docs/schedule.md) end to end: the real binary, git and
// Claude Code CLI against the scripted API, on the demo project.

// withSchedule sets the project's schedule.
func withSchedule(t *testing.T, dir, schedule string) {
	t.Helper()
	editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
		return strings.TrimRight(s, "\n") + "\nschedule: " + schedule + "\n"
	})
}

// slowUpper makes both of L1-upper's answers wait (each under the
// gateway's 30 s wait for an answer's headers): L2-greet-all (on the names
// and greet branch) has all it needs long before.
func slowUpper(t *testing.T, dir, delay string) {
	t.Helper()
	editFile(t, scenarioPath(dir), func(s string) string {
		first := "      - delay: 300ms\n        tools: [{name: Write, input: {file_path: lib/upper.sh"
		last := "      - text: \"Added upper to lib/upper.sh.\""
		if !strings.Contains(s, first) || !strings.Contains(s, last) {
			t.Fatal("the demo scenario changed: no L1-upper turns to slow down")
		}
		s = strings.Replace(s, first, "      - delay: "+delay+"\n        tools: [{name: Write, input: {file_path: lib/upper.sh", 1)
		return strings.Replace(s, last, "      - delay: "+delay+"\n        text: \"Added upper to lib/upper.sh.\"", 1)
	})
}

// seq is the log position of the first event of the type for the task (0:
// none).
func seq(evs []eventlog.Event, typ, task string) int64 {
	for _, e := range evs {
		if e.Type == typ && e.Task == task {
			return e.Seq
		}
	}
	return 0
}

// TestDAGStartsAFastBranchEarly: under dag, L2-greet-all (whose
// dependencies, L1-names and L1-greet, are quick) starts while L1-upper, of
// the level before, still works; read from the log's order. Control: the
// same project under level, where L2-greet-all starts only after level 1
// merged. Both deliver the same tree, and the dag run's log holds what a
// makespan needs: the run's start and end, each task's start and merge.
func TestDAGStartsAFastBranchEarly(t *testing.T) {
	t.Parallel()
	type outcome struct {
		p   *project
		r   result
		evs []eventlog.Event
	}
	runs := map[string]*outcome{}
	var wg sync.WaitGroup
	for _, schedule := range []string{"dag", "level"} {
		p := newProject(t, func(dir string) {
			withSchedule(t, dir, schedule)
			slowUpper(t, dir, "15s")
		})
		o := &outcome{p: p}
		runs[schedule] = o
		wg.Go(func() {
			o.r = p.zerg("rush", "demo", "--rehearse", "--workers", "4")
		})
	}
	wg.Wait()
	for schedule, o := range runs {
		if o.r.code != 0 {
			t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", schedule, o.r.code, o.r.stdout, o.r.stderr)
		}
		o.evs = o.p.events()
	}
	early := func(evs []eventlog.Event) bool {
		start, slowEnd := seq(evs, runstate.EvAttemptStarted, "L2-greet-all"), seq(evs, runstate.EvAttemptFinished, "L1-upper")
		return start > 0 && slowEnd > 0 && start < slowEnd
	}
	if !early(runs["dag"].evs) {
		t.Errorf("dag: L2-greet-all did not start before L1-upper finished:\n%s", runs["dag"].r.stdout)
	}
	if early(runs["level"].evs) {
		t.Error("control: under level, L2-greet-all started before L1-upper finished")
	}
	if a, b := runs["dag"].p.deliverable(), runs["level"].p.deliverable(); a != b {
		t.Errorf("dag delivered another tree than level:\n%s\nlevel:\n%s", a, b)
	}
	st := runstate.Replay(runs["dag"].evs)
	if st.Started.Schedule != "dag" || len(st.Batches) < 2 || len(st.Merged) != 0 {
		t.Errorf("dag run: schedule %q, %d batches, %d level merges", st.Started.Schedule, len(st.Batches), len(st.Merged))
	}
	if !strings.Contains(runs["dag"].r.stdout, "demo: DELIVERED") || !strings.Contains(runs["dag"].r.stdout, "schedule dag:") {
		t.Errorf("dag report:\n%s", runs["dag"].r.stdout)
	}
	// The makespan and each task's span are in the log.
	evs := runs["dag"].evs
	if evs[0].Type != runstate.EvRunStarted || evs[len(evs)-1].Type != runstate.EvRunFinished || !evs[len(evs)-1].Time.After(evs[0].Time) {
		t.Errorf("the log does not open with run_started and close with run_finished: %s … %s", evs[0].Type, evs[len(evs)-1].Type)
	}
	for _, id := range allTasks {
		if seq(evs, runstate.EvAttemptStarted, id) == 0 || st.Task(id).MergedHead == "" {
			t.Errorf("%s: no start or merge in the log", id)
		}
	}
	// A figure, not an assertion: both runs' makespans (go test -v shows them).
	for _, schedule := range []string{"level", "dag"} {
		e := runs[schedule].evs
		t.Logf("%s: makespan %s (run_started → run_finished)", schedule, e[len(e)-1].Time.Sub(e[0].Time).Round(100*time.Millisecond))
	}
	runs["dag"].p.assertUserUntouched()
}

var allTasks = []string{"L1-names", "L1-greet", "L1-upper", "L1-docs", "L2-greet-all", "L2-shout", "L3-tests"}

// TestDAGBisectsTheTaskThatBreaksAGate: L1-upper's first attempt passes its
// own verification but leaves a TODO that the no-todo gate refuses. The
// batching is arranged, not left to the machine's speed: L1-greet and
// L1-upper think 4 s before writing, so L1-names or L1-docs commits first,
// and the gate sleeps 12 s on heads without lib/greet.sh and lib/upper.sh,
// so both slow tasks commit while the first batch is in the gates and are
// merged in one batch: it fails, bisection names L1-upper alone, the others
// of the batch are merged without running again, and L1-upper's attempt 2
// is prompted with the gate's output (attempt 1's prompt, the control,
// has none). (CI once caught the unarranged version batching L1-upper
// alone.)
func TestDAGBisectsTheTaskThatBreaksAGate(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		withSchedule(t, dir, "dag")
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
			gate := `  - name: no-todo
    command: 'if [ ! -f lib/greet.sh ] && [ ! -f lib/upper.sh ]; then sleep 12; fi; todo=$(grep -rn TODO lib bin 2>/dev/null); if [ -n "$todo" ]; then echo "$todo"; echo "a TODO is left in the code" >&2; exit 1; fi'
    timeout: 120s
    required: true
`
			if !strings.Contains(s, "\nsecurity_rules:") {
				t.Fatal("the demo config changed: no security_rules after gates")
			}
			return strings.Replace(s, "\nsecurity_rules:", "\n"+gate+"security_rules:", 1)
		})
		editFile(t, scenarioPath(dir), func(s string) string {
			for _, lib := range []string{"greet", "upper"} {
				slow := "- delay: 4s\n        tools: [{name: Write, input: {file_path: lib/" + lib + ".sh,"
				s = strings.Replace(s, "- delay: 300ms\n        tools: [{name: Write, input: {file_path: lib/"+lib+".sh,", slow, 1)
				if !strings.Contains(s, slow) {
					t.Fatalf("the demo scenario changed: no 300ms delay before lib/%s.sh", lib)
				}
			}
			s = strings.Replace(s, `content: "upper() {\n  tr '[:lower:]' '[:upper:]'\n}\n"}}]
      - text: "Added upper to lib/upper.sh."`, `content: "upper() {\n  # TODO: other locales\n  tr '[:lower:]' '[:upper:]'\n}\n"}}]
      - text: "Added upper to lib/upper.sh."`, 1)
			retry := `  - name: upper-retry
    match_regexp: "(?s)Task L1-upper:.*Previous attempt failed"
    turns:
      - tools: [{name: Write, input: {file_path: lib/upper.sh, content: "upper() {\n  tr '[:lower:]' '[:upper:]'\n}\n"}}]
      - text: "Removed the TODO."

  - name: upper
`
			if !strings.Contains(s, "# TODO: other locales") || !strings.Contains(s, "  - name: upper\n") {
				t.Fatal("the demo scenario changed: no L1-upper to edit")
			}
			return strings.Replace(s, "  - name: upper\n", retry, 1)
		})
	})
	r := p.zerg("rush", "demo", "--rehearse", "--workers", "4")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	evs := p.events()
	st := runstate.Replay(evs)
	// The first failing test of the gate was a batch with L1-upper and others.
	var batch []string
	for _, g := range st.Gates {
		if g.Name == "no-todo" && g.Exit != 0 {
			batch = g.Tasks
			break
		}
	}
	if len(batch) < 2 || !slices.Contains(batch, "L1-upper") {
		t.Fatalf("the first no-todo failure was on %v, not a batch holding L1-upper and another task (the run's timing did not batch them):\n%s", batch, r.stdout)
	}
	var named []string
	for _, e := range evs {
		if e.Type == runstate.EvTaskMergeFailed {
			named = append(named, e.Task)
			var d runstate.TaskMergeFailed
			if err := e.Decode(&d); err != nil || d.Gate != "no-todo" || !strings.Contains(d.Output, "TODO") || e.Attempt != 1 {
				t.Errorf("task_merge_failed %+v (attempt %d, %v)", d, e.Attempt, err)
			}
		}
	}
	if !slices.Equal(named, []string{"L1-upper"}) {
		t.Fatalf("bisection named %v, want [L1-upper]\n%s", named, r.stdout)
	}
	for _, id := range batch {
		if id != "L1-upper" && st.Tasks[id].Attempts != 1 {
			t.Errorf("%s (in the failed batch) ran %d attempts, want 1: it merges as it was", id, st.Tasks[id].Attempts)
		}
	}
	for _, id := range allTasks {
		if st.MergeCount[id] != 1 {
			t.Errorf("%s merged %d times", id, st.MergeCount[id])
		}
	}
	if got := st.Tasks["L1-upper"]; got.Attempts != 2 || got.TaskFailures != 1 {
		t.Errorf("L1-upper: %d attempts, %d task failures; want 2 and 1", got.Attempts, got.TaskFailures)
	}
	prompt := func(n string) string {
		b, err := os.ReadFile(filepath.Join(p.dir, ".zerg", "runs", "demo", "attempts", "L1-upper", n, "prompt.md"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, want := range []string{"Previous attempt failed", "quality gate no-todo failed", "lib/upper.sh:2:", "a TODO is left in the code"} {
		if !strings.Contains(prompt("2"), want) {
			t.Errorf("attempt 2's prompt lacks %q:\n%s", want, prompt("2"))
		}
		if strings.Contains(prompt("1"), want) {
			t.Errorf("control: attempt 1's prompt has %q", want)
		}
	}
	if !p.integrationFiles()["lib/upper.sh"] || strings.Contains(p.git("show", run.IntegrationBranch("demo")+":lib/upper.sh"), "TODO") {
		t.Error("the integration branch lacks the fixed lib/upper.sh")
	}
	p.assertUserUntouched()
}

// TestDAGKillAndResume: a dag run killed while L2-greet-all works (L1-upper
// still slow) resumes with what was merged: those tasks do not run again,
// and the run delivers the tree of an uninterrupted level run. A resume
// that asks to cross to the level schedule is refused with exit 2 and
// writes nothing.
func TestDAGKillAndResume(t *testing.T) {
	t.Parallel()
	want := referenceTree(t)
	p := newProject(t, func(dir string) {
		withSchedule(t, dir, "dag")
		slowUpper(t, dir, "10s")
	})
	cmd, _ := p.startRushUntil(runstate.EvAttemptPIDs, "L2-greet-all")
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	before := runstate.Replay(p.events())
	var mergedBefore []string
	for _, id := range allTasks {
		if before.Task(id).Status == runstate.StatusMerged {
			mergedBefore = append(mergedBefore, id)
		}
	}
	if len(mergedBefore) == 0 || before.Task("L1-upper").Status == runstate.StatusMerged {
		t.Fatalf("the kill did not land with some tasks merged and L1-upper not: merged %v", mergedBefore)
	}

	n := len(p.events())
	r := p.zerg("rush", "demo", "--rehearse", "--resume", "--schedule", "level")
	if r.code != 2 || !strings.Contains(r.stderr, "runs with schedule dag") || !strings.Contains(r.stderr, "--schedule dag") {
		t.Errorf("resume across schedules: exit %d\n%s", r.code, r.stderr)
	}
	if len(p.events()) != n {
		t.Error("the refused resume wrote to the log")
	}

	r = p.zerg("rush", "demo", "--rehearse", "--resume")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := p.deliverable(); got != want {
		t.Errorf("resumed integration branch differs from the uninterrupted level run's:\n%s\nwant:\n%s", got, want)
	}
	st := runstate.Replay(p.events())
	for _, id := range allTasks {
		if st.MergeCount[id] != 1 {
			t.Errorf("%s merged %d times", id, st.MergeCount[id])
		}
	}
	for _, id := range mergedBefore {
		if st.Tasks[id].Attempts != before.Tasks[id].Attempts {
			t.Errorf("%s, merged before the kill, ran again (%d attempts, %d before)", id, st.Tasks[id].Attempts, before.Tasks[id].Attempts)
		}
	}
	if st.Resumes != 1 || st.Schedule != "dag" {
		t.Errorf("resumes %d, schedule %q", st.Resumes, st.Schedule)
	}
	p.assertUserUntouched()
}
