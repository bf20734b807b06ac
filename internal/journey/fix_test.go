package journey

import (
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/spec"
)

const fixGraph = `{"feature": "demo", "tasks": [
  {"id": "L1-lib", "title": "lib", "level": 1, "files": {"create": ["lib/a.sh"]}, "verification": {"command": "sh -n lib/a.sh"}},
  {"id": "L2-bin", "title": "bin", "level": 2, "dependencies": ["L1-lib"], "files": {"create": ["bin/shout"]}, "verification": "sh bin/shout | grep -q X"}
]}`

func fixSummary() *Summary {
	s := &Summary{Branch: "zerg/demo/integration", Head: "0123456789abcdef", Findings: []Finding{
		{Severity: Blocking, Source: "claude", Title: "bin/shout reads a fixed path", File: "bin/shout", Line: 3, Detail: "Take the names file as an argument."},
		{Severity: Blocking, Source: "review", Title: "not fully reviewed: 1 file"},
		{Severity: Blocking, Source: "claude", Title: "no quoting\x1b]2;x\x07", File: "bin/shout", Line: 5},
		{Severity: Major, Source: "gate", Title: "gate lint failed (exit 1): make lint"},
		{Severity: Blocking, Source: "protected", Title: "changes a protected path", File: ".github/workflows/ci.yml"},
	}}
	Aggregate(s)
	return s
}

func loadFixGraph(t *testing.T) *spec.Graph {
	g, issues := spec.Parse([]byte(fixGraph))
	if len(issues) != 0 {
		t.Fatal(issues)
	}
	return g
}

// TestPlanFixes: every blocking finding a worker can fix becomes a task
// (one per file), verified as the file's owner is, after every level; the
// review's own and protected-path findings are skipped with why.
func TestPlanFixes(t *testing.T) {
	g := loadFixGraph(t)
	s := fixSummary()
	tasks, problems, err := PlanFixes(s, nil, g, FixOptions{Exists: func(string) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 {
		t.Fatalf("tasks %+v", tasks)
	}
	ft := tasks[0]
	if ft.ID != "fix-1" || ft.Level != 3 || strings.Join(ft.Modify, ",") != "bin/shout" || ft.Verify != "sh bin/shout | grep -q X" ||
		strings.Join(ft.Dependencies, ",") != "L2-bin" || len(ft.Findings) != 2 {
		t.Errorf("task %+v", ft)
	}
	if strings.ContainsAny(ft.Title, "\x1b\a") || !strings.Contains(ft.Description, "Take the names file as an argument.") || !strings.Contains(ft.Description, "bin/shout:5") {
		t.Errorf("title %q description %q", ft.Title, ft.Description)
	}
	if len(problems) != 2 {
		t.Errorf("problems %+v", problems)
	}
	// The task goes into the graph and the graph stays valid.
	out, err := spec.AppendTasks([]byte(fixGraph), ft.Doc())
	if err != nil {
		t.Fatal(err)
	}
	if r := spec.Check(out, spec.Options{}); !r.Valid() {
		t.Errorf("graph with the fix: %v", r.Errors)
	}

	// Asked by number: an unfixable one is an error; a gate finding needs
	// files, then --verify when no task verifies them.
	for _, c := range []struct {
		n    int
		opts FixOptions
		want string
	}{
		{2, FixOptions{}, "what the review could not read"},
		{4, FixOptions{}, "protected path"}, // sorted worst first: the protected path is 4, the gate 5
		{5, FixOptions{}, "pass --files"},
		{5, FixOptions{Files: []string{"Makefile"}}, "pass --verify"},
		{9, FixOptions{}, "lists findings 1 to 5"},
	} {
		if _, _, err := PlanFixes(s, []int{c.n}, g, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("finding %d: %v, want %q", c.n, err, c.want)
		}
	}
	tasks, _, err = PlanFixes(s, []int{5}, g, FixOptions{Files: []string{"Makefile"}, Verify: "make lint", Exists: func(string) bool { return false }})
	if err != nil || len(tasks) != 1 || strings.Join(tasks[0].Create, ",") != "Makefile" || tasks[0].Verify != "make lint" || len(tasks[0].Dependencies) != 0 {
		t.Errorf("gate finding with files: %v %+v", err, tasks)
	}
}
