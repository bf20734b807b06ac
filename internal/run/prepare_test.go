package run

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/runstate"
)

// preparingAttempter is the fake attempter with Preparer: it records what
// the coordinator asked it to prepare, and each attempt reports that its
// worker heard from the model once thinks[task] is closed (at once for a
// task without one).
type preparingAttempter struct {
	*fakeAttempter
	thinks map[string]chan struct{}

	pmu       sync.Mutex
	prepared  []AttemptRequest
	discarded int
}

func (p *preparingAttempter) Attempt(ctx context.Context, r AttemptRequest) (attempt.Result, error) {
	if ch := p.thinks[r.Task.ID]; ch != nil {
		go func() {
			<-ch
			r.OnProgress(claude.Progress{LastEvent: time.Now()})
		}()
	} else {
		r.OnProgress(claude.Progress{LastEvent: time.Now()})
	}
	return p.fakeAttempter.Attempt(ctx, r)
}

func (p *preparingAttempter) Prepare(ctx context.Context, req AttemptRequest) {
	p.pmu.Lock()
	defer p.pmu.Unlock()
	p.prepared = append(p.prepared, req)
}

func (p *preparingAttempter) DiscardPrepared() {
	p.pmu.Lock()
	defer p.pmu.Unlock()
	p.discarded++
}

func (p *preparingAttempter) preparedTasks() []string {
	p.pmu.Lock()
	defer p.pmu.Unlock()
	var ids []string
	for _, r := range p.prepared {
		ids = append(ids, r.Task.ID)
	}
	return ids
}

// With a driver that prepares workers, the attempts that start next (level:
// the next level's first; dag: C, whose dependency A is running) are
// prepared from the head of the moment once every running attempt has
// heard from the model, not before; the attempt then runs from its own,
// newer base; what is left is thrown away at the end. Control: a driver
// without the capability prepares nothing.
func TestPreparesWhatStartsNextWhileTheRunningThink(t *testing.T) {
	for _, tc := range []struct {
		name     string
		schedule string
		caps     driver.Capabilities
		want     []string
	}{
		{"level, a driver that prepares", config.ScheduleLevel, driver.Capabilities{PreparesWorkers: true}, []string{"C"}},
		{"dag, a driver that prepares", config.ScheduleDAG, driver.Capabilities{PreparesWorkers: true}, []string{"C"}},
		{"a driver that cannot (control)", config.ScheduleLevel, driver.Capabilities{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, twoLevels)
			w.cfg.Schedule = tc.schedule
			release, aThinks := make(chan struct{}), make(chan struct{})
			w.att.script["A"] = []scripted{{class: pass.class, reason: pass.reason, hold: release}}
			w.att.script["B"] = []scripted{{class: pass.class, reason: pass.reason, hold: release}}
			pa := &preparingAttempter{fakeAttempter: w.att, thinks: map[string]chan struct{}{"A": aThinks}}
			c := w.coordinator(runstate.NewState())
			c.caps, c.d.Attempter = &tc.caps, pa
			done := make(chan error, 1)
			var st *runstate.State
			go func() {
				var err error
				st, err = c.execute(context.Background())
				done <- err
			}()
			// B hears from the model, A not yet: nothing is prepared.
			time.Sleep(400 * time.Millisecond)
			if got := pa.preparedTasks(); len(got) > 0 {
				t.Errorf("prepared %v before every running attempt heard from the model", got)
			}
			close(aThinks)
			for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && len(pa.preparedTasks()) < len(tc.want); {
				time.Sleep(10 * time.Millisecond)
			}
			if tc.want == nil {
				time.Sleep(300 * time.Millisecond)
			}
			close(release)
			err := <-done
			assertDelivered(t, w, st, err)
			if got := pa.preparedTasks(); !slices.Equal(got, tc.want) {
				t.Fatalf("prepared %v, want %v", got, tc.want)
			}
			if tc.want == nil {
				return
			}
			req := pa.prepared[0]
			if req.Number != 1 || req.Base != "base" || req.Workspace != c.paths.Workspace("C", 1) || req.Dir != c.paths.AttemptDir("C", 1) {
				t.Errorf("prepared %+v, want C's first attempt from level 1's base", req)
			}
			ran := w.att.attemptsOf("C")
			if len(ran) != 1 || ran[0].Number != req.Number || ran[0].Base == req.Base || !strings.Contains(ran[0].Base, "A") {
				t.Errorf("C ran %+v: the attempt prepared for, from a head that holds A", ran)
			}
			if pa.discarded != 1 {
				t.Errorf("DiscardPrepared called %d times, want once at the end", pa.discarded)
			}
		})
	}
}

