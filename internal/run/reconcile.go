package run

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
	"github.com/zergrush/zerg/internal/textx"
)

// Crash reconciliation. A resume first decides, reading only, whether it
// can continue the run (planResume); nothing is written when it cannot.
// Then reconcile makes the log, git and the process table agree: recorded
// worker processes are reaped (only those), open attempts are closed with
// their work preserved, the graph change is recorded, and the integration
// branch is put where the log says.

// branchAction is what a resume does with the integration branch.
type branchAction string

const (
	branchKeep    branchAction = "keep"    // it is at the recorded head
	branchCreate  branchAction = "create"  // it is gone: recreate it at the recorded head
	branchForward branchAction = "forward" // the crash came between level_merged and the branch update
	branchAdopt   branchAction = "adopt"   // someone committed on top of the recorded head: build on it
)

// resumePlan is what a resume will do, decided before anything is written.
type resumePlan struct {
	graph  *runstate.GraphChanged // nil: the graph is the one recorded
	branch branchAction
	have   string // where the branch is
	want   string // where the log says it is
}

// planResume checks that the run can be continued with the current graph
// and the integration branch as it is. recorded is the graph the run last
// recorded (nil when the run has no snapshot).
func planResume(ctx context.Context, feature string, st *runstate.State, recorded, cur *spec.Graph, refs Refs) (*resumePlan, error) {
	if st.Started == nil {
		return nil, errorf(NoRun, feature, "the run of %s never started (its log has no run_started event)", feature)
	}
	p := &resumePlan{want: st.Head}
	if recorded != nil && graphHash(recorded) != st.GraphSHA256 {
		// A snapshot the log does not name (a crash between writing it and
		// recording the change) says nothing about what the run works on.
		recorded = nil
	}
	if sha := graphHash(cur); sha != st.GraphSHA256 {
		if recorded == nil {
			return nil, errorf(GraphEdit, feature, "the task graph of %s changed since the run started, and the run has no record of the graph it started with", feature)
		}
		d := DiffGraphs(recorded, cur)
		d.GraphSHA256 = sha
		d, err := PlanGraphChange(feature, d, st)
		if err != nil {
			var ge *GraphEditError
			if errors.As(err, &ge) {
				return nil, &Error{Kind: GraphEdit, Feature: feature, Task: ge.Task, Err: err}
			}
			return nil, err
		}
		p.graph = &d
	}
	if st.Finished != nil && st.Finished.Delivered && (p.graph == nil || len(p.graph.Added)+len(p.graph.Changed) == 0) {
		return nil, &Error{Kind: Delivered, Feature: feature, Branch: IntegrationBranch(feature),
			Err: fmt.Errorf("%s was delivered on %s; there is nothing to resume", feature, IntegrationBranch(feature))}
	}
	integration := IntegrationBranch(feature)
	have, err := refs.Branch(ctx, integration)
	if err != nil {
		return nil, err
	}
	p.have = have
	switch {
	case have == "":
		p.branch = branchCreate
	case have == p.want:
		p.branch = branchKeep
	default:
		behind, err := refs.IsAncestor(ctx, have, p.want)
		if err != nil {
			return nil, fmt.Errorf("compare %s with the recorded head: %w", integration, err)
		}
		if behind {
			p.branch = branchForward
			break
		}
		ahead, err := refs.IsAncestor(ctx, p.want, have)
		if err != nil {
			return nil, fmt.Errorf("compare %s with the recorded head: %w", integration, err)
		}
		if !ahead {
			return nil, &Error{Kind: IntegrationMoved, Feature: feature, Branch: integration,
				Err: fmt.Errorf("branch %s is at %s, which does not contain the head the run recorded (%s)", integration, gitx.ShortHash(have), gitx.ShortHash(p.want))}
		}
		p.branch = branchAdopt
	}
	return p, nil
}

