package run

import (
	"context"
	"slices"
	"time"

	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

// Prepared workers (attempt.Prepare): once every running attempt has heard
// from the model (their CLIs have started, so the CPUs are free while they
// wait for it), the coordinator prepares the workers of the attempts that
// start next, from the integration head of the moment: under the level
// schedule the next level's first ones, under dag the tasks whose
// dependencies are all under way. Each attempt that then runs takes its
// own, laid again from its own base. What is not taken is thrown away when
// the run ends.

// preparing reports whether this run prepares workers: a driver that can
// (Capabilities.PreparesWorkers) and an attempter that does.
func (c *Coordinator) preparing() (Preparer, bool) {
	if c.caps == nil || !c.caps.PreparesWorkers {
		return nil, false
	}
	p, ok := c.d.Attempter.(Preparer)
	return p, ok
}

// prepareWhenThinking waits until every task of running has started
// talking to the model (or ended), then prepares the next level's
// attempts. It gives up when levelCtx ends first.
func (c *Coordinator) prepareWhenThinking(runCtx, levelCtx context.Context, p Preparer, running []*spec.Task, level int, base string) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for !c.allThinking(running) {
		select {
		case <-levelCtx.Done():
			return
		case <-t.C:
		}
	}
	for _, req := range c.nextAttempts(level, base) {
		p.Prepare(runCtx, req)
	}
}

// allThinking reports whether every task of running has had an event from
// its worker, or is no longer running.
func (c *Coordinator) allThinking(running []*spec.Task) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.thinkingLocked(running)
}

func (c *Coordinator) thinkingLocked(running []*spec.Task) bool {
	for _, t := range running {
		l, live := c.live[t.ID]
		if live && l.LastEvent.IsZero() {
			return false
		}
		if !live {
			switch c.state.Task(t.ID).Status {
			case runstate.StatusCommitted, runstate.StatusMerged, runstate.StatusFailed, runstate.StatusBlocked, runstate.StatusCancelled:
			default:
				return false // not launched yet (it waits for a worker), or between attempts
			}
		}
	}
	return true
}

// nextAttempts are the attempts the level after level will start first (as
// many as there are workers), from base.
func (c *Coordinator) nextAttempts(level int, base string) []AttemptRequest {
	next := -1
	for _, l := range graphLevels(c.graph) {
		if l > level {
			next = l
			break
		}
	}
	if next < 0 {
		return nil
	}
	var reqs []AttemptRequest
	for _, t := range tasksOf(c.graph, next) {
		if len(reqs) == c.workers {
			break
		}
		ts := c.taskState(t.ID)
		if ts.Status != runstate.StatusPending {
			continue
		}
		reqs = append(reqs, c.attemptRequest(t, ts.Attempts+1, next, base, ts))
	}
	return reqs
}

// attemptRequest is attempt n of t at level from base, without the
// callbacks (runTask sets them).
func (c *Coordinator) attemptRequest(t *spec.Task, n, level int, base string, ts runstate.TaskState) AttemptRequest {
	return AttemptRequest{
		Task: t, Model: c.modelOf(t), Number: n, Level: level, Base: base,
		Workspace: c.paths.Workspace(t.ID, n), Branch: AttemptBranch(c.feature, t.ID, n),
		Dir: c.paths.AttemptDir(t.ID, n), WorkerDir: c.paths.WorkerDir(t.ID, n),
		// Only the model's own failures go into the retry prompt, and an
		// infra failure in between does not erase them.
		Previous: c.previous(t.ID, ts),
	}
}

// prepareDAG prepares, under the dag schedule, the workers of the tasks
// that start next (dagAhead) whenever every running attempt has heard from
// the model, until ctx ends.
func (c *Coordinator) prepareDAG(runCtx, ctx context.Context, p Preparer) {
	after, tail := dagOrder(c.graph), chainMinutes(c.graph)
	asked := map[string]bool{}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, req := range c.dagAhead(after, tail, asked) {
			asked[req.Task.ID] = true
			p.Prepare(runCtx, req)
		}
	}
}

// dagAhead are the attempts to prepare now under dag: none while a running
// attempt has not heard from the model; else, up to workers prepared and
// not yet started, the first attempts of tasks not started whose
// dependencies (dagOrder) are all running, committed or merged, from the
// head of the moment, in the order dagStarts will start them (byChain over
// tail): a prepared worker is of use only to the task it was laid for.
// asked are the tasks prepared before.
func (c *Coordinator) dagAhead(after map[string][]string, tail map[string]float64, asked map[string]bool) []AttemptRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.live {
		if l.LastEvent.IsZero() {
			return nil
		}
	}
	waiting := func(id string) bool {
		st := c.state.Task(id).Status
		return st == runstate.StatusPending || st == runstate.StatusReady
	}
	free := c.workers
	for id := range asked {
		if waiting(id) {
			free--
		}
	}
	var next []*spec.Task
	for _, t := range c.graph.Tasks {
		if asked[t.ID] || !waiting(t.ID) || c.state.Task(t.ID).Attempts > 0 {
			continue
		}
		underWay := true
		for _, d := range after[t.ID] {
			switch c.state.Task(d).Status {
			case runstate.StatusRunning, runstate.StatusVerifying, runstate.StatusCommitted, runstate.StatusMerged:
			default:
				underWay = false
			}
		}
		if underWay {
			next = append(next, t)
		}
	}
	slices.SortFunc(next, byChain(tail))
	var reqs []AttemptRequest
	for _, t := range next[:min(max(free, 0), len(next))] {
		ts := c.state.Task(t.ID)
		reqs = append(reqs, c.attemptRequest(t, ts.Attempts+1, t.Level, c.state.Head, ts))
	}
	return reqs
}
