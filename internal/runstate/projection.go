package runstate

import (
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/spec"
)

// EvRunProjected records the cost projection a rush started from (at the
// start of every rush, resumes included). It moves no task.
const EvRunProjected = "run_projected"

// Tokens is a token count split the way the API bills it.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
}

// Add adds u to t.
func (t *Tokens) Add(u Tokens) {
	t.Input += u.Input
	t.Output += u.Output
	t.CacheRead += u.CacheRead
	t.CacheWrite += u.CacheWrite
}

// Total is every token of t.
func (t Tokens) Total() int64 { return t.Input + t.Output + t.CacheRead + t.CacheWrite }

func (t Tokens) usage() claude.Usage {
	return claude.Usage{InputTokens: t.Input, OutputTokens: t.Output, CacheReadInputTokens: t.CacheRead, CacheCreationInputTokens: t.CacheWrite}
}

// TokensOf converts the CLI's usage.
func TokensOf(u claude.Usage) Tokens {
	return Tokens{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheCreationInputTokens}
}

// Range is a projection in dollars: Low and High bracket Expected.
type Range struct {
	Low      float64 `json:"low_usd"`
	Expected float64 `json:"expected_usd"`
	High     float64 `json:"high_usd"`
}

func (r *Range) Add(o Range) { r.Low += o.Low; r.Expected += o.Expected; r.High += o.High }

// TaskProjection is one task's projected cost.
type TaskProjection struct {
	Task  string `json:"task"`
	Level int    `json:"level"`
	Model string `json:"model"`
	// Tier says where the model comes from: graph (the task's own model),
	// simple (models.simple: a read-only or docs-only task) or implement.
	Tier         string  `json:"tier"`
	PromptTokens int64   `json:"prompt_tokens"`
	Minutes      float64 `json:"estimate_minutes"`
	Turns        int     `json:"turns"`
	// Tokens are the expected tokens of one attempt.
	Tokens Tokens `json:"tokens"`
	// AttemptUSD is the expected cost of one attempt: what the run budget
	// reserves before it launches one.
	AttemptUSD float64 `json:"attempt_usd"`
	Range
}

// LevelProjection sums a level's tasks.
type LevelProjection struct {
	Level int `json:"level"`
	Tasks int `json:"tasks"`
	Range
}

// Projection is what a run is expected to cost, from the graph: each task's
// model tier, prompt size and estimate, scaled by the repository's own
// history of runs when it has one.
type Projection struct {
	// Basis says what the figures rest on: "estimate" (the token model
	// alone) or "history" (scaled by Factor from HistoryTasks earlier tasks).
	Basis        string            `json:"basis"`
	Factor       float64           `json:"factor,omitempty"`
	HistoryTasks int               `json:"history_tasks,omitempty"`
	Workers      int               `json:"workers"`
	FanOut       int               `json:"fan_out"` // workers that can run at once: min(workers, widest level; under dag, tasks off the longest chain + 1)
	Tokens       Tokens            `json:"tokens"`  // expected, one attempt per task
	Tasks        []TaskProjection  `json:"tasks"`
	Levels       []LevelProjection `json:"levels"`
	Range
}

// Task returns the projection of one task (zero when it has none).
func (p *Projection) Task(id string) TaskProjection {
	if p != nil {
		for _, t := range p.Tasks {
			if t.Task == id {
				return t
			}
		}
	}
	return TaskProjection{}
}

// The token model of one attempt (see docs/cost.md). Claude Code sends its
// system prompt and tool definitions with every request (cached after the
// first); every turn adds the model's output and the tool results to the
// conversation, which later requests read from the cache.
const (
	growthPerTurn   = 800 // tool results and assistant text a turn adds
	outputPerTurn   = 250
	uncachedPerTurn = 50
	turnsPerMinute  = 3
	defaultMinutes  = 5 // a task without estimate_minutes
)

// cliOverheadTokens is the CLI's own part of every request of a worker
// (system prompt and tool definitions, with zerg's launch: six tools and
// claude.PromptEnv), by model family, measured with Claude Code 2.1.197
// (docs/context.md): 3,528 tokens with opus, about 7,300 with sonnet and
// haiku, whose prompts and tool descriptions are longer.
func cliOverheadTokens(model string) int64 {
	if strings.Contains(model, "opus") {
		return 3500
	}
	return 7300
}

// ModelFor is the model of a task: its own from the graph, else by its
// role: a task that owns no file (read-only) or only documentation
// (*.md, *.txt, *.rst, *.adoc, docs/**) gets models.simple, every other
// models.implement. An empty models.simple means models.implement.
func ModelFor(m config.Models, t *spec.Task) (model, tier string) {
	switch {
	case t.Model != "":
		return t.Model, "graph"
	case m.Simple != "" && DocsOnly(t):
		return m.Simple, "simple"
	}
	return m.Implement, "implement"
}

