package runstate

import (
	"slices"
	"strconv"
	"strings"

	"github.com/zergrush/zerg/internal/eventlog"
)

// CostLine is what a task, level, model or the whole run spent, with what
// the run's projection said it would (zero when the log has none).
type CostLine struct {
	Name     string  `json:"name"`
	Level    int     `json:"level,omitempty"`
	Model    string  `json:"model,omitempty"`
	Attempts int     `json:"attempts"`
	Tokens   Tokens  `json:"tokens"`
	CostUSD  float64 `json:"cost_usd"`
	// Projected is the recorded projection of the same tasks.
	Projected *Range `json:"projected,omitempty"`
}

// CostReport is a run's spending from its log.
type CostReport struct {
	Feature string     `json:"feature"`
	Basis   string     `json:"projection_basis,omitempty"`
	Tasks   []CostLine `json:"tasks"`
	Levels  []CostLine `json:"levels"`
	Models  []CostLine `json:"models"`
	Total   CostLine   `json:"total"`
	// Untracked counts attempts whose event carries a cost but no token
	// split (logs of an older zerg): their tokens are missing above.
	Untracked int `json:"untracked_attempts,omitempty"`
	// Subscription: the run's workers used a subscription token; cost_usd
	// is the usage at API prices, not what was paid.
	Subscription bool `json:"subscription,omitempty"`
	// NotMeasured says why the figures are not the run's spending (empty:
	// they are): in tasks mode the user's Claude Code session does the
	// tasks and keeps its usage; zerg sees none of it, so its zeros are
	// not "free".
	NotMeasured string `json:"not_measured,omitempty"`
}

// Cost sums every attempt_finished of a run's log by task, level and model,
// next to the last recorded projection. Its total is the sum of the
// attempts' cost_usd, nothing else.
func Cost(feature string, events []eventlog.Event) CostReport {
	st := Replay(events)
	// Empty lists, not null, for a run without attempts (docs/json.md).
	r := CostReport{Feature: feature, Tasks: []CostLine{}, Levels: []CostLine{}, Models: []CostLine{}}
	proj := st.Projection
	if proj != nil {
		r.Basis = proj.Basis
	}
	r.Subscription = st.Started != nil && st.Started.Subscription
	if st.Started != nil && !st.Started.Caps().MeasuresUsage {
		r.NotMeasured = "tasks mode: the tasks ran in your Claude Code session, which keeps their usage (its /cost); zerg sees none of it"
	}
	tasks := map[string]*CostLine{}
	var order []string
	line := func(id string) *CostLine {
		if l := tasks[id]; l != nil {
			return l
		}
		l := &CostLine{Name: id, Level: st.Task(id).Level}
		if tp := proj.Task(id); tp.Task != "" {
			l.Level, l.Model = tp.Level, tp.Model
			rg := tp.Range
			l.Projected = &rg
		}
		tasks[id] = l
		order = append(order, id)
		return l
	}
	if proj != nil {
		for _, tp := range proj.Tasks {
			line(tp.Task)
		}
	}
	models := map[string]*CostLine{}
	model := func(m string) *CostLine {
		ml := models[m]
		if ml == nil {
			ml = &CostLine{Name: m, Model: m}
			models[m] = ml
		}
		return ml
	}
	// Each model's projection: the projected tasks it was to run, as the
	// tasks' and levels' lines have theirs.
	if proj != nil {
		for _, tp := range proj.Tasks {
			if tp.Model == "" {
				continue
			}
			ml := model(tp.Model)
			if ml.Projected == nil {
				ml.Projected = &Range{}
			}
			ml.Projected.Add(tp.Range)
		}
	}
	for _, e := range events {
		if e.Type != EvAttemptFinished {
			continue
		}
		var d AttemptFinished
		if e.Decode(&d) != nil {
			continue
		}
		l := line(e.Task)
		l.Attempts++
		l.CostUSD += d.CostUSD
		if d.Model != "" {
			l.Model = d.Model
		}
		if d.Usage != nil {
			l.Tokens.Add(*d.Usage)
		} else if d.CostUSD > 0 || d.Tokens > 0 {
			r.Untracked++
		}
		m := d.Model
		if m == "" {
			m = l.Model
		}
		if m == "" {
			m = "unknown"
		}
		ml := model(m)
		ml.Attempts++
		ml.CostUSD += d.CostUSD
		if d.Usage != nil {
			ml.Tokens.Add(*d.Usage)
		}
	}
	slices.SortStableFunc(order, func(a, b string) int {
		if tasks[a].Level != tasks[b].Level {
			return tasks[a].Level - tasks[b].Level
		}
		return strings.Compare(a, b)
	})
	levels := map[int]*CostLine{}
	r.Total = CostLine{Name: "total"}
	for _, id := range order {
		l := tasks[id]
		r.Tasks = append(r.Tasks, *l)
		lv := levels[l.Level]
		if lv == nil {
			lv = &CostLine{Level: l.Level}
			levels[l.Level] = lv
		}
		for _, agg := range []*CostLine{lv, &r.Total} {
			agg.Attempts += l.Attempts
			agg.CostUSD += l.CostUSD
			agg.Tokens.Add(l.Tokens)
			if l.Projected != nil {
				if agg.Projected == nil {
					agg.Projected = &Range{}
				}
				agg.Projected.Add(*l.Projected)
			}
		}
	}
	for _, id := range order {
		if lv := levels[tasks[id].Level]; lv != nil {
			lv.Name = "level " + strconv.Itoa(lv.Level)
			r.Levels = append(r.Levels, *lv)
			delete(levels, tasks[id].Level)
		}
	}
	for _, m := range models {
		r.Models = append(r.Models, *m)
	}
	slices.SortFunc(r.Models, func(a, b CostLine) int { return strings.Compare(a.Name, b.Name) })
	if r.Tasks == nil {
		r.Tasks = []CostLine{}
	}
	return r
}