// Under dag, what to prepare: nothing while a running attempt has not
// heard from the model; else the tasks not started whose dependencies are
// all under way, no more than workers prepared and not yet started at
// once, and never a task whose dependency failed.
func TestDagAhead(t *testing.T) {
	const g = `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "level": 1, "files": {"create": ["a.txt"]}},
 {"id": "X", "title": "x", "level": 1, "files": {"create": ["x.txt"]}},
 {"id": "C", "title": "c", "level": 2, "dependencies": ["A"], "files": {"create": ["c.txt"]}},
 {"id": "D", "title": "d", "level": 2, "dependencies": ["A"], "files": {"create": ["d.txt"]}},
 {"id": "E", "title": "e", "level": 2, "dependencies": ["A"], "files": {"create": ["e.txt"]}},
 {"id": "F", "title": "f", "level": 2, "dependencies": ["X"], "files": {"create": ["f.txt"]}}
]}`
	ids := func(reqs []AttemptRequest) []string {
		var out []string
		for _, r := range reqs {
			out = append(out, r.Task.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		workers int
		heard   bool
		xStatus runstate.Status
		asked   []string
		want    []string
	}{
		{"a running attempt has not heard from the model", 2, false, runstate.StatusRunning, nil, nil},
		{"two workers: the first two", 2, true, runstate.StatusRunning, nil, []string{"C", "D"}},
		{"one prepared and waiting: one more", 2, true, runstate.StatusRunning, []string{"C"}, []string{"D"}},
		{"X running: F too", 4, true, runstate.StatusRunning, []string{"C", "D", "E"}, []string{"F"}},
		{"X failed: F never", 4, true, runstate.StatusFailed, []string{"C", "D", "E"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, g)
			st := runstate.NewState()
			st.Head = "h1"
			st.Tasks["A"] = &runstate.TaskState{Status: runstate.StatusRunning, Attempts: 1}
			st.Tasks["X"] = &runstate.TaskState{Status: tc.xStatus, Attempts: 1}
			c := w.coordinator(st)
			c.workers = tc.workers
			c.live = map[string]runstate.LiveAttempt{"A": {Attempt: 1}}
			if tc.heard {
				c.live["A"] = runstate.LiveAttempt{Attempt: 1, LastEvent: time.Now()}
			}
			asked := map[string]bool{}
			for _, id := range tc.asked {
				asked[id] = true
			}
			reqs := c.dagAhead(dagOrder(c.graph), chainMinutes(c.graph), asked)
			if got := ids(reqs); !slices.Equal(got, tc.want) {
				t.Fatalf("prepare %v, want %v", got, tc.want)
			}
			for _, r := range reqs {
				if r.Number != 1 || r.Base != "h1" {
					t.Errorf("%s: attempt %d from %s, want the first from the head of the moment", r.Task.ID, r.Number, r.Base)
				}
			}
		})
	}
}

// Under dag, the workers prepared are those of the tasks dagStarts will
// start first: with estimates, the longest chain ahead, not the graph's
// order (a worker prepared for another task is of no use and is thrown
// away). Control: without estimates the graph's order stays.
func TestDagAheadPreparesWhatStartsFirst(t *testing.T) {
	graph := func(estimates bool) string {
		est := func(m int) string {
			if !estimates {
				return ""
			}
			return `"estimate_minutes": ` + strconv.Itoa(m) + `, `
		}
		return `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "level": 1, "files": {"create": ["a.txt"]}},
 {"id": "C", "title": "c", "level": 2, "dependencies": ["A"], ` + est(1) + `"files": {"create": ["c.txt"]}},
 {"id": "D", "title": "d", "level": 2, "dependencies": ["A"], ` + est(2) + `"files": {"create": ["d.txt"]}},
 {"id": "E", "title": "e", "level": 2, "dependencies": ["A"], ` + est(30) + `"files": {"create": ["e.txt"]}}
]}`
	}
	for _, tc := range []struct {
		estimates bool
		want      []string
	}{{true, []string{"E", "D"}}, {false, []string{"C", "D"}}} {
		w := newWorld(t, graph(tc.estimates))
		st := runstate.NewState()
		st.Head = "h1"
		st.Tasks["A"] = &runstate.TaskState{Status: runstate.StatusRunning, Attempts: 1}
		c := w.coordinator(st)
		c.workers = 2
		c.live = map[string]runstate.LiveAttempt{"A": {Attempt: 1, LastEvent: time.Now()}}
		var got []string
		for _, r := range c.dagAhead(dagOrder(c.graph), chainMinutes(c.graph), map[string]bool{}) {
			got = append(got, r.Task.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("estimates %v: prepare %v, want %v", tc.estimates, got, tc.want)
		}
		// What dagStarts starts once A is merged, with two workers free.
		starts := dagStarts(fakeView(t, graph(tc.estimates), map[string]runstate.Status{"A": runstate.StatusMerged}), 2)
		if !slices.Equal(starts, got) {
			t.Errorf("estimates %v: prepared %v, but dagStarts starts %v", tc.estimates, got, starts)
		}
	}
}