// DocsOnly reports whether a task owns no file or only documentation.
func DocsOnly(t *spec.Task) bool {
	for _, f := range t.Files.Owned() {
		f = filepath.ToSlash(f)
		switch strings.ToLower(path.Ext(f)) {
		case ".md", ".txt", ".rst", ".adoc":
			continue
		}
		if strings.HasPrefix(f, "docs/") || strings.HasPrefix(f, "doc/") {
			continue
		}
		return false
	}
	return true
}

// ProjectOptions is what a projection is made from.
type ProjectOptions struct {
	Graph   *spec.Graph
	Config  config.Config
	Workers int
	// SpecDir is the feature's spec directory (its requirements and design
	// feed each worker's context pack).
	SpecDir string
	// History lists the event logs of earlier runs (.zerg/runs/*/events.jsonl);
	// Rehearsal selects those of the same mode.
	History   []string
	Rehearsal bool
	// LoadRecorded reads an earlier run's recorded graph (its graph.json)
	// as every graph is read, through the one loader (run.LoadRecordedGraph);
	// nil: the history is not read.
	LoadRecorded func(file string) (*spec.Report, error)
}

// Project makes the projection.
func Project(o ProjectOptions) Projection {
	p := Projection{Basis: "estimate", Workers: o.Workers}
	specTokens := int64(0)
	for _, name := range attempt.SpecFiles {
		if fi, err := os.Stat(filepath.Join(o.SpecDir, name)); err == nil {
			specTokens += fi.Size() / 4
		}
	}
	ctxTokens := min(specTokens, int64(o.Config.Context.TokenBudget))
	for _, t := range o.Graph.Tasks {
		p.Tasks = append(p.Tasks, projectTask(o, t, ctxTokens))
	}
	slices.SortFunc(p.Tasks, func(a, b TaskProjection) int {
		if a.Level != b.Level {
			return a.Level - b.Level
		}
		return strings.Compare(a.Task, b.Task)
	})
	if f, n := historyFactor(o, ctxTokens); n >= 3 {
		p.Basis, p.Factor, p.HistoryTasks = "history", f.median, n
		for i := range p.Tasks {
			t := &p.Tasks[i]
			t.Low *= f.low
			t.Expected *= f.median
			t.High *= f.high
			t.AttemptUSD *= f.median
			t.Tokens = scaleTokens(t.Tokens, f.median)
		}
	}
	width := map[int]int{}
	for _, t := range p.Tasks {
		p.Tokens.Add(t.Tokens)
		p.Range.Add(t.Range)
		if n := len(p.Levels); n == 0 || p.Levels[n-1].Level != t.Level {
			p.Levels = append(p.Levels, LevelProjection{Level: t.Level})
		}
		l := &p.Levels[len(p.Levels)-1]
		l.Tasks++
		l.Range.Add(t.Range)
		width[t.Level]++
	}
	for _, w := range width {
		p.FanOut = max(p.FanOut, min(w, max(o.Workers, 1)))
	}
	if o.Config.Schedule == config.ScheduleDAG && len(o.Graph.Tasks) > 0 {
		// Under dag, tasks of different levels run side by side: no more
		// than the tasks off one longest dependency chain, plus one of it,
		// can (any set of tasks none of which waits for another meets a
		// chain at most once).
		p.FanOut = min(len(o.Graph.Tasks)-longestChain(o.Graph)+1, max(o.Workers, 1))
	}
	return p
}

// longestChain is the number of tasks on the graph's longest chain of
// dependencies.
func longestChain(g *spec.Graph) int {
	depth := map[string]int{}
	order := slices.Clone(g.Tasks)
	slices.SortStableFunc(order, func(a, b *spec.Task) int { return a.Level - b.Level })
	longest := 0
	for _, t := range order {
		d := 1
		for _, dep := range t.Dependencies {
			d = max(d, depth[dep]+1)
		}
		depth[t.ID] = d
		longest = max(longest, d)
	}
	return longest
}

// projectTask is the token model of one task, before any history scaling.
func projectTask(o ProjectOptions, t *spec.Task, ctxTokens int64) TaskProjection {
	model, tier := ModelFor(o.Config.Models, t)
	prompt := int64(len(attempt.Prompt(attempt.Input{Feature: o.Graph.Feature, Graph: o.Graph, Task: t})))/4 + ctxTokens
	minutes := t.EstimateMinutes
	if minutes <= 0 {
		minutes = defaultMinutes
	}
	maxTurns := o.Config.Budget.MaxTurns
	if t.MaxTurns > 0 {
		maxTurns = t.MaxTurns
	}
	turns := func(f float64) int {
		n := int(math.Round(minutes * turnsPerMinute * f))
		n = max(n, 2)
		if maxTurns > 0 {
			n = min(n, maxTurns)
		}
		return n
	}
	capUSD := o.Config.Budget.TaskUSD
	if t.BudgetUSD > 0 {
		capUSD = t.BudgetUSD
	}
	cost := func(n int) (Tokens, float64) {
		tk := attemptTokens(cliOverheadTokens(model)+prompt, n)
		usd := claude.CostUSD(model, tk.usage())
		if capUSD > 0 {
			usd = min(usd, capUSD)
		}
		return tk, usd
	}
	tk, exp := cost(turns(1))
	_, low := cost(turns(0.5))
	_, high := cost(turns(2))
	if o.Config.Retry.TaskRetries > 0 {
		high *= 2 // one retry at the high end
	}
	return TaskProjection{Task: t.ID, Level: t.Level, Model: model, Tier: tier, PromptTokens: prompt, Minutes: minutes,
		Turns: turns(1), Tokens: tk, AttemptUSD: exp, Range: Range{Low: low, Expected: exp, High: high}}
}

