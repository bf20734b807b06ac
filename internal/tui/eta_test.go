package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/runstate"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func task(id string, level int, st runstate.Status, estMin float64, workerS int64) runstate.TaskView {
	return runstate.TaskView{ID: id, Level: level, Status: st, EstimateMS: int64(estMin * 60_000), WorkerMS: workerS * 1000}
}

func TestETA(t *testing.T) {
	for _, c := range []struct {
		name  string
		v     runstate.View
		want  time.Duration
		known bool
	}{
		{"nothing to measure by", runstate.View{Workers: 2, Tasks: []runstate.TaskView{task("a", 1, runstate.StatusPending, 0, 0)}}, 0, false},
		{"estimates as they stand before anything finished", runstate.View{Workers: 2, Tasks: []runstate.TaskView{
			task("a", 1, runstate.StatusPending, 2, 0), task("b", 1, runstate.StatusPending, 2, 0), task("c", 2, runstate.StatusPending, 1, 0)}},
			3 * time.Minute, true},
		// a took 1 minute against an estimate of 2: everything takes half.
		{"scaled by the actual times", runstate.View{Workers: 2, Tasks: []runstate.TaskView{
			task("a", 1, runstate.StatusMerged, 2, 60), task("b", 2, runstate.StatusPending, 4, 0), task("c", 2, runstate.StatusPending, 4, 0)}},
			2 * time.Minute, true},
		// One worker: level 2's two tasks one after the other.
		{"work spread over the workers", runstate.View{Workers: 1, Tasks: []runstate.TaskView{
			task("a", 1, runstate.StatusMerged, 2, 60), task("b", 2, runstate.StatusPending, 4, 0), task("c", 2, runstate.StatusPending, 4, 0)}},
			4 * time.Minute, true},
		{"no estimates: the mean finished time", runstate.View{Workers: 4, Tasks: []runstate.TaskView{
			task("a", 1, runstate.StatusMerged, 0, 30), task("b", 1, runstate.StatusCommitted, 0, 90), task("c", 2, runstate.StatusPending, 0, 0)}},
			time.Minute, true},
		{"failed and blocked tasks do not run", runstate.View{Workers: 2, Tasks: []runstate.TaskView{
			task("a", 1, runstate.StatusFailed, 2, 60), task("b", 2, runstate.StatusBlocked, 4, 0)}},
			0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := ETA(c.v, t0)
			if ok != c.known || got != c.want {
				t.Errorf("ETA = %s, %v; want %s, %v", got, ok, c.want, c.known)
			}
		})
	}
}

// TestETARunningTask: a running task has its elapsed time off its
// expectation, and one past it has a tenth left, not a negative time.
func TestETARunningTask(t *testing.T) {
	v := runstate.View{Workers: 1, Tasks: []runstate.TaskView{task("a", 1, runstate.StatusRunning, 2, 0)}}
	v.Tasks[0].Running = &runstate.RunningView{Attempt: 1, Started: t0.Add(-30 * time.Second)}
	if got, _ := ETA(v, t0); got != 90*time.Second {
		t.Errorf("ETA = %s, want 1m30s", got)
	}
	v.Tasks[0].Running.Started = t0.Add(-10 * time.Minute)
	if got, _ := ETA(v, t0); got != 12*time.Second {
		t.Errorf("overdue: ETA = %s, want 12s", got)
	}
}

func TestLevelFraction(t *testing.T) {
	tasks := []runstate.TaskView{task("a", 1, runstate.StatusMerged, 0, 0), task("b", 1, runstate.StatusCommitted, 0, 0),
		task("c", 1, runstate.StatusRunning, 0, 0), task("d", 1, runstate.StatusPending, 0, 0)}
	l := runstate.LevelView{Level: 1, State: "running", Tasks: []string{"a", "b", "c", "d"}}
	if f := LevelFraction(l, tasks); f != 0.5 {
		t.Errorf("fraction %v, want 0.5", f)
	}
	l.State = "merged"
	if f := LevelFraction(l, tasks); f != 1 {
		t.Errorf("merged level: %v, want 1", f)
	}
}

// TestETADAG: under the dag schedule what is left takes its longest chain
// of dependencies or its work over the workers, whichever is longer, not
// the sum of its levels. Control: the same view under level sums them.
func TestETADAG(t *testing.T) {
	dep := func(tv runstate.TaskView, deps ...string) runstate.TaskView { tv.Dependencies = deps; return tv }
	v := runstate.View{Workers: 4, Schedule: "dag", Tasks: []runstate.TaskView{
		task("a", 1, runstate.StatusPending, 10, 0), task("b", 1, runstate.StatusPending, 1, 0),
		dep(task("c", 2, runstate.StatusPending, 1, 0), "b"), dep(task("d", 3, runstate.StatusPending, 1, 0), "c")}}
	// The chain a (10) beats b → c → d (3) and the work 13/4.
	if got, ok := ETA(v, t0); !ok || got != 10*time.Minute {
		t.Errorf("dag: ETA = %s, want 10m", got)
	}
	// One worker: the work, 13 minutes.
	v.Workers = 1
	if got, _ := ETA(v, t0); got != 13*time.Minute {
		t.Errorf("dag, one worker: ETA = %s, want 13m", got)
	}
	v.Workers, v.Schedule = 4, "level"
	if got, _ := ETA(v, t0); got != 12*time.Minute {
		t.Errorf("control, level: ETA = %s, want 12m (10 + 1 + 1)", got)
	}
}

// TestHeaderNamesTheDAGSchedule: under dag the header says so and counts
// the merged batches (the levels below are then the graph's depth);
// control: a level run's header does not.
func TestHeaderNamesTheDAGSchedule(t *testing.T) {
	m := New(Config{})
	v := runstate.View{Feature: "demo", State: runstate.RunRunning, Workers: 2, Schedule: "dag", Batches: 3}
	if h := m.header(v, t0); !strings.Contains(h, "dag, 3 merged batches") {
		t.Errorf("dag header: %q", h)
	}
	v.Schedule = "level"
	if h := m.header(v, t0); strings.Contains(h, "dag") {
		t.Errorf("level header: %q", h)
	}
}
