package spec

import (
	"math"
	"slices"
)

// LevelInfo summarizes one level of a graph.
type LevelInfo struct {
	Level          int      `json:"level"`
	Tasks          []string `json:"tasks"`
	WorkMinutes    float64  `json:"work_minutes"`    // sum of estimates
	LongestMinutes float64  `json:"longest_minutes"` // the level's longest task
}

// Analysis describes a valid graph: its levels, critical path, and the
// theoretical lower bounds of the makespan for a number of workers.
type Analysis struct {
	Tasks           int         `json:"tasks"`
	Levels          []LevelInfo `json:"levels"`
	MaxParallelism  int         `json:"max_parallelism"` // widest level
	HasEstimates    bool        `json:"has_estimates"`   // every task has estimate_minutes
	TotalMinutes    float64     `json:"total_minutes"`
	CriticalPath    []string    `json:"critical_path"`
	CriticalMinutes float64     `json:"critical_minutes"`
	Workers         int         `json:"workers"`
	// LowerBoundDAG = max(critical path, total work / workers): no schedule that
	// respects dependencies can finish sooner.
	LowerBoundDAG float64 `json:"lower_bound_dag_minutes"`
	// LowerBoundLevels adds the level barriers: Σ over levels of
	// max(longest task, level work / workers).
	LowerBoundLevels float64 `json:"lower_bound_levels_minutes"`
}

// Analyze computes the analysis of a graph that passed validation. Tasks
// without an estimate count as 0 minutes; when no task has one, the critical
// path is the longest chain by task count and the bounds are left at 0.
func Analyze(g *Graph, workers int) Analysis {
	if workers < 1 {
		workers = 1
	}
	a := Analysis{Tasks: len(g.Tasks), Workers: workers, HasEstimates: len(g.Tasks) > 0}
	anyEstimate := false
	for _, t := range g.Tasks {
		if t.HasEstimate {
			anyEstimate = true
		} else {
			a.HasEstimates = false
		}
	}
	weight := func(t *Task) float64 {
		if anyEstimate {
			return t.EstimateMinutes
		}
		return 1
	}

	byLevel := map[int]*LevelInfo{}
	for _, t := range g.Tasks {
		li := byLevel[t.Level]
		if li == nil {
			li = &LevelInfo{Level: t.Level}
			byLevel[t.Level] = li
		}
		li.Tasks = append(li.Tasks, t.ID)
		li.WorkMinutes += t.EstimateMinutes
		li.LongestMinutes = math.Max(li.LongestMinutes, t.EstimateMinutes)
		a.TotalMinutes += t.EstimateMinutes
	}
	for _, li := range byLevel {
		a.Levels = append(a.Levels, *li)
		a.MaxParallelism = max(a.MaxParallelism, len(li.Tasks))
		a.LowerBoundLevels += math.Max(li.LongestMinutes, li.WorkMinutes/float64(workers))
	}
	slices.SortFunc(a.Levels, func(x, y LevelInfo) int { return x.Level - y.Level })

	// Longest path: tasks in level order are a topological order of a valid graph.
	order := slices.Clone(g.Tasks)
	slices.SortStableFunc(order, func(x, y *Task) int { return x.Level - y.Level })
	dist := make(map[string]float64, len(order))
	prev := make(map[string]string, len(order))
	var end string
	best := -1.0
	for _, t := range order {
		d := 0.0
		for _, dep := range t.Dependencies {
			if v, ok := dist[dep]; ok && (v > d || (v == d && prev[t.ID] == "")) {
				d, prev[t.ID] = v, dep
			}
		}
		dist[t.ID] = d + weight(t)
		if dist[t.ID] > best {
			best, end = dist[t.ID], t.ID
		}
	}
	for id := end; id != ""; id = prev[id] {
		a.CriticalPath = append(a.CriticalPath, id)
	}
	slices.Reverse(a.CriticalPath)
	if anyEstimate {
		a.CriticalMinutes = best
		a.LowerBoundDAG = math.Max(a.CriticalMinutes, a.TotalMinutes/float64(workers))
	} else {
		a.LowerBoundLevels = 0
	}
	return a
}
