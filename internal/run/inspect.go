package run

import (
	"fmt"
	"time"

	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

// Inspect reads a run for a reader (status, logs, stop): its state from the
// log, the graph it works on, and whether its coordinator is alive.
func Inspect(p Paths) (runstate.View, *runstate.State, error) {
	evs, err := eventlog.Read(p.Events)
	if err != nil {
		return runstate.View{}, nil, err
	}
	st := runstate.Replay(evs)
	var lv runstate.Liveness
	if held, err := eventlog.Held(p.Events); err == nil && held {
		lv.Alive = true
		lv.PID = coordinatorPID(p.Coordinator)
		if l, err := runstate.ReadLive(p.RunDir); err == nil {
			lv.Live = l
		}
	} else if l, err := runstate.ReadLive(p.RunDir); err == nil {
		lv.Last = l
	}
	g, _ := loadGraph(p.GraphSnapshot, p.Root)
	cur, _ := loadGraph(p.Graph, p.Root)
	if g == nil {
		g = cur
	}
	v := BuildView(p.Feature, st, g, cur, lv)
	if agents := driver.ClusterAgents(p.RunDir); len(agents) > 0 {
		for i, t := range v.Tasks {
			if t.Running != nil {
				h := agents[fmt.Sprintf("%s/%d", t.ID, t.Running.Attempt)]
				v.Tasks[i].Running.Agent, v.Tasks[i].Running.TakenBack = h.Agent, h.TakenBack
			}
		}
	}
	if !st.StartedAt.IsZero() {
		end := st.LastEvent
		if v.State == runstate.RunRunning {
			end = time.Now()
		}
		v.DurationMS = end.Sub(st.StartedAt).Milliseconds()
	}
	return v, st, nil
}

// Poller is Inspect's view of the run for a reader that polls it (the live
// view of zerg rush and zerg status --watch).
func Poller(p Paths) func() (runstate.View, error) {
	return func() (runstate.View, error) {
		v, _, err := Inspect(p)
		return v, err
	}
}

// BuildView is runstate.BuildView with the integration branch as the layout
// names it.
func BuildView(feature string, st *runstate.State, g *spec.Graph, pathsGraph *spec.Graph, lv runstate.Liveness) runstate.View {
	return runstate.BuildView(feature, IntegrationBranch(feature), st, g, pathsGraph, lv)
}
