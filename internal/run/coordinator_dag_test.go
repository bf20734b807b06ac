package run

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
)

// branches: A (slow) → C; B (fast) → D. C and D are level 2.
const branches = `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "level": 1, "files": {"create": ["a.txt"]}},
 {"id": "B", "title": "b", "level": 1, "files": {"create": ["b.txt"]}},
 {"id": "C", "title": "c", "level": 2, "dependencies": ["A"], "files": {"create": ["c.txt"]}},
 {"id": "D", "title": "d", "level": 2, "dependencies": ["B"], "files": {"create": ["d.txt"]}}
]}`

// seqOf is the log position of the first event of the type for the task.
func seqOf(t *testing.T, w *world, typ, task string) int64 {
	t.Helper()
	for _, e := range w.log.all() {
		if e.Type == typ && e.Task == task {
			return e.Seq
		}
	}
	t.Fatalf("no %s for %s in %v", typ, task, w.log.types())
	return 0
}

// A's attempt runs until D's starts (or, when D cannot start before A
// ends, for a moment): under dag, D starts while A, of the level before,
// still runs; under level, D waits for A's level.
func TestDAGFastBranchStartsBeforeSlowLevelEnds(t *testing.T) {
	for _, schedule := range []string{config.ScheduleDAG, config.ScheduleLevel} {
		t.Run(schedule, func(t *testing.T) {
			w := newWorld(t, branches)
			w.cfg.Workers = 3
			w.cfg.Schedule = schedule
			release := make(chan struct{})
			var once sync.Once
			w.att.script["A"] = []scripted{{class: outcome.Success, reason: "completed", hold: release}}
			w.att.onStart = func(r AttemptRequest) {
				if r.Task.ID == "D" {
					once.Do(func() { close(release) })
				}
			}
			go func() { time.Sleep(300 * time.Millisecond); once.Do(func() { close(release) }) }()
			st, err := w.rush(context.Background())
			assertDelivered(t, w, st, err)
			early := seqOf(t, w, runstate.EvAttemptStarted, "D") < seqOf(t, w, runstate.EvAttemptFinished, "A")
			if want := schedule == config.ScheduleDAG; early != want {
				t.Errorf("D started before A finished: %v, want %v\n%v", early, want, w.log.types())
			}
			if schedule == config.ScheduleDAG {
				// D started from the head that holds B, not A.
				if d := w.att.attemptsOf("D"); len(d) != 1 || d[0].Base != "m(base+B)" {
					t.Errorf("D ran from %+v", d)
				}
				if len(st.Batches) < 2 || st.Started.Schedule != config.ScheduleDAG {
					t.Errorf("batches %+v, schedule %q", st.Batches, st.Started.Schedule)
				}
			}
		})
	}
}

// committedWorld is a DAG run stopped with A, B and C committed (so one
// batch holds them all) and D, which depends on C, pending.
func committedWorld(t *testing.T) *world {
	t.Helper()
	w := newWorld(t, `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "level": 1, "files": {"create": ["a.txt"]}},
 {"id": "B", "title": "b", "level": 1, "files": {"create": ["b.txt"]}},
 {"id": "C", "title": "c", "level": 1, "files": {"create": ["c.txt"]}},
 {"id": "D", "title": "d", "level": 2, "dependencies": ["C"], "files": {"create": ["d.txt"]}}
]}`)
	w.cfg.Schedule = config.ScheduleDAG
	w.cfg.Workers = 3
	w.snap = w.graph.Raw
	add := func(typ, task string, n int, data any) {
		t.Helper()
		if _, err := w.log.AppendData(typ, task, n, data); err != nil {
			t.Fatal(err)
		}
	}
	add(runstate.EvRunStarted, "", 0, runstate.RunStarted{Feature: "f", Base: "base", Integration: IntegrationBranch("f"), GraphSHA256: graphHash(w.graph), Workers: 3, Schedule: config.ScheduleDAG})
	for _, id := range []string{"A", "B", "C"} {
		add(runstate.EvTaskScheduled, id, 0, runstate.TaskScheduled{Level: 1, Base: "base"})
		add(runstate.EvAttemptStarted, id, 1, runstate.AttemptStarted{Level: 1, Base: "base", Branch: "b-" + id})
		add(runstate.EvAttemptFinished, id, 1, runstate.AttemptFinished{Class: outcome.Success, Reason: "completed", Commit: "c-" + id + "-1"})
	}
	add(runstate.EvRunStopped, "", 0, runstate.RunStopped{Reason: "interrupted"})
	w.git.branches[IntegrationBranch("f")] = "base"
	return w
}

