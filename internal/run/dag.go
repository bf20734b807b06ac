package run

import (
	"cmp"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

// The DAG schedule's decisions (schedule: dag, docs/schedule.md), pure
// functions of the graph and the tasks' statuses so that tables test them
// without processes: which tasks may start now, which batch merges next,
// and the steps that find the task that broke a batch's gates. The
// coordinator (coordinator_dag.go) carries them out.

// dagView is what the DAG decisions read of a run.
type dagView struct {
	graph *spec.Graph
	// after lists, for each task, what it must wait to see merged
	// (dagOrder).
	after map[string][]string
	// status is a task's status per the log.
	status func(id string) runstate.Status
	// busy are the tasks the coordinator runs now (an attempt, a backoff,
	// a wait for the next attempt).
	busy map[string]bool
}

// holds reports whether a task holds its owned paths: from its start until
// it is merged or failed, a task's work is on its way to the integration
// branch, and another task that owns a common path would conflict with it.
func (v dagView) holds(id string) bool {
	if v.busy[id] {
		return true
	}
	switch v.status(id) {
	case runstate.StatusRunning, runstate.StatusVerifying, runstate.StatusCommitted:
		return true
	}
	return false
}

// dagOrder is, for each task, the tasks that must be merged before it
// starts: its dependencies, and the tasks of lower levels that may own a
// path it owns. The graph's validation keeps a level's tasks apart; the
// order of two levels that own a common path (a later task modifying a
// file an earlier one creates, without depending on it) is the levels',
// and the DAG schedule keeps it.
func dagOrder(g *spec.Graph) map[string][]string {
	out := map[string][]string{}
	for _, t := range g.Tasks {
		deps := slices.Clone(t.Dependencies)
		for _, u := range g.Tasks {
			if u.Level < t.Level && !slices.Contains(deps, u.ID) && u.MayOverlap(t) {
				deps = append(deps, u.ID)
			}
		}
		out[t.ID] = deps
	}
	return out
}

// newDAGView is the view of a graph with the statuses and busy tasks.
func newDAGView(g *spec.Graph, after map[string][]string, status func(string) runstate.Status, busy map[string]bool) dagView {
	if after == nil {
		after = dagOrder(g)
	}
	return dagView{graph: g, after: after, status: status, busy: busy}
}

// depsMerged reports whether every task t waits for (dagOrder) is merged.
func (v dagView) depsMerged(t *spec.Task) bool {
	for _, d := range v.after[t.ID] {
		if v.status(d) != runstate.StatusMerged {
			return false
		}
	}
	return true
}

// startable reports whether a task waits for a start: it is not merged,
// committed, failed or blocked, and nothing runs it.
func (v dagView) startable(id string) bool {
	if v.busy[id] {
		return false
	}
	switch v.status(id) {
	case runstate.StatusPending, runstate.StatusReady, runstate.StatusRetryWait, runstate.StatusCancelled:
		return true
	}
	return false
}

// dagStarts lists the tasks to start now, at most free of them, best first:
// each waits for a start, has every dependency merged, and owns no path in
// common with a task that holds its paths or with one started before it in
// the list. Priority goes to the longest chain of work still behind a task
// (its estimate and its dependents', the critical path first), then the
// lower level, then the id.
func dagStarts(v dagView, free int) []string {
	if free <= 0 {
		return nil
	}
	var cands []*spec.Task
	var holders []*spec.Task
	for _, t := range v.graph.Tasks {
		switch {
		case v.holds(t.ID):
			holders = append(holders, t)
		case v.startable(t.ID) && v.depsMerged(t):
			cands = append(cands, t)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	slices.SortFunc(cands, byChain(chainMinutes(v.graph)))
	var out []string
	for _, t := range cands {
		if len(out) == free {
			break
		}
		if slices.ContainsFunc(holders, t.MayOverlap) {
			continue
		}
		out = append(out, t.ID)
		holders = append(holders, t)
	}
	return out
}

// byChain orders tasks as dagStarts starts them: the longest chain of work
// behind a task first (tail, from chainMinutes), then the lower level, then
// the id.
func byChain(tail map[string]float64) func(a, b *spec.Task) int {
	return func(a, b *spec.Task) int {
		return cmp.Or(cmp.Compare(tail[b.ID], tail[a.ID]), cmp.Compare(a.Level, b.Level), strings.Compare(a.ID, b.ID))
	}
}

// chainMinutes is, for each task, the longest chain of estimated work from
// it to the end of the graph (its own estimate included; a task without an
// estimate counts one minute, so chains of such tasks count their length).
func chainMinutes(g *spec.Graph) map[string]float64 {
	dependents := map[string][]string{}
	for _, t := range g.Tasks {
		for _, d := range t.Dependencies {
			dependents[d] = append(dependents[d], t.ID)
		}
	}
	order := slices.Clone(g.Tasks)
	// A valid graph's levels are a topological order: dependents later.
	slices.SortStableFunc(order, func(a, b *spec.Task) int { return b.Level - a.Level })
	out := map[string]float64{}
	for _, t := range order {
		w := t.EstimateMinutes
		if !t.HasEstimate || w <= 0 {
			w = 1
		}
		longest := 0.0
		for _, d := range dependents[t.ID] {
			longest = max(longest, out[d])
		}
		out[t.ID] = w + longest
	}
	return out
}

// dagBatch is the next batch to merge: every committed task whose
// dependencies are all merged (a task never merges before one of its
// dependencies), in level order then by id, which is the order the merge
// applies them.
func dagBatch(v dagView) []string {
	var ts []*spec.Task
	for _, t := range v.graph.Tasks {
		if v.status(t.ID) == runstate.StatusCommitted && !v.busy[t.ID] && v.depsMerged(t) {
			ts = append(ts, t)
		}
	}
	slices.SortFunc(ts, func(a, b *spec.Task) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), strings.Compare(a.ID, b.ID))
	})
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

// dagBlocked maps each task that can never run, because a task it waits
// for (dagOrder) failed for good, directly or through others, to that
// failed task: the tasks waiting for a start (dagView.startable) below a
// failed one.
func dagBlocked(v dagView) map[string]string {
	out := map[string]string{}
	var cause func(t *spec.Task) string
	seen := map[string]bool{}
	cause = func(t *spec.Task) string {
		if seen[t.ID] {
			return out[t.ID]
		}
		seen[t.ID] = true
		for _, d := range v.after[t.ID] {
			switch v.status(d) {
			case runstate.StatusFailed:
				out[t.ID] = d
				return d
			}
			if dt := v.graph.Task(d); dt != nil {
				if c := cause(dt); c != "" {
					out[t.ID] = c
					return c
				}
			}
		}
		return ""
	}
	for _, t := range v.graph.Tasks {
		cause(t)
	}
	for id := range out {
		if !v.startable(id) {
			delete(out, id)
		}
	}
	return out
}

// GateFailure is why a test of a batch failed: the first required gate
// that failed on its merged head, or the merge itself (Gate empty).
type GateFailure struct {
	Gate   string
	Exit   int
	Output string
	Head   string
	// Conflict is the merge's own failure (a conflict).
	Conflict string
}

// mergeStep is one step of merging a batch.
type mergeStep struct {
	// Test: merge these tasks onto the integration head and run the gates;
	// when they pass, the merged head becomes the integration head.
	Test []string
	// Fail: this task broke the gates on its own (Why): it does not merge.
	Fail string
	Why  GateFailure
}

// mergePlan merges a batch through the gates: one test of the whole batch,
// and when it fails, a bisection. A failing group is split in halves; the
// first half is tested on the current head: when it passes it is merged
// and the second half, on a head that now holds the first, is the very
// tree that failed, so it fails without a test; when it fails, the culprit
// is in it, and the second half is tested afresh afterwards. A group of one
// known to fail is a culprit. Every task of the batch ends merged or
// failed, and a culprit is named only by a test that had no other unmerged
// task in it.
type mergePlan struct {
	todo []planItem
	// asked is the group of the test Next gave that Result has not answered.
	asked []string
}

type planItem struct {
	tasks []string
	// failing: the group is known to fail on the head it will meet, and why.
	failing bool
	// ifPassed: the second half of a split group, which fails (why) if the
	// first half, tested just before it, passes.
	ifPassed bool
	why      GateFailure
}

func newMergePlan(batch []string) *mergePlan {
	return &mergePlan{todo: []planItem{{tasks: slices.Clone(batch)}}}
}

// Next is the next step, false when the batch is settled. A Test step
// must be answered with Result before the next Next.
func (p *mergePlan) Next() (mergeStep, bool) {
	for len(p.todo) > 0 {
		it := p.todo[0]
		p.todo = p.todo[1:]
		switch {
		case len(it.tasks) == 0:
			continue
		case it.failing && len(it.tasks) == 1:
			return mergeStep{Fail: it.tasks[0], Why: it.why}, true
		case it.failing:
			half := len(it.tasks) / 2
			second := planItem{tasks: it.tasks[half:], ifPassed: true, why: it.why}
			p.todo = append([]planItem{second}, p.todo...)
			p.asked = it.tasks[:half]
			return mergeStep{Test: p.asked}, true
		default:
			p.asked = it.tasks
			return mergeStep{Test: it.tasks}, true
		}
	}
	return mergeStep{}, false
}

// Result answers the last Test: pass (its tasks are merged) or why not.
func (p *mergePlan) Result(pass bool, why GateFailure) {
	tested := p.asked
	p.asked = nil
	if tested == nil {
		return
	}
	if len(p.todo) > 0 && p.todo[0].ifPassed {
		// The second half of a split: with the first half merged, it meets
		// the tree that failed, so it fails; with the first half failing,
		// it is untested on the head as it is.
		p.todo[0].ifPassed = false
		p.todo[0].failing = pass
	}
	if !pass {
		p.todo = append([]planItem{{tasks: tested, failing: true, why: why}}, p.todo...)
	}
}
