package journey

import (
	"slices"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/mockapi"
	"github.com/zergrush/zerg/internal/spec"
)

// UnmatchedScenarioTasks lists the scenario's tasks that match none of the
// prompts a run of the graph sends, so zerg mockapi check and a rehearsal
// can warn of a task that will never answer (usually a typo in a task id):
// each task's first attempt and a retry (built as the worker's,
// internal/attempt: they begin "Task <id>: <title>" and a retry adds why
// the last attempt failed), and the feature's plan, design and review
// sessions, which a scenario may answer too. The match rule is the
// scripted server's own (mockapi.Task.Matches). specDir, when known, gives
// the prompts the feature's spec sections, as workers get them.
func UnmatchedScenarioTasks(sc *mockapi.Scenario, feature string, g *spec.Graph, specDir string) []*mockapi.Task {
	var prompts []string
	for _, t := range g.Tasks {
		in := attempt.Input{Feature: feature, Graph: g, Task: t,
			Context: attempt.LoadContext(attempt.ContextFiles{SpecDir: specDir}, g, t)}
		prompts = append(prompts, attempt.Prompt(in))
		in.Previous = "verification failed (exit 1)"
		prompts = append(prompts, attempt.Prompt(in))
	}
	prompts = append(prompts, PlanPrompt(feature, "", false), PlanPrompt(feature, "", true),
		DesignPrompt(feature, ""), RepairPrompt(feature, 2, nil), ReviewPrompt(feature, "", "", ReviewPlan{}, 1, nil))
	var out []*mockapi.Task
	for _, st := range sc.Tasks {
		if !slices.ContainsFunc(prompts, st.Matches) {
			out = append(out, st)
		}
	}
	return out
}