// One batch of three committed tasks fails the gates: bisection names the
// one that broke them, the others merge, and the culprit's retry prompt
// carries the gate's output. Control: with another task breaking the gate,
// the other is named.
func TestDAGBisectionNamesTheCulprit(t *testing.T) {
	for _, culprit := range []string{"C", "A"} {
		t.Run(culprit, func(t *testing.T) {
			w := committedWorld(t)
			w.git.breaks = map[string]bool{"c-" + culprit + "-1": true}
			st, err := w.resume(context.Background())
			assertDelivered(t, w, st, err)
			if first := w.git.merges[0]; !slices.Equal(first, []string{"A", "B", "C"}) {
				t.Errorf("first merge %v, want the whole batch", first)
			}
			var named []string
			for _, e := range w.log.all() {
				if e.Type == runstate.EvTaskMergeFailed {
					named = append(named, e.Task)
					d := data[runstate.TaskMergeFailed](t, e)
					if d.Reason != ReasonGateFailed || d.Gate != "tests" || !strings.Contains(d.Output, "broke the build") || e.Attempt != 1 {
						t.Errorf("task_merge_failed %+v (attempt %d)", d, e.Attempt)
					}
				}
			}
			if !slices.Equal(named, []string{culprit}) {
				t.Fatalf("bisection named %v, want [%s]\n%v", named, culprit, w.log.types())
			}
			for _, id := range []string{"A", "B", "C"} {
				n := len(w.att.attemptsOf(id))
				if want := map[bool]int{true: 1, false: 0}[id == culprit]; n != want {
					t.Errorf("%s ran %d new attempt(s), want %d", id, n, want)
				}
			}
			retry := w.att.attemptsOf(culprit)
			if len(retry) != 1 || retry[0].Number != 2 || !strings.Contains(retry[0].Previous, "quality gate tests failed") ||
				!strings.Contains(retry[0].Previous, "broke the build") {
				t.Errorf("the retry's prompt does not carry the gate's diagnosis: %+v", retry)
			}
			if ts := st.Task(culprit); ts.TaskFailures != 1 {
				t.Errorf("%s: %d task failures, want 1 (a gate failure spends a retry)", culprit, ts.TaskFailures)
			}
			// D waited for C's merge.
			if seqOf(t, w, runstate.EvAttemptStarted, "D") < lastMerge(w, "C") {
				t.Error("D started before C was merged")
			}
		})
	}
}

// lastMerge is the position of the batch_merged event that holds task.
func lastMerge(w *world, task string) int64 {
	var seq int64
	for _, e := range w.log.all() {
		if e.Type == runstate.EvBatchMerged && strings.Contains(string(e.Data), `"`+task+`"`) {
			seq = e.Seq
		}
	}
	return seq
}