// reconcile carries out the resume plan.
func (c *Coordinator) reconcile(ctx context.Context) error {
	p := c.resume
	open := c.state.OpenAttempts()
	ids := make([]string, 0, len(open))
	for id := range open {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if n := c.d.Salvager.ReapRun(ctx); n > 0 {
		c.progress.printf("  removed %d container(s) the stopped coordinator left", n)
	}
	for _, id := range ids {
		o := open[id]
		if killed := c.d.Salvager.Reap(o); killed > 0 {
			c.progress.printf("  %s: reaped %d leftover worker process(es) of attempt %d", id, killed, o.Number)
		}
		// A worker that finished before its coordinator died: its work goes
		// through the checks and is committed once, not redone.
		if t := c.graph.Task(id); t != nil {
			req := AttemptRequest{Task: t, Model: c.modelOf(t), Number: o.Number, Base: o.Base, Workspace: o.Workspace,
				Branch: o.Branch, Dir: o.Dir, WorkerDir: c.paths.WorkerDir(id, o.Number)}
			res, ok, err := c.d.Attempter.Recover(ctx, req)
			if err != nil {
				c.progress.printf("  %s: attempt %d could not be recovered (%v)", id, o.Number, err)
			}
			if ok && err == nil {
				if err := c.emit(runstate.EvAttemptFinished, id, o.Number, finishedEvent(res, req.Model)); err != nil {
					return err
				}
				switch {
				case res.Class == outcome.Success:
					c.progress.printf("  %s: attempt %d had finished; its work passed the checks and is committed (%s)", id, o.Number, gitx.ShortHash(res.Commit))
				case res.Commit != "":
					c.progress.printf("  %s: attempt %d had not finished; its work is saved on %s", id, o.Number, o.Branch)
				default:
					c.progress.printf("  %s: attempt %d: %s", id, o.Number, textx.Clip(textx.OneLine(res.Detail), 300))
				}
				continue
			}
		}
		commit, err := c.d.Salvager.Preserve(ctx, id, o)
		if err != nil {
			c.progress.printf("  %s: the workspace of attempt %d is kept as it is (%v)", id, o.Number, err)
		}
		if err := c.emit(runstate.EvAttemptFinished, id, o.Number, runstate.AttemptFinished{
			Class: outcome.Infra, Reason: outcome.ReasonAbandoned, Detail: "the coordinator stopped during this attempt", Commit: commit,
		}); err != nil {
			return err
		}
	}
	resumed := runstate.RunResumed{Workers: c.workers}
	if c.schedule != c.state.RecordedSchedule() {
		resumed.Schedule = c.schedule
	}
	if err := c.emit(runstate.EvRunResumed, "", 0, resumed); err != nil {
		return err
	}
	if p.graph != nil {
		if err := c.d.Snapshot(c.graph.Raw); err != nil {
			return fmt.Errorf("record the task graph: %w", err)
		}
		if err := c.emit(runstate.EvGraphChanged, "", 0, *p.graph); err != nil {
			return err
		}
		c.progress.note("the task graph changed: %s", describeChange(*p.graph))
	}
	integration := IntegrationBranch(c.feature)
	switch p.branch {
	case branchCreate:
		if err := c.d.Refs.SetBranch(ctx, integration, p.want, ""); err != nil {
			return err
		}
		c.progress.note("%s was missing; recreated at the recorded head %s", integration, gitx.ShortHash(p.want))
	case branchForward:
		if err := c.d.Refs.SetBranch(ctx, integration, p.want, p.have); err != nil {
			return fmt.Errorf("move %s from %s to the recorded head %s: %w", integration, gitx.ShortHash(p.have), gitx.ShortHash(p.want), err)
		}
	case branchAdopt:
		if err := c.emit(runstate.EvIntegrationAdopted, "", 0, runstate.IntegrationAdopted{From: p.want, To: p.have}); err != nil {
			return err
		}
		c.progress.note("%s has commits on top of the recorded head; the run builds on %s", integration, gitx.ShortHash(p.have))
	}
	c.mu.Lock()
	merged, head, tasks := len(c.state.Merged), c.state.Head, 0
	for _, t := range c.state.Tasks {
		if t.Status == runstate.StatusMerged {
			tasks++
		}
	}
	c.mu.Unlock()
	if c.schedule == config.ScheduleDAG {
		c.progress.note("resuming %s (schedule dag): %d task(s) already merged, integration at %s", c.feature, tasks, gitx.ShortHash(head))
	} else {
		c.progress.note("resuming %s: %d level(s) already merged, integration at %s", c.feature, merged, gitx.ShortHash(head))
	}
	return nil
}

func describeChange(d runstate.GraphChanged) string {
	var parts []string
	if len(d.Added) > 0 {
		parts = append(parts, fmt.Sprintf("%d task(s) added (%s)", len(d.Added), textx.Clip(fmt.Sprint(d.Added), 120)))
	}
	if len(d.Changed) > 0 {
		var ids []string
		for _, c := range d.Changed {
			ids = append(ids, c.Task)
		}
		parts = append(parts, fmt.Sprintf("%d task(s) changed and start over (%s)", len(ids), textx.Clip(fmt.Sprint(ids), 120)))
	}
	if len(d.Removed) > 0 {
		parts = append(parts, fmt.Sprintf("%d task(s) removed (%s)", len(d.Removed), textx.Clip(fmt.Sprint(d.Removed), 120)))
	}
	if len(parts) == 0 {
		return "no task changed"
	}
	return fmt.Sprint(parts)
}

// resumeSchedule is the schedule a resume goes on with when the rush asks
// for asked (--schedule; "" when not given). The recorded one is kept
// unless asked names another: the config's schedule is for new runs. From level to dag is safe and allowed: every merge of a
// level run merged whole levels, and a committed task was built on a head
// that holds its dependencies, which is all the DAG schedule asks of what
// it finds. From dag to level is refused: the integration branch may hold
// part of a level, which the level schedule's promise (a level merges all
// or nothing) cannot account for.
func resumeSchedule(st *runstate.State, asked string) (schedule, note string, err error) {
	rec := st.RecordedSchedule()
	switch {
	case asked == "" || asked == rec:
		return rec, "", nil
	case rec == config.ScheduleLevel && asked == config.ScheduleDAG:
		return asked, fmt.Sprintf("%s ran with schedule level; it goes on with schedule dag (the levels it merged stay as they are)", st.Started.Feature), nil
	default:
		return "", "", fmt.Errorf("%s runs with schedule %s, which a resume cannot change to %s (its integration branch may hold part of a level); resume it with --schedule %s", st.Started.Feature, rec, asked, rec)
	}
}
