package run

import (
	"path/filepath"

	"github.com/zergrush/zerg/internal/runstate"
)

// Project makes the opened run's projection from its graph, config, worker
// count, mode and the repository's other runs, and keeps it for the run
// (recorded in its log when it executes). Remaining sums the tasks the run
// has not merged yet: what a resume is still to spend.
func (r *Run) Project() (p runstate.Projection, remaining runstate.Range) {
	c := r.c
	cfg := c.cfg
	if c.schedule != "" {
		cfg.Schedule = c.schedule // a resume's: the recorded schedule
	}
	p = runstate.Project(runstate.ProjectOptions{Graph: c.graph, Config: cfg, Workers: c.workers, SpecDir: c.paths.SpecDir,
		History: runstate.HistoryLogs(filepath.Dir(c.paths.RunDir), c.feature), Rehearsal: c.rehearsal, LoadRecorded: LoadRecordedGraph})
	for _, t := range p.Tasks {
		if c.state.Task(t.Task).Status != runstate.StatusMerged {
			remaining.Add(t.Range)
		}
	}
	c.projection = &p
	return p, remaining
}

// Spent is what the run's log says its attempts cost so far.
func (r *Run) Spent() float64 { return r.c.state.CostUSD }
