package main

import (
	"fmt"
	"math/bits"
	"strings"
	"time"
)

// maxBestTasks bounds the graphs bestSchedule searches (a task is a bit of
// a uint32); maxBestStates bounds the states it solves, so that a wide graph
// with many distinct durations gives up in well under a second instead of
// searching for minutes (twelve independent tasks of distinct durations on
// four workers took 14 s, fourteen did not finish in five minutes). The
// graphs of this benchmark need at most about 10,500 (wide, four workers).
const (
	maxBestTasks  = 20
	maxBestStates = 200_000
)

// bestSchedule is the shortest makespan that a scheduler which never leaves
// a worker idle while a task is ready (zerg's dag schedule is one) can reach
// with these task durations on that many workers: every choice of which ready
// tasks to start is searched, with the states already solved remembered.
//
// It is what a dag run is fairly held against where the lower bound
// max(critical path, work / workers) cannot be reached by any schedule: eight
// equal tasks before a ninth on four workers take two waves, where the bound
// assumes two waves' work spreads evenly over the whole run. Paths owned in
// common are not modelled (this benchmark's tasks own distinct files). Zero
// for a graph over maxBestTasks tasks, one whose search needs more than
// maxBestStates states, or one with a dependency outside it: not a guess.
func bestSchedule(ts []task, d map[string]time.Duration, workers int) time.Duration {
	n := len(ts)
	if n == 0 || n > maxBestTasks {
		return 0
	}
	workers = max(workers, 1)
	index := make(map[string]int, n)
	for i, t := range ts {
		index[t.ID] = i
	}
	deps := make([]uint32, n)
	dur := make([]time.Duration, n)
	for i, t := range ts {
		for _, dep := range t.Deps {
			j, ok := index[dep]
			if !ok {
				return 0
			}
			deps[i] |= 1 << j
		}
		dur[i] = d[t.ID]
	}
	s := &bestSearch{n: n, workers: workers, deps: deps, dur: dur, memo: map[string]time.Duration{}}
	best := s.from(0, 0, make([]time.Duration, n))
	if s.gaveUp {
		return 0
	}
	return best
}

type bestSearch struct {
	n, workers int
	deps       []uint32
	dur        []time.Duration
	memo       map[string]time.Duration
	gaveUp     bool // more than maxBestStates states: the result means nothing
}

// from is the least time to finish the graph from a state: the tasks done,
// the tasks running, and each running task's time left.
func (s *bestSearch) from(done, running uint32, left []time.Duration) time.Duration {
	all := uint32(1)<<s.n - 1
	if done == all || s.gaveUp {
		return 0
	}
	if len(s.memo) >= maxBestStates {
		s.gaveUp = true
		return 0
	}
	key := s.key(done, running, left)
	if v, ok := s.memo[key]; ok {
		return v
	}
	var ready []int
	for i := range s.n {
		bit := uint32(1) << i
		if done&bit == 0 && running&bit == 0 && s.deps[i]&^done == 0 {
			ready = append(ready, i)
		}
	}
	free := s.workers - bits.OnesCount32(running)
	best := time.Duration(-1)
	if free > 0 && len(ready) > 0 {
		// A worker is free and a task is ready: start as many as fit, each
		// choice of which.
		eachSubset(ready, min(free, len(ready)), func(pick []int) {
			next := running
			l := append([]time.Duration(nil), left...)
			for _, i := range pick {
				next |= 1 << i
				l[i] = s.dur[i]
			}
			if v := s.advance(done, next, l); best < 0 || v < best {
				best = v
			}
		})
	} else {
		best = s.advance(done, running, left)
	}
	s.memo[key] = best
	return best
}

// advance moves time to the next task's end.
func (s *bestSearch) advance(done, running uint32, left []time.Duration) time.Duration {
	if running == 0 {
		return 0 // nothing runs and nothing is ready: only a cycle leaves this
	}
	step := time.Duration(-1)
	for i := range s.n {
		if running&(1<<i) != 0 && (step < 0 || left[i] < step) {
			step = left[i]
		}
	}
	l := append([]time.Duration(nil), left...)
	for i := range s.n {
		if running&(1<<i) == 0 {
			continue
		}
		if l[i] -= step; l[i] <= 0 {
			l[i] = 0
			running &^= 1 << i
			done |= 1 << i
		}
	}
	return step + s.from(done, running, l)
}

func (s *bestSearch) key(done, running uint32, left []time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%x/%x", done, running)
	for i := range s.n {
		if running&(1<<i) != 0 {
			fmt.Fprintf(&b, "/%d", left[i])
		}
	}
	return b.String()
}

// eachSubset calls f with every k-element subset of items, in order.
func eachSubset(items []int, k int, f func([]int)) {
	pick := make([]int, 0, k)
	var rec func(from int)
	rec = func(from int) {
		if len(pick) == k {
			f(pick)
			return
		}
		for i := from; i <= len(items)-(k-len(pick)); i++ {
			pick = append(pick, items[i])
			rec(i + 1)
			pick = pick[:len(pick)-1]
		}
	}
	rec(0)
}
