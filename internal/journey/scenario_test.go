package journey

import (
	"testing"

	"github.com/zergrush/zerg/internal/mockapi"
	"github.com/zergrush/zerg/internal/spec"
)

// A scenario task is used when it matches a worker's first attempt or a
// retry, or a plan, design or review session; any other never answers.
func TestUnmatchedScenarioTasks(t *testing.T) {
	sc, err := mockapi.ParseScenario([]byte(`tasks:
  - name: first
    match: "Task auth-1: "
    turns: [{text: done}]
  - name: retry
    match_regexp: "(?s)^Task auth-1: .*verification failed"
    turns: [{text: done}]
  - name: plan
    match: "Plan auth: "
    turns: [{text: done}]
  - name: typo
    match: "Task auht-1: "
    turns: [{text: done}]
`))
	if err != nil {
		t.Fatal(err)
	}
	g := &spec.Graph{Feature: "auth", Tasks: []*spec.Task{{ID: "auth-1", Title: "Log in"}}}
	got := UnmatchedScenarioTasks(sc, "auth", g, "")
	if len(got) != 1 || got[0].Name != "typo" {
		var names []string
		for _, t := range got {
			names = append(names, t.Name)
		}
		t.Errorf("unmatched %q, want only typo", names)
	}
}