// A culprit whose retries are spent fails for good: what depends on it is
// blocked, the rest is merged, and the run is not delivered.
func TestDAGCulpritOutOfRetriesBlocksItsDependents(t *testing.T) {
	w := committedWorld(t)
	w.cfg.Retry.TaskRetries = 0
	w.git.breaks = map[string]bool{"c-C-1": true}
	st, err := w.resume(context.Background())
	if !errors.Is(err, NotDelivered) || !strings.Contains(err.Error(), "C failed") {
		t.Fatalf("err %v", err)
	}
	for id, want := range map[string]runstate.Status{"A": runstate.StatusMerged, "B": runstate.StatusMerged, "C": runstate.StatusFailed, "D": runstate.StatusBlocked} {
		if got := st.Task(id).Status; got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
	if w.git.branches[IntegrationBranch("f")] != st.Head || st.Head == "base" {
		t.Errorf("integration at %s, log head %s", w.git.branches[IntegrationBranch("f")], st.Head)
	}
	re := w.replay()
	if re.Task("D").Status != runstate.StatusBlocked {
		t.Errorf("replayed D: %s", re.Task("D").Status)
	}
	// The view: the schedule and its batches; level 1 is failed (C) with
	// its other tasks merged, level 2 blocked; the gate runs name their
	// batch and tasks.
	v := BuildView("f", re, w.graph, w.graph, runstate.Liveness{})
	if v.Schedule != config.ScheduleDAG || v.Batches != len(re.Batches) || v.Batches < 2 {
		t.Errorf("view: schedule %q, batches %d (log %d)", v.Schedule, v.Batches, len(re.Batches))
	}
	if l := v.Levels[0]; l.State != "failed" || !strings.Contains(l.Reason, "C failed") {
		t.Errorf("level 1: %+v", l)
	}
	if l := v.Levels[1]; l.State != "blocked" {
		t.Errorf("level 2: %+v", l)
	}
	if g := v.Gates[0]; g.Batch != 1 || !slices.Equal(g.Tasks, []string{"A", "B", "C"}) || g.Level != 0 {
		t.Errorf("first gate run: %+v", g)
	}
}

// A level merged task by task shows merged with the head of the batch that
// merged its last task.
func TestDAGLevelViewHead(t *testing.T) {
	w := committedWorld(t)
	st, err := w.resume(context.Background())
	assertDelivered(t, w, st, err)
	v := BuildView("f", w.replay(), w.graph, w.graph, runstate.Liveness{})
	if l := v.Levels[0]; l.State != "merged" || l.Head == "" || l.Head != st.Batches[0].Head {
		t.Errorf("level 1: %+v, batches %+v", l, st.Batches)
	}
	if l := v.Levels[1]; l.State != "merged" || l.Head != st.Head {
		t.Errorf("level 2: %+v, head %s", l, st.Head)
	}
}

// A DAG run stopped mid-way resumes with what was merged: no merged task
// runs again.
func TestDAGInterruptThenResume(t *testing.T) {
	w := newWorld(t, branches)
	w.cfg.Schedule = config.ScheduleDAG
	w.cfg.Workers = 3
	ctx, cancel := context.WithCancel(context.Background())
	hold := make(chan struct{})
	w.att.script["A"] = []scripted{{class: outcome.Success, reason: "completed", hold: hold}}
	w.att.onStart = func(r AttemptRequest) {
		if r.Task.ID == "D" {
			go cancel() // B and D are done or running; A is held
		}
	}
	_, err := w.rush(ctx)
	if !errors.Is(err, Interrupted) {
		t.Fatalf("err %v", err)
	}
	st := w.replay()
	if st.Task("B").Status != runstate.StatusMerged || st.Task("A").Status == runstate.StatusMerged {
		t.Fatalf("after the stop: A %s, B %s", st.Task("A").Status, st.Task("B").Status)
	}
	w.att.onStart = nil
	w.att.script["A"] = nil
	st, err = w.resume(context.Background())
	assertDelivered(t, w, st, err)
	if n := len(w.att.attemptsOf("B")); n != 1 {
		t.Errorf("B ran %d attempts, want 1 (merged before the stop)", n)
	}
}

func TestResumeSchedule(t *testing.T) {
	st := func(s string) *runstate.State {
		return &runstate.State{Started: &runstate.RunStarted{Feature: "f", Schedule: s}, Schedule: s}
	}
	for _, tc := range []struct {
		recorded, asked, want string
		refused               bool
	}{
		{"", "", config.ScheduleLevel, false}, // a log from before the choice
		{config.ScheduleDAG, "", config.ScheduleDAG, false},
		{config.ScheduleDAG, config.ScheduleDAG, config.ScheduleDAG, false},
		{config.ScheduleLevel, config.ScheduleDAG, config.ScheduleDAG, false},
		{"", config.ScheduleDAG, config.ScheduleDAG, false},
		{config.ScheduleDAG, config.ScheduleLevel, "", true},
	} {
		got, _, err := resumeSchedule(st(tc.recorded), tc.asked)
		if (err != nil) != tc.refused || got != tc.want {
			t.Errorf("recorded %q, asked %q: %q, %v; want %q (refused %v)", tc.recorded, tc.asked, got, err, tc.want, tc.refused)
		}
		if err != nil && !strings.Contains(err.Error(), "--schedule dag") {
			t.Errorf("the refusal does not say how to resume: %v", err)
		}
	}
}
