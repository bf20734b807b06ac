package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// shapesJSON is the structure (ids, dependencies, how many files each task
// owns) of real task graphs written for zerg's Python predecessor: a wide, a
// deep and a diamond one. Titles and paths are not kept.
//
//go:embed testdata/shapes.json
var shapesJSON []byte

type shape struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Tasks  []task `json:"tasks"`
}

// headline is the figure: three levels of four tasks, each task
// building on one task of the level below.
func headline() shape { return grid(3, 4) }

// grid is levels levels of width tasks, each task building on the task in
// its column one level down: 3x8 is wide enough for eight workers.
func grid(levels, width int) shape {
	s := shape{Name: fmt.Sprintf("%dx%d", levels, width),
		Source: fmt.Sprintf("%d levels of %d; each task depends on the task in the same column of the level below", levels, width)}
	for l := 1; l <= levels; l++ {
		for c := 0; c < width; c++ {
			t := task{ID: fmt.Sprintf("L%d-%c", l, 'a'+c), Level: l, Files: 1}
			if l > 1 {
				t.Deps = []string{fmt.Sprintf("L%d-%c", l-1, 'a'+c)}
			}
			s.Tasks = append(s.Tasks, t)
		}
	}
	return s
}

func loadShapes() (map[string]shape, error) {
	var list []shape
	if err := json.Unmarshal(shapesJSON, &list); err != nil {
		return nil, fmt.Errorf("shapes.json: %v", err)
	}
	m := map[string]shape{"3x4": headline(), "3x8": grid(3, 8)}
	for _, s := range list {
		m[s.Name] = s
	}
	return m, nil
}

// files are the paths task t owns: one directory per task, so that no two
// tasks touch the same file.
func files(t task) []string {
	if len(t.Paths) > 0 {
		return t.Paths
	}
	n := max(t.Files, 1)
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("work/%s/%d.txt", t.ID, i)
	}
	return out
}

// graphJSON is the task graph zerg rushes.
func graphJSON(feature string, ts []task) ([]byte, error) {
	type gfiles struct {
		Create []string `json:"create"`
		Modify []string `json:"modify"`
		Read   []string `json:"read"`
	}
	type verification struct {
		Command string `json:"command"`
	}
	type gtask struct {
		ID           string       `json:"id"`
		Title        string       `json:"title"`
		Level        int          `json:"level"`
		Dependencies []string     `json:"dependencies"`
		Estimate     *float64     `json:"estimate_minutes,omitempty"`
		Files        gfiles       `json:"files"`
		Verification verification `json:"verification"`
	}
	g := struct {
		Feature string  `json:"feature"`
		Tasks   []gtask `json:"tasks"`
	}{Feature: feature}
	for _, t := range ts {
		fs := files(t)
		g.Tasks = append(g.Tasks, gtask{
			ID: t.ID, Title: "write the files of " + t.ID, Level: t.Level,
			Dependencies: append([]string{}, t.Deps...),
			Estimate:     t.Estimate,
			Files:        gfiles{Create: fs, Modify: []string{}, Read: []string{}},
			Verification: verification{Command: "test -s " + strings.Join(fs, " && test -s ")},
		})
	}
	return json.MarshalIndent(g, "", " ")
}

