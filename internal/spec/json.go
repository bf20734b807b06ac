package spec

import (
	"math"
	"slices"
)

// The JSON a graph is reported in by zerg graph validate, graph show and
// rush --dry-run (docs/json.md): the same keys wherever it appears, and
// durations in milliseconds (*_ms) as in every zerg JSON output, where the
// graph and its analysis count minutes. Lists are [] rather than null, so
// a reader need not tell the two apart.

// AnalysisJSON is an Analysis as the JSON outputs report it.
type AnalysisJSON struct {
	Tasks              int         `json:"tasks"`
	Levels             []LevelJSON `json:"levels"`
	MaxParallelism     int         `json:"max_parallelism"`
	HasEstimates       bool        `json:"has_estimates"`
	TotalMS            int64       `json:"total_ms"`
	CriticalPath       []string    `json:"critical_path"`
	CriticalMS         int64       `json:"critical_ms"`
	Workers            int         `json:"workers"`
	LowerBoundDAGMS    int64       `json:"lower_bound_dag_ms"`
	LowerBoundLevelsMS int64       `json:"lower_bound_levels_ms"`
}

// LevelJSON is a LevelInfo as the JSON outputs report it.
type LevelJSON struct {
	Level     int      `json:"level"`
	Tasks     []string `json:"tasks"`
	WorkMS    int64    `json:"work_ms"`
	LongestMS int64    `json:"longest_ms"`
}

// JSON is the analysis as the JSON outputs report it.
func (an Analysis) JSON() AnalysisJSON {
	out := AnalysisJSON{Tasks: an.Tasks, Levels: make([]LevelJSON, 0, len(an.Levels)), MaxParallelism: an.MaxParallelism,
		HasEstimates: an.HasEstimates, TotalMS: MinutesMS(an.TotalMinutes), CriticalPath: NonNil(an.CriticalPath),
		CriticalMS: MinutesMS(an.CriticalMinutes), Workers: an.Workers,
		LowerBoundDAGMS: MinutesMS(an.LowerBoundDAG), LowerBoundLevelsMS: MinutesMS(an.LowerBoundLevels)}
	for _, l := range an.Levels {
		out.Levels = append(out.Levels, LevelJSON{Level: l.Level, Tasks: NonNil(l.Tasks),
			WorkMS: MinutesMS(l.WorkMinutes), LongestMS: MinutesMS(l.LongestMinutes)})
	}
	return out
}

// GraphJSON is zerg graph show --json: the graph file, its tasks level by
// level (in file order within a level) and its analysis.
type GraphJSON struct {
	File     string       `json:"file"`
	Feature  string       `json:"feature"`
	Analysis AnalysisJSON `json:"analysis"`
	Tasks    []TaskJSON   `json:"tasks"`
}

// TaskJSON is a task of GraphJSON.
type TaskJSON struct {
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Level        int      `json:"level"`
	Dependencies []string `json:"dependencies"`
	Create       []string `json:"create"`
	Modify       []string `json:"modify"`
	Read         []string `json:"read"`
	EstimateMS   *int64   `json:"estimate_ms,omitempty"` // none without estimate_minutes
	Critical     bool     `json:"critical"`              // on the critical path
	Verification string   `json:"verification,omitempty"`
}

// NewGraphJSON is graph show --json of g, read from file, with its analysis.
func NewGraphJSON(file string, g *Graph, an Analysis) GraphJSON {
	critical := map[string]bool{}
	for _, id := range an.CriticalPath {
		critical[id] = true
	}
	tasks := make([]TaskJSON, 0, len(g.Tasks))
	for _, t := range g.Tasks {
		st := TaskJSON{ID: t.ID, Title: t.Title, Level: t.Level, Dependencies: NonNil(t.Dependencies),
			Create: NonNil(t.Files.Create), Modify: NonNil(t.Files.Modify), Read: NonNil(t.Files.Read), Critical: critical[t.ID]}
		if t.HasEstimate {
			e := MinutesMS(t.EstimateMinutes)
			st.EstimateMS = &e
		}
		if t.Verification != nil {
			st.Verification = t.Verification.Command
		}
		tasks = append(tasks, st)
	}
	slices.SortStableFunc(tasks, func(x, y TaskJSON) int { return x.Level - y.Level })
	return GraphJSON{File: file, Feature: g.Feature, Analysis: an.JSON(), Tasks: tasks}
}

// ProblemJSON is one problem in the --json output of the commands that check
// input (graph validate, config check): the same keys for a task graph and a
// config file. Field is the graph field or config option ("files.create[0]",
// "retry.task_retries"); Path is only ever a file path inside the repository.
type ProblemJSON struct {
	Severity string   `json:"severity"` // "error" or "warning"
	Code     string   `json:"code"`
	File     string   `json:"file"`
	Line     int      `json:"line,omitempty"`
	Task     string   `json:"task,omitempty"`
	Tasks    []string `json:"tasks,omitempty"`
	Field    string   `json:"field,omitempty"`
	Path     string   `json:"path,omitempty"`
	Message  string   `json:"message"`
}

// Problems lists the report's errors, then its warnings, of the graph in
// file.
func (r *Report) Problems(file string) []ProblemJSON {
	out := make([]ProblemJSON, 0, len(r.Errors)+len(r.Warnings))
	for _, i := range append(slices.Clone(r.Errors), r.Warnings...) {
		out = append(out, ProblemJSON{Severity: string(i.Severity), Code: i.Code, File: file, Line: i.Line,
			Task: i.Task, Tasks: i.Tasks, Field: i.Field, Path: i.Path, Message: i.Message})
	}
	return out
}

// MinutesMS converts the graph's minutes to the milliseconds JSON reports.
func MinutesMS(m float64) int64 { return int64(math.Round(m * 60_000)) }

// NonNil is s, or an empty list for nil: JSON's [] rather than null.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
