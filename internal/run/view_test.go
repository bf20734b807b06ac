package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
)

// The view lists every task of the graph (pending and blocked included),
// each level, the gates, and the coordinator's liveness; a log that no
// coordinator holds and that never ended is a dead run.
func TestViewOfARunningThenDeadRun(t *testing.T) {
	w := newWorld(t, twoLevels)
	hold := make(chan struct{})
	w.att.script["A"] = []scripted{{class: outcome.Success, reason: "completed", hold: hold}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { w.rush(ctx); close(done) }()
	for len(w.att.attemptsOf("A")) == 0 || len(w.att.attemptsOf("B")) == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond) // B's attempt finishes; A's is held
	st := w.replay()                  // what a reader sees mid-run
	live := &runstate.Live{Running: map[string]runstate.LiveAttempt{"A": {Attempt: 1, Turns: 3, Tokens: 99, LastEvent: w.clock.Now()}}}
	v := BuildView("f", st, w.graph, w.graph, runstate.Liveness{Alive: true, PID: 42, Live: live})
	if v.State != runstate.RunRunning || !v.Coordinator.Alive || v.Coordinator.PID != 42 {
		t.Errorf("live view: %s %+v", v.State, v.Coordinator)
	}
	if len(v.Tasks) != 3 || v.Tasks[2].ID != "C" || v.Tasks[2].Status != runstate.StatusPending {
		t.Fatalf("tasks %+v", v.Tasks)
	}
	if r := v.Tasks[0].Running; v.Tasks[0].ID != "A" || r == nil || r.Turns != 3 || r.PID == 0 {
		t.Errorf("A running: %+v", v.Tasks[0])
	}
	if v.Levels[0].State != "running" || v.Levels[1].State != "pending" {
		t.Errorf("levels %+v", v.Levels)
	}
	// The coordinator is gone (nothing holds the log) and wrote no end: A's
	// attempt is not running any more; it was abandoned, last seen at the
	// dead coordinator's last heartbeat.
	beat := st.LastEvent.Add(time.Second)
	dead := BuildView("f", st, w.graph, nil, runstate.Liveness{Last: &runstate.Live{Written: beat}})
	if dead.State != runstate.RunDead || dead.Coordinator.Alive {
		t.Errorf("dead view: %s %+v", dead.State, dead.Coordinator)
	}
	if a := dead.Tasks[0].Abandoned; dead.Tasks[0].Running != nil || a == nil || a.Attempt != 1 || !a.LastSeen.Equal(beat) {
		t.Errorf("A in the dead view: running %+v, abandoned %+v; want abandoned, last seen %s", dead.Tasks[0].Running, a, beat)
	}
	close(hold)
	<-done
}

func TestViewSaysTheGraphChanged(t *testing.T) {
	w := newWorld(t, twoLevels)
	st, _ := w.rush(context.Background())
	edited := mustGraph(t, strings.Replace(twoLevels, `"title": "c"`, `"title": "see"`, 1))
	if v := BuildView("f", st, w.graph, edited, runstate.Liveness{}); !v.GraphChanged || v.State != runstate.RunDelivered || len(v.Gates) != 2 {
		t.Errorf("view %+v", v)
	}
	if v := BuildView("f", st, w.graph, w.graph, runstate.Liveness{}); v.GraphChanged {
		t.Error("an unchanged graph reported as changed")
	}
}

// Without a record of the graph it started with, a resume cannot tell
// what changed: it refuses rather than guess.
func TestResumeWithoutASnapshotRefusesAChangedGraph(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.att.script["C"] = []scripted{taskFail("x"), taskFail("y")}
	w.rush(context.Background())
	w.snap = nil
	w.graph = mustGraph(t, strings.Replace(twoLevels, `"title": "c"`, `"title": "see"`, 1))
	if _, err := w.resume(context.Background()); !errors.Is(err, GraphEdit) {
		t.Errorf("err %v, want GraphEdit", err)
	}
}