// Scenario types, as JSON (which the scenario loader takes as YAML).
type scTool struct {
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

type scTurn struct {
	Text  string         `json:"text,omitempty"`
	Tools []scTool       `json:"tools,omitempty"`
	Delay string         `json:"delay,omitempty"`
	Usage map[string]any `json:"usage,omitempty"`
}

type scTask struct {
	Name  string   `json:"name"`
	Match string   `json:"match"`
	Turns []scTurn `json:"turns"`
}

type scenario struct {
	Title string   `json:"title"`
	Tasks []scTask `json:"tasks"`
}

// taskTurns is the scripted model's work on one task, turnsPerTask model
// turns: it writes the task's files (spread over the first turns), checks
// them with Bash in any turn left, and says it is done.
func taskTurns(t task, turnsPerTask int) []scTurn {
	fs := files(t)
	tools := max(turnsPerTask-1, 1)
	turns := make([]scTurn, 0, tools+1)
	for i := 0; i < tools; i++ {
		var calls []scTool
		for k, f := range fs {
			if k%tools == i {
				calls = append(calls, scTool{Name: "Write", Input: map[string]any{
					"file_path": f, "content": fmt.Sprintf("%s file %d: written by the scripted model\n", t.ID, k)}})
			}
		}
		if len(calls) == 0 {
			calls = []scTool{{Name: "Bash", Input: map[string]any{"command": "test -s " + fs[0] + " && echo ok", "description": "Check the file"}}}
		}
		turns = append(turns, scTurn{Tools: calls})
	}
	turns = append(turns, scTurn{Text: "Done: " + t.ID + " wrote " + strings.Join(fs, ", ") + "."})
	return turns
}

// scripts is the synthetic graphs' turns, each with its drawn think time and
// output tokens.
func scripts(ts []task, turnsPerTask int, f *turnsFile, seed uint64, scale float64) map[string][]scTurn {
	base := make(map[string][]scTurn, len(ts))
	for _, t := range ts {
		base[t.ID] = taskTurns(t, max(turnsPerTask, 2))
	}
	return withDraws(ts, base, f, seed, scale)
}

// withDraws gives every turn a drawn think time (its delay) and output
// token count, in the single session's order, so that both runs get the
// same modelled work for the same task. Input tokens are left to the
// server, which counts the real request (chars/4): a longer context costs
// more, as it does with the real API.
func withDraws(ts []task, base map[string][]scTurn, f *turnsFile, seed uint64, scale float64) map[string][]scTurn {
	order := ordered(ts)
	n := 0
	for _, t := range order {
		n += len(base[t.ID])
	}
	draws := f.draw(n, seed, scale)
	out := make(map[string][]scTurn, len(order))
	k := 0
	for _, t := range order {
		turns := append([]scTurn(nil), base[t.ID]...)
		for i := range turns {
			turns[i].Delay = draws[k].Delay.String()
			turns[i].Usage = map[string]any{"output_tokens": draws[k].Output}
			k++
		}
		out[t.ID] = turns
	}
	return out
}

// withEstimates gives each task an estimate_minutes from its drawn think
// time, rounded to the half minute as a planner would write it (half a
// minute at least: zerg counts an estimate of 0 as one minute): what the
// dag schedule's longest-chain-first order ranks tasks by. It returns a
// copy; ts keeps no estimate.
func withEstimates(ts []task, sc map[string][]scTurn) []task {
	think := thinkTimes(sc)
	out := make([]task, len(ts))
	for i, t := range ts {
		m := max(math.Round(think[t.ID].Minutes()*2)/2, 0.5)
		t.Estimate = &m
		out[i] = t
	}
	return out
}

// fixThink gives every turn the think time d instead of its drawn one
// (d 0: the draw stays).
func fixThink(sc map[string][]scTurn, d time.Duration) map[string][]scTurn {
	if d <= 0 {
		return sc
	}
	for _, turns := range sc {
		for i := range turns {
			turns[i].Delay = d.String()
		}
	}
	return sc
}

// rushScenario: one scenario task per graph task, matched by zerg's worker
// prompt ("Task <id>: <title>").
func rushScenario(feature string, ts []task, sc map[string][]scTurn) ([]byte, error) {
	s := scenario{Title: feature}
	for _, t := range ordered(ts) {
		s.Tasks = append(s.Tasks, scTask{Name: t.ID, Match: "Task " + t.ID + ":", Turns: sc[t.ID]})
	}
	return json.MarshalIndent(s, "", " ")
}

// singleMarker starts the single session's prompt; its scenario task
// matches it.
const singleMarker = "Do every task of feature"

// singlePrompt lists every task in dependency order, as one would ask one
// session to do the whole feature.
func singlePrompt(feature string, ts []task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s, one after the other, in this order:\n", singleMarker, feature)
	for _, t := range ordered(ts) {
		fmt.Fprintf(&b, "- Task %s (level %d", t.ID, t.Level)
		if len(t.Deps) > 0 {
			fmt.Fprintf(&b, ", after %s", strings.Join(t.Deps, ", "))
		}
		fmt.Fprintf(&b, "): write %s\n", strings.Join(files(t), ", "))
	}
	return b.String()
}

// singleScenario is the concatenation of the tasks' turns. A task's last
// turn (its "done" text) would end the session, so, except for the last
// task, it keeps its text, think time and tokens and adds a no-op Bash
// call: the session goes on to the next task with the same number of model
// requests as the rush.
func singleScenario(feature string, ts []task, sc map[string][]scTurn) ([]byte, error) {
	all := scTask{Name: "single-session", Match: singleMarker + " " + feature}
	order := ordered(ts)
	for i, t := range order {
		turns := sc[t.ID]
		for j, tu := range turns {
			if j == len(turns)-1 && i < len(order)-1 {
				tu.Tools = []scTool{{Name: "Bash", Input: map[string]any{"command": "true", "description": "Next task"}}}
			}
			all.Turns = append(all.Turns, tu)
		}
	}
	return json.MarshalIndent(scenario{Title: feature, Tasks: []scTask{all}}, "", " ")
}
