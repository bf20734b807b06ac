package picture

import (
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

// FromGraph turns a task graph into nodes, each with its status from
// status (nil: a plan, drawn without statuses) and its place on the
// critical path as zerg graph show computes it.
func FromGraph(g *spec.Graph, status map[string]string) []Node {
	onPath := map[string]bool{}
	for _, id := range spec.Analyze(g, 1).CriticalPath {
		onPath[id] = true
	}
	nodes := make([]Node, 0, len(g.Tasks))
	for _, t := range g.Tasks {
		nodes = append(nodes, Node{ID: t.ID, Title: t.Title, Level: t.Level, Deps: t.Dependencies,
			Status: status[t.ID], Critical: onPath[t.ID]})
	}
	return nodes
}

// FromView draws a run: the graph it works on (g; nil when unknown, then
// only the view's tasks, without edges or critical path) coloured by the
// view's statuses. A task the log names and the graph lacks is drawn too.
func FromView(v runstate.View, g *spec.Graph) []Node {
	status := map[string]string{}
	for _, t := range v.Tasks {
		status[t.ID] = string(t.Status)
	}
	var nodes []Node
	seen := map[string]bool{}
	if g != nil {
		nodes = FromGraph(g, status)
		for _, n := range nodes {
			seen[n.ID] = true
		}
	}
	for _, t := range v.Tasks {
		if !seen[t.ID] {
			nodes = append(nodes, Node{ID: t.ID, Level: t.Level, Status: string(t.Status)})
		}
	}
	return nodes
}

// SpendPoint is the run's spending so far when an attempt finished.
type SpendPoint struct {
	At  time.Duration // since the run started
	USD float64       // cumulative
}

// Spend is a run's spending over time next to its projection.
type Spend struct {
	Points    []SpendPoint
	Projected *runstate.Range // nil: the run recorded none
}

// SpendOf reads a run's spending over time from its log: one point per
// finished attempt, the cumulative cost_usd of the attempts so far (the
// same sum zerg cost totals).
func SpendOf(events []eventlog.Event) Spend {
	var s Spend
	var start time.Time
	total := 0.0
	for _, e := range events {
		switch e.Type {
		case runstate.EvRunStarted:
			if start.IsZero() {
				start = e.Time
				s.Points = append(s.Points, SpendPoint{})
			}
		case runstate.EvAttemptFinished:
			var d runstate.AttemptFinished
			if e.Decode(&d) != nil {
				continue
			}
			total += d.CostUSD
			if start.IsZero() {
				start = e.Time
			}
			s.Points = append(s.Points, SpendPoint{At: e.Time.Sub(start), USD: total})
		}
	}
	if p := runstate.Replay(events).Projection; p != nil {
		r := p.Range
		s.Projected = &r
	}
	return s
}
