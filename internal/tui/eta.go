package tui

import (
	"time"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/runstate"
)

// ETA estimates the time left of a run from the graph's estimates scaled by
// the run's actual times: the tasks finished so far took scale times their
// estimates, so the tasks left are expected to as well. Without estimates
// (a graph without estimate_minutes), every task is expected to take the
// mean time of those finished. Under the level schedule levels run one
// after another and the tasks of a level side by side on at most workers
// workers, so a level takes the longer of its longest task and its work
// spread over the workers. Under the dag schedule a task starts when its
// dependencies are merged, so what is left takes the longer of the longest
// chain of remaining tasks and their work spread over the workers. ok is
// false while nothing gives a measure (no task finished, no estimates).
func ETA(v runstate.View, now time.Time) (left time.Duration, ok bool) {
	var doneEst, doneMS, doneN int64
	anyEstimate := false
	for _, t := range v.Tasks {
		if t.EstimateMS > 0 {
			anyEstimate = true
		}
		if t.WorkerMS > 0 && finished(t.Status) {
			doneMS += t.WorkerMS
			doneEst += t.EstimateMS
			doneN++
		}
	}
	// expect is how long a task is expected to take in all.
	var expect func(t runstate.TaskView) time.Duration
	switch {
	case anyEstimate && doneEst > 0:
		scale := float64(doneMS) / float64(doneEst)
		expect = func(t runstate.TaskView) time.Duration {
			return time.Duration(float64(t.EstimateMS)*scale) * time.Millisecond
		}
	case anyEstimate:
		// Nothing finished yet: the estimates as they stand.
		expect = func(t runstate.TaskView) time.Duration { return time.Duration(t.EstimateMS) * time.Millisecond }
	case doneN > 0:
		mean := time.Duration(doneMS/doneN) * time.Millisecond
		expect = func(runstate.TaskView) time.Duration { return mean }
	default:
		return 0, false
	}
	workers := max(v.Workers, 1)
	if v.Schedule == config.ScheduleDAG {
		return dagLeft(v, expect, now, workers), true
	}
	byLevel := map[int][]time.Duration{}
	var levels []int
	for _, t := range v.Tasks {
		if finished(t.Status) || t.Status == runstate.StatusFailed || t.Status == runstate.StatusBlocked || t.Status == runstate.StatusCancelled {
			continue // done, or will not run in this run
		}
		rem := expect(t)
		if t.Running != nil {
			// A task past its expected time is nearly done, as far as
			// anyone can tell: a tenth of its expectation is left.
			rem = max(rem-now.Sub(t.Running.Started), rem/10)
		}
		if _, seen := byLevel[t.Level]; !seen {
			levels = append(levels, t.Level)
		}
		byLevel[t.Level] = append(byLevel[t.Level], rem)
	}
	for _, l := range levels {
		left += levelTime(byLevel[l], workers)
	}
	return left, true
}

// dagLeft is max(longest chain of remaining tasks, remaining work /
// workers): the dag schedule's lower bound, on what is left.
func dagLeft(v runstate.View, expect func(runstate.TaskView) time.Duration, now time.Time, workers int) time.Duration {
	rem := map[string]time.Duration{}
	byID := map[string]runstate.TaskView{}
	var sum time.Duration
	for _, t := range v.Tasks {
		byID[t.ID] = t
		if finished(t.Status) || t.Status == runstate.StatusFailed || t.Status == runstate.StatusBlocked || t.Status == runstate.StatusCancelled {
			continue
		}
		r := expect(t)
		if t.Running != nil {
			r = max(r-now.Sub(t.Running.Started), r/10)
		}
		rem[t.ID] = r
		sum += r
	}
	chain := map[string]time.Duration{}
	var longest func(id string) time.Duration
	longest = func(id string) time.Duration {
		if c, ok := chain[id]; ok {
			return c
		}
		chain[id] = 0 // a cycle (no valid graph has one) counts nothing
		var before time.Duration
		for _, d := range byID[id].Dependencies {
			before = max(before, longest(d))
		}
		chain[id] = before + rem[id]
		return chain[id]
	}
	var critical time.Duration
	for id := range rem {
		critical = max(critical, longest(id))
	}
	return max(critical, sum/time.Duration(workers))
}

// levelTime is the time a level's remaining tasks take on workers workers:
// the longer of its longest task and its total work divided among them.
func levelTime(rem []time.Duration, workers int) time.Duration {
	var sum, longest time.Duration
	for _, r := range rem {
		sum += r
		longest = max(longest, r)
	}
	return max(longest, sum/time.Duration(min(workers, max(len(rem), 1))))
}

// finished: the task's work is done (committed waits only for its level's
// merge).
func finished(s runstate.Status) bool {
	return s == runstate.StatusMerged || s == runstate.StatusCommitted
}

// LevelFraction is how much of a level is done: its finished tasks over all.
func LevelFraction(l runstate.LevelView, tasks []runstate.TaskView) float64 {
	if l.State == "merged" {
		return 1
	}
	if len(l.Tasks) == 0 {
		return 0
	}
	done := 0
	for _, t := range tasks {
		if t.Level == l.Level && finished(t.Status) {
			done++
		}
	}
	return float64(done) / float64(len(l.Tasks))
}

// RunFraction is how much of the run is done: merged tasks over all.
func RunFraction(v runstate.View) (done, total int) {
	for _, t := range v.Tasks {
		if t.Status == runstate.StatusMerged {
			done++
		}
	}
	return done, len(v.Tasks)
}
