package dashboard

import (
	"context"
	"errors"
	"sync"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/picture"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

// errNoRun: the name is no run of this repository (404).
var errNoRun = errors.New("no such run")

// source reads a repository's runs. Paths are computed once per feature
// (computing them asks git).
type source struct {
	root  string
	mu    sync.Mutex
	paths map[string]run.Paths
}

func (s *source) pathsOf(ctx context.Context, feature string) (run.Paths, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.paths[feature]; ok {
		return p, nil
	}
	known := false
	for _, f := range run.Runs(s.root) {
		known = known || f == feature
	}
	if !known {
		return run.Paths{}, errNoRun
	}
	p, err := run.PathsFor(ctx, s.root, feature)
	if err != nil {
		return run.Paths{}, err
	}
	s.paths[feature] = p
	return p, nil
}

// Snapshot is what the overview page draws: the view (as zerg status
// --json prints it) and the graph picture coloured by it.
type Snapshot struct {
	View  runstate.View `json:"view"`
	Graph string        `json:"graph_svg"`
	// Legend is the picture's colour of each status, for the page's key.
	Legend []LegendEntry `json:"legend"`
}

// LegendEntry is one status and its colour.
type LegendEntry struct {
	Status string `json:"status"`
	Colour string `json:"colour"`
}

func legend() []LegendEntry {
	var out []LegendEntry
	for _, s := range picture.Legend() {
		out = append(out, LegendEntry{s, picture.Fill(s)})
	}
	return out
}

// snapshot reads a run now.
func snapshot(p run.Paths) (Snapshot, error) {
	v, _, err := run.Inspect(p)
	if err != nil {
		return Snapshot{}, err
	}
	g := graphOf(p)
	return Snapshot{View: v, Graph: string(picture.SVG(picture.Place(picture.FromView(v, g)))), Legend: legend()}, nil
}

// graphOf is the graph the run works on: its snapshot, else the feature's
// current graph; nil when neither loads (the picture then has no edges).
func graphOf(p run.Paths) *spec.Graph {
	for _, f := range []string{p.GraphSnapshot, p.Graph} {
		r, err := run.LoadGraph(f, run.GraphLoad{Root: p.Root, Recorded: true})
		if err == nil && r.Valid() {
			return r.Graph
		}
	}
	return nil
}

// RunSummary is one line of the runs page.
type RunSummary struct {
	Feature string            `json:"feature"`
	State   runstate.RunState `json:"state"`
	Tasks   int               `json:"tasks"`
	Merged  int               `json:"merged"`
	CostUSD float64           `json:"cost_usd"`
	Error   string            `json:"error,omitempty"`
}

func (s *source) summaries(ctx context.Context) []RunSummary {
	out := []RunSummary{}
	for _, f := range run.Runs(s.root) {
		sum := RunSummary{Feature: f}
		p, err := s.pathsOf(ctx, f)
		if err == nil {
			var v runstate.View
			if v, _, err = run.Inspect(p); err == nil {
				sum.State, sum.Tasks, sum.CostUSD = v.State, len(v.Tasks), v.CostUSD
				for _, t := range v.Tasks {
					if t.Status == runstate.StatusMerged {
						sum.Merged++
					}
				}
			}
		}
		if err != nil {
			sum.Error = err.Error()
		}
		out = append(out, sum)
	}
	return out
}

// events reads a run's log (without locking it).
func events(p run.Paths) ([]eventlog.Event, error) { return eventlog.Read(p.Events) }