// TestClusterAgentsFromTheJournal: the latest lease of each attempt names
// its agent, and a take-back is kept beside it; other records and other
// attempts do not count.
func TestClusterAgentsFromTheJournal(t *testing.T) {
	dir := t.TempDir()
	if driver.ClusterAgents(dir) != nil {
		t.Fatal("a run without a journal has agents")
	}
	journal := `{"kind":"lease","task":"T1","number":1,"agent":"a1","delivery":1}
{"kind":"result_accepted","task":"T1","agent":"a9"}
{"kind":"lease","task":"T1","number":1,"agent":"a2","delivery":2}
{"kind":"lease","task":"T2","number":3,"agent":"a3","delivery":1}
{"kind":"lease","task":"T3","number":1,"agent":"rogue","delivery":1}
{"kind":"lease_taken_back","task":"T3","number":1,"agent":"rogue","delivery":1,"why":"it named its lease in no heartbeat"}
{"kind":"lease","task":"T4","number":1,"agent":"rogue","delivery":1}
{"kind":"lease_taken_back","task":"T4","number":1,"agent":"rogue","delivery":1,"why":"no progress"}
{"kind":"lease","task":"T4","number":1,"agent":"a1","delivery":2}
not json
`
	if err := os.WriteFile(filepath.Join(dir, "cluster.jsonl"), []byte(journal), 0o600); err != nil {
		t.Fatal(err)
	}
	got := driver.ClusterAgents(dir)
	if got["T1/1"].Agent != "a2" || got["T2/3"].Agent != "a3" || len(got) != 4 || got["T1/1"].TakenBack != "" {
		t.Errorf("agents %v, want T1/1 on a2 (its newer lease) and T2/3 on a3", got)
	}
	if h := got["T3/1"]; h.Agent != "" || !strings.Contains(h.TakenBack, "from agent rogue: it named its lease in no heartbeat") {
		t.Errorf("T3/1, taken back and waiting: %+v", h)
	}
	if h := got["T4/1"]; h.Agent != "a1" || !strings.Contains(h.TakenBack, "from agent rogue: no progress") {
		t.Errorf("T4/1, taken back and held again: %+v", h)
	}
}

// TestResumeForgetsWhyATaskWasBlocked: a task blocked by a failed level
// says so; once a resume gives it back (and the level merged), its status
// no longer carries "level 1 failed" while it waits for its turn.
func TestResumeForgetsWhyATaskWasBlocked(t *testing.T) {
	w := newWorld(t, `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "level": 1, "files": {"create": ["a.txt"]}},
 {"id": "B", "title": "b", "level": 2, "dependencies": ["A"], "files": {"create": ["b.txt"]}},
 {"id": "C", "title": "c", "level": 3, "dependencies": ["B"], "files": {"create": ["c.txt"]}}
]}`)
	w.git.gateExit["tests"] = 1
	st, _ := w.rush(context.Background())
	if c := st.Task("C"); c.Status != runstate.StatusBlocked || c.Detail != "level 1 failed" {
		t.Fatalf("C after the failed level: %+v", c)
	}
	// The resume merges level 1; B runs (held) while C waits.
	w.git.gateExit["tests"] = 0
	hold := make(chan struct{})
	w.att.script["B"] = []scripted{{class: outcome.Success, reason: "completed", hold: hold}}
	done := make(chan struct{})
	go func() { w.resume(context.Background()); close(done) }()
	for len(w.att.attemptsOf("B")) == 0 {
		time.Sleep(time.Millisecond)
	}
	st = w.replay()
	v := BuildView("f", st, w.graph, w.graph, runstate.Liveness{Alive: true})
	close(hold)
	<-done
	if _, ok := st.Merged[1]; !ok {
		t.Fatalf("level 1 not merged: %+v", st.Merged)
	}
	for _, tv := range v.Tasks {
		if tv.ID == "C" && (tv.Status != runstate.StatusPending || tv.Detail != "" || tv.Reason != "") {
			t.Errorf("C, waiting for level 3 after level 1 merged: %+v", tv)
		}
	}
}

// TestOldGateFailuresAreSuperseded: a gate that failed on a level that
// later merged (on another head, after a fix) is marked superseded in the
// view, and so is one run again on the same level; the run of the gate
// that passed on the merged head is not.
func TestOldGateFailuresAreSuperseded(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.git.gateExit["tests"] = 1
	w.rush(context.Background())
	w.git.gateExit["tests"] = 0
	w.git.breaks = map[string]bool{} // the merged heads differ on the resume: new attempt commits
	st, err := w.resume(context.Background())
	assertDelivered(t, w, st, err)
	v := BuildView("f", st, w.graph, w.graph, runstate.Liveness{})
	if len(v.Gates) < 3 || v.Gates[0].Exit != 1 || !v.Gates[0].Superseded {
		t.Fatalf("gates %+v", v.Gates)
	}
	for _, g := range v.Gates[1:] {
		if g.Superseded || g.Exit != 0 {
			t.Errorf("a current gate run is marked superseded: %+v", g)
		}
	}
}
