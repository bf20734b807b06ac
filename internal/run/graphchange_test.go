package run

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/runstate"
)

// The bug: a task added to an already merged level, a failed task retried,
// --resume: the run said DELIVERED with the new task never run. Now the
// added task runs and the run delivers only with every task merged.
func TestResumeRunsATaskAddedToAMergedLevel(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.att.script["C"] = []scripted{taskFail("x"), taskFail("y")}
	if _, err := w.rush(context.Background()); !errors.Is(err, NotDelivered) {
		t.Fatalf("first run: %v", err)
	}
	w.graph = mustGraph(t, strings.Replace(twoLevels, `{"id": "B"`, `{"id": "N", "title": "new", "level": 1, "files": {"create": ["n.txt"]}},
 {"id": "B"`, 1))
	w.replayRetry("C")
	st, err := w.resume(context.Background())
	assertDelivered(t, w, st, err)
	if n := len(w.att.attemptsOf("N")); n != 1 {
		t.Errorf("N ran %d times, want 1", n)
	}
	// N was merged on top of the merged level 1; A and B were not redone.
	if !slices.ContainsFunc(w.git.merges, func(m []string) bool { return slices.Equal(m, []string{"N"}) }) {
		t.Errorf("merges %v: N not merged on its own", w.git.merges)
	}
	if n := len(w.att.attemptsOf("A")); n != 1 {
		t.Errorf("A ran %d times, want 1", n)
	}
	var ch runstate.GraphChanged
	for _, e := range w.log.all() {
		if e.Type == runstate.EvGraphChanged {
			ch = data[runstate.GraphChanged](t, e)
		}
	}
	if !slices.Equal(ch.Added, []string{"N"}) {
		t.Errorf("graph_changed %+v", ch)
	}
	// C ran after N's merge: it started from a head that holds N.
	if c := w.att.attemptsOf("C"); !strings.Contains(c[len(c)-1].Base, "N") {
		t.Errorf("C ran from %s", c[len(c)-1].Base)
	}
}

// A task added to a delivered run makes the resume run it.
func TestResumeOfADeliveredRunWithAnAddedTask(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.rush(context.Background())
	w.graph = mustGraph(t, strings.Replace(twoLevels, "\n]}", `,
 {"id": "D", "title": "d", "level": 2, "files": {"create": ["d.txt"]}}]}`, 1))
	st, err := w.resume(context.Background())
	assertDelivered(t, w, st, err)
}

// Graph edits a run cannot take are refused with the task and the change
// named, and nothing is written.
func TestResumeRefusesEditsOfMergedWork(t *testing.T) {
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"files of a merged task", `"files": {"create": ["a.txt"]}`, `"files": {"create": ["a2.txt"]}`, "task A of f is merged, but its files.create changed"},
		{"level of a merged task", `{"id": "B", "title": "b", "level": 1`, `{"id": "B", "title": "b", "level": 2`, "task B of f is merged, but its level changed"},
		{"a merged task removed", `,
 {"id": "B", "title": "b", "level": 1, "files": {"create": ["b.txt"]}}`, ``, "task B was removed from the task graph of f"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, twoLevels)
			w.att.script["C"] = []scripted{taskFail("x"), taskFail("y")}
			w.rush(context.Background())
			edited := strings.Replace(twoLevels, tc.from, tc.to, 1)
			if edited == twoLevels {
				t.Fatal("the edit did not apply")
			}
			w.graph = mustGraph(t, edited)
			before := len(w.log.all())
			_, err := w.resume(context.Background())
			var re *Error
			if !errors.As(err, &re) || re.Kind != GraphEdit || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want GraphEdit %q", err, tc.want)
			}
			if len(w.log.all()) != before {
				t.Error("a refused resume wrote to the log")
			}
		})
	}
}

