package rush

import (
	"strings"
	"testing"
)

// TestRehearsalWarnsOfUnusedScenarioTasks: a scenario task that matches no
// prompt of the run (here one for a task the graph does not have) is one
// warning line when the rehearsal starts, naming it; the run goes on and
// delivers. The scenario's review task, for zerg review, is no warning.
func TestRehearsalWarnsOfUnusedScenarioTasks(t *testing.T) {
	p := newProject(t, func(dir string) {
		editFile(t, scenarioPath(dir), func(s string) string {
			return strings.Replace(s, "\ntasks:\n", "\ntasks:\n  - name: stale\n    match: \"Task L9-gone:\"\n    turns: [{text: done}]\n", 1)
		})
	})
	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var warnings []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(l, "zerg: warning: ") && strings.Contains(l, "scenario") {
			warnings = append(warnings, l)
		}
	}
	want := `zerg: warning: .zerg/specs/demo/scenario.yaml: task "stale" (match "Task L9-gone:") matches no task of demo's graph`
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], want) {
		t.Errorf("scenario warnings %q, want one: %s…\n%s", warnings, want, r.stderr)
	}
}