// attemptTokens: the first request writes base (the CLI's overhead and the
// prompt) to the cache; each turn adds growthPerTurn to the conversation,
// written once and read by every later request.
func attemptTokens(base int64, turns int) Tokens {
	n := int64(turns)
	return Tokens{
		Input:      uncachedPerTurn * n,
		Output:     outputPerTurn * n,
		CacheWrite: base + growthPerTurn*n,
		CacheRead:  (n-1)*base + growthPerTurn*n*(n-1)/2,
	}
}

func scaleTokens(t Tokens, f float64) Tokens {
	s := func(v int64) int64 { return int64(math.Round(float64(v) * f)) }
	return Tokens{Input: s(t.Input), Output: s(t.Output), CacheRead: s(t.CacheRead), CacheWrite: s(t.CacheWrite)}
}

type factor struct{ low, median, high float64 }

// historyFactor compares what earlier runs' tasks cost (every attempt,
// merged tasks only) with what the token model projects for them from the
// graph they ran: the median ratio scales the expected figure, the 10th and
// 90th percentiles the low and high ones. Only runs of the same mode count
// (a rehearsal's scripted usage says nothing about the real API's).
func historyFactor(o ProjectOptions, ctxTokens int64) (factor, int) {
	var ratios []float64
	if o.LoadRecorded == nil {
		o.History = nil
	}
	for _, file := range o.History {
		evs, err := eventlog.Read(file)
		if err != nil || len(evs) == 0 {
			continue
		}
		st := Replay(evs)
		if st.Started == nil || st.Started.Rehearsal != o.Rehearsal {
			continue
		}
		r, err := o.LoadRecorded(filepath.Join(filepath.Dir(file), "graph.json"))
		if err != nil || !r.Valid() {
			continue
		}
		g := r.Graph
		hist := o
		hist.Graph = g
		models := attemptModels(evs)
		for _, t := range g.Tasks {
			ts := st.Tasks[t.ID]
			if ts == nil || ts.Status != StatusMerged || ts.CostUSD <= 0 {
				continue
			}
			proj := projectTask(hist, t, ctxTokens)
			// A task that ran on another model than today's config gives
			// it says nothing of today's prices (opus costs five times
			// sonnet): it is left out, not rescaled by a guess.
			if m := models[t.ID]; m != "" && m != proj.Model {
				continue
			}
			if proj.Expected > 0 {
				ratios = append(ratios, ts.CostUSD/proj.Expected)
			}
		}
	}
	if len(ratios) == 0 {
		return factor{1, 1, 1}, 0
	}
	sort.Float64s(ratios)
	q := func(p float64) float64 { return ratios[int(math.Round(p*float64(len(ratios)-1)))] }
	m := q(0.5)
	return factor{low: min(q(0.1), m), median: m, high: max(q(0.9), m)}, len(ratios)
}

// attemptModels is the model each task's attempts recorded (the last one's).
func attemptModels(evs []eventlog.Event) map[string]string {
	m := map[string]string{}
	for _, e := range evs {
		if e.Type != EvAttemptFinished {
			continue
		}
		var d AttemptFinished
		if e.Decode(&d) == nil && d.Model != "" {
			m[e.Task] = d.Model
		}
	}
	return m
}

// HistoryLogs lists the event logs of the repository's runs other than
// the feature's own.
func HistoryLogs(runsDir, feature string) []string {
	ms, _ := filepath.Glob(filepath.Join(runsDir, "*", "events.jsonl"))
	var out []string
	for _, m := range ms {
		if filepath.Base(filepath.Dir(m)) != feature {
			out = append(out, m)
		}
	}
	return out
}

// BasisText says what a projection is based on, for people.
func (pr *Projection) BasisText() string {
	if pr.Basis == "history" {
		return fmt.Sprintf("scaled ×%.2f by %d task(s) of this repository's earlier runs", pr.Factor, pr.HistoryTasks)
	}
	// The repository's history is its other features' runs: a resume's
	// own attempts are what it spent, not a history.
	return "from the graph's estimates, models and prompt sizes; no other run of this repository to learn from"
}
