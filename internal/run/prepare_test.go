package run

import (
	"context"
	"slices"
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

// In the level schedule, with a driver that prepares workers, the next
// level's first attempts are prepared from the level's base once every
// running attempt has heard from the model, not before; the unused ones are
// thrown away at the end. Controls: the dag schedule, and a driver
// without the capability, prepare nothing.
func TestPreparesTheNextLevelWhileTheLevelThinks(t *testing.T) {
	for _, tc := range []struct {
		name     string
		schedule string
		caps     driver.Capabilities
		want     []string
	}{
		{"level, a driver that prepares", config.ScheduleLevel, driver.Capabilities{PreparesWorkers: true}, []string{"C"}},
		{"dag (control)", config.ScheduleDAG, driver.Capabilities{PreparesWorkers: true}, nil},
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
			if len(ran) != 1 || ran[0].Number != req.Number || ran[0].Base != "m(base+A,B)" {
				t.Errorf("C ran %+v: the attempt prepared for, from the merged head", ran)
			}
			if pa.discarded != 1 {
				t.Errorf("DiscardPrepared called %d times, want once at the end", pa.discarded)
			}
		})
	}
}