// Edits of work that is not merged are taken: a changed task starts over
// with a fresh budget, a removed one leaves the run, a merged task's words
// may change.
func TestResumeTakesEditsOfUnmergedWork(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.att.script["C"] = []scripted{taskFail("x"), taskFail("y")}
	w.rush(context.Background())
	edited := strings.Replace(twoLevels, `{"id": "C", "title": "c", "level": 2, "dependencies": ["A"], "files": {"create": ["c.txt"]}}`,
		`{"id": "C", "title": "c", "level": 2, "dependencies": ["A"], "files": {"create": ["c.txt"]}, "verification": {"command": "test -f c.txt"}}`, 1)
	edited = strings.Replace(edited, `"title": "a"`, `"title": "a, reworded"`, 1)
	w.graph = mustGraph(t, edited)
	st, err := w.resume(context.Background()) // no zerg retry: the change requeues C
	assertDelivered(t, w, st, err)
	if ts := st.Task("C"); ts.TaskFailures != 0 {
		t.Errorf("C kept its old failures: %+v", ts)
	}

	w2 := newWorld(t, twoLevels)
	w2.att.script["C"] = []scripted{taskFail("x"), taskFail("y")}
	w2.rush(context.Background())
	w2.graph = mustGraph(t, strings.Replace(twoLevels, `,
 {"id": "C", "title": "c", "level": 2, "dependencies": ["A"], "files": {"create": ["c.txt"]}}`, ``, 1))
	st, err = w2.resume(context.Background())
	assertDelivered(t, w2, st, err)
	if _, still := st.Tasks["C"]; still {
		t.Error("a removed task is still in the run")
	}
}

func TestDiffGraphsNamesFields(t *testing.T) {
	a := mustGraph(t, twoLevels)
	b := mustGraph(t, strings.Replace(strings.Replace(twoLevels, `"dependencies": ["A"]`, `"dependencies": ["A", "B"]`, 1), `"title": "b"`, `"title": "bee"`, 1))
	d := DiffGraphs(a, b)
	want := []runstate.TaskChange{{Task: "B", Fields: []string{"title"}}, {Task: "C", Fields: []string{"dependencies"}}}
	if len(d.Changed) != 2 || !slices.Equal(d.Changed[0].Fields, want[0].Fields) || d.Changed[1].Task != "C" || !slices.Equal(d.Changed[1].Fields, want[1].Fields) {
		t.Errorf("diff %+v, want %+v", d, want)
	}
	if !DiffGraphs(a, a).Empty() {
		t.Error("a graph differs from itself")
	}
}

func TestResumeMode(t *testing.T) {
	reh := &runstate.RunStarted{Feature: "f", Rehearsal: true, Scenario: "/s.yaml"}
	real := &runstate.RunStarted{Feature: "f"}
	for _, tc := range []struct {
		name     string
		rec      *runstate.RunStarted
		rehearse bool
		scenario string
		want     bool
		wantSc   string
		err      bool
	}{
		{"rehearsal resumed without the flag stays a rehearsal", reh, false, "", true, "/s.yaml", false},
		{"rehearsal keeps its scenario", reh, true, "", true, "/s.yaml", false},
		{"rehearsal with another scenario", reh, true, "/t.yaml", true, "/t.yaml", false},
		{"real run stays real", real, false, "", false, "", false},
		{"real run cannot become a rehearsal", real, true, "", false, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, sc, _, err := resumeMode(tc.rec, tc.rehearse, tc.scenario)
			if (err != nil) != tc.err || got != tc.want || sc != tc.wantSc {
				t.Errorf("got %v %q %v", got, sc, err)
			}
		})
	}
}

// A snapshot the log does not name (a crash between writing it and
// recording graph_changed) is not taken as the recorded graph: the changed
// task would otherwise keep its old commit.
func TestResumeIgnoresASnapshotTheLogDoesNotName(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.att.script["C"] = []scripted{taskFail("x"), taskFail("y")}
	w.rush(context.Background())
	edited := strings.Replace(twoLevels, `"files": {"create": ["b.txt"]}`, `"files": {"create": ["b2.txt"]}`, 1)
	w.graph = mustGraph(t, edited)
	w.snap = []byte(edited) // written, then the crash: no graph_changed
	if _, err := w.resume(context.Background()); !errors.Is(err, GraphEdit) {
		t.Errorf("err %v, want GraphEdit (no usable record of the graph)", err)
	}
}
