package main

import (
	"fmt"
	"sort"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/runstate"
)

// task is one task of a benchmark graph: its place in the graph and how many
// files it owns (each one is written by the scripted model).
type task struct {
	ID    string   `json:"id"`
	Level int      `json:"level"`
	Deps  []string `json:"dependencies"`
	Files int      `json:"files"`
	// Paths, when set, are the files the task creates (a real project's
	// graph); otherwise files makes Files paths of its own.
	Paths []string `json:"-"`
	// Estimate is the task's estimate_minutes in the graph (nil: none).
	Estimate *float64 `json:"-"`
}

// span is when one task's successful attempt ran, as zerg's event log says.
type span struct{ Start, End time.Time }

func (s span) dur() time.Duration { return s.End.Sub(s.Start) }

// criticalPath is the longest chain of dependent tasks, each weighing its
// duration in d. No schedule can finish the graph faster than this.
func criticalPath(ts []task, d map[string]time.Duration) time.Duration {
	byID := make(map[string]task, len(ts))
	for _, t := range ts {
		byID[t.ID] = t
	}
	finish := map[string]time.Duration{}
	var visit func(id string, depth int) time.Duration
	visit = func(id string, depth int) time.Duration {
		if f, ok := finish[id]; ok {
			return f
		}
		if depth > len(ts) { // a cycle: validated graphs have none
			return 0
		}
		var ready time.Duration
		for _, dep := range byID[id].Deps {
			ready = max(ready, visit(dep, depth+1))
		}
		finish[id] = ready + d[id]
		return finish[id]
	}
	var cp time.Duration
	for _, t := range ts {
		cp = max(cp, visit(t.ID, 0))
	}
	return cp
}

// lowerBound is max(critical path, total work / workers): the least
// makespan any schedule of these task durations on that many workers can
// reach.
func lowerBound(ts []task, d map[string]time.Duration, workers int) time.Duration {
	if workers < 1 {
		workers = 1
	}
	var work time.Duration
	for _, t := range ts {
		work += d[t.ID]
	}
	return max(criticalPath(ts, d), work/time.Duration(workers))
}

// spans reads each task's successful attempt from a run's events: from its
// attempt_started to its attempt_finished with class success. A task with
// no success has no span.
func spans(evs []eventlog.Event) map[string]span {
	started := map[string]time.Time{} // task/attempt → start
	out := map[string]span{}
	key := func(e eventlog.Event) string { return fmt.Sprintf("%s/%d", e.Task, e.Attempt) }
	for _, e := range evs {
		switch e.Type {
		case runstate.EvAttemptStarted:
			started[key(e)] = e.Time
		case runstate.EvAttemptFinished:
			var f runstate.AttemptFinished
			if e.Decode(&f) != nil || f.Class != "success" {
				continue
			}
			if s, ok := started[key(e)]; ok {
				out[e.Task] = span{Start: s, End: e.Time}
			}
		}
	}
	return out
}

// makespan is from the first attempt's start to the last attempt's end: the
// time the schedule took to run the tasks, without zerg's start-up before
// the first attempt and its last merge after the last one.
func makespan(sp map[string]span) time.Duration {
	var first, last time.Time
	for _, s := range sp {
		if first.IsZero() || s.Start.Before(first) {
			first = s.Start
		}
		if s.End.After(last) {
			last = s.End
		}
	}
	return last.Sub(first)
}

// durations are the tasks' attempt durations, the weights of lowerBound.
func durations(sp map[string]span) map[string]time.Duration {
	d := make(map[string]time.Duration, len(sp))
	for id, s := range sp {
		d[id] = s.dur()
	}
	return d
}

// usage is what the model was asked and answered, in tokens, and what the
// CLI priced it at.
type usage struct {
	Input  int64   `json:"input_tokens"` // input + cache reads + cache writes
	Output int64   `json:"output_tokens"`
	USD    float64 `json:"usd"`
}

// rushUsage sums every attempt's usage in a run's events (failed attempts
// too: they were paid for).
func rushUsage(evs []eventlog.Event) usage {
	var u usage
	for _, e := range evs {
		if e.Type != runstate.EvAttemptFinished {
			continue
		}
		var f runstate.AttemptFinished
		if e.Decode(&f) != nil {
			continue
		}
		if f.Usage != nil {
			u.Input += f.Usage.Input + f.Usage.CacheRead + f.Usage.CacheWrite
			u.Output += f.Usage.Output
		}
		u.USD += f.CostUSD
	}
	return u
}

// perTask divides usage among the delivered tasks; nothing delivered gives
// zeros rather than a division by zero.
func (u usage) perTask(delivered int) usage {
	if delivered <= 0 {
		return usage{}
	}
	n := int64(delivered)
	return usage{Input: u.Input / n, Output: u.Output / n, USD: u.USD / float64(delivered)}
}

// speedup is how many times faster the rush was than the single session.
func speedup(single, rush time.Duration) float64 {
	if rush <= 0 {
		return 0
	}
	return single.Seconds() / rush.Seconds()
}

// ratio is makespan over the lower bound (1.0 = a perfect schedule).
func ratio(makespan, bound time.Duration) float64 {
	if bound <= 0 {
		return 0
	}
	return makespan.Seconds() / bound.Seconds()
}

// ordered is the graph's tasks in the order one session does them: level,
// then id (dependencies always sit in lower levels).
func ordered(ts []task) []task {
	out := append([]task(nil), ts...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Level != out[j].Level {
			return out[i].Level < out[j].Level
		}
		return out[i].ID < out[j].ID
	})
	return out
}
