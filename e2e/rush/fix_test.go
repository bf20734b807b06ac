package rush

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFixReviewFinding: the loop from a review finding to a merged fix.
// zerg review finds bin/shout blocking; zerg fix demo 1 adds task fix-1
// (owning bin/shout, after every level, verified as L2-shout is) to the
// graph and resumes the run, which runs only that task and delivers a new
// head; a second review passes and the merge takes the fix. The control
// is the review of the first head, which blocks.
func TestFixReviewFinding(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		// The fixer's script, before the demo's tasks (the first match wins).
		editFile(t, scenarioPath(dir), func(s string) string {
			return strings.Replace(s, "\ntasks:\n", `
tasks:
  - name: fix
    match: "Task fix-1:"
    turns:
      - tools: [{name: Read, input: {file_path: bin/shout}}]
      - tools: [{name: Write, input: {file_path: bin/shout, content: "#!/bin/sh\n# Names come from the file given, data/names.txt by default.\n. ./lib/upper.sh\nupper < \"${1:-data/names.txt}\"\n"}}]
      - text: "bin/shout now takes the names file as an argument."
`, 1)
		})
	})
	if r := p.zerg("rush", "demo", "--rehearse"); r.code != 0 {
		t.Fatalf("rush: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	first := p.git("rev-parse", "zerg/demo/integration")
	blocking := reviewScenario(t, "blocking", `{"findings": [{"severity": "blocking", "title": "bin/shout reads a fixed path", "file": "bin/shout", "line": 3, "detail": "Take the names file as an argument."}]}`)
	r := p.zerg("review", "demo", "--rehearse", "--scenario", blocking)
	if r.code != 1 || !strings.Contains(r.stdout, "1. blocking [claude] bin/shout:3: bin/shout reads a fixed path") || !strings.Contains(r.stderr, "zerg fix demo") {
		t.Fatalf("review: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	r = p.zerg("fix", "demo", "1", "--rehearse")
	if r.code != 0 {
		t.Fatalf("fix: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"added task fix-1 (level 4) to .zerg/specs/demo/task-graph.json for finding 1: owns bin/shout, verified by `sh bin/shout | grep -qx LINUS`",
		"demo: DELIVERED", "next: zerg review demo"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("fix output lacks %q:\n%s\n%s", want, r.stdout, r.stderr)
		}
	}
	if !strings.Contains(r.stderr, "resuming the run of demo") || !strings.Contains(r.stderr, "commit it") {
		t.Errorf("fix does not say what it does:\n%s", r.stderr)
	}
	var g struct {
		Tasks []struct {
			ID           string   `json:"id"`
			Level        int      `json:"level"`
			Dependencies []string `json:"dependencies"`
			Description  string   `json:"description"`
		} `json:"tasks"`
	}
	data, err := os.ReadFile(filepath.Join(p.dir, ".zerg", "specs", "demo", "task-graph.json"))
	if err != nil || json.Unmarshal(data, &g) != nil || len(g.Tasks) != 8 {
		t.Fatalf("graph after fix: %v\n%s", err, data)
	}
	ft := g.Tasks[7]
	if ft.ID != "fix-1" || ft.Level != 4 || strings.Join(ft.Dependencies, ",") != "L2-shout" || !strings.Contains(ft.Description, "Take the names file as an argument.") {
		t.Errorf("the fix task: %+v", ft)
	}
	second := p.git("rev-parse", "zerg/demo/integration")
	if second == first || p.git("merge-base", "--is-ancestor", first, second) != "" {
		t.Fatalf("the integration branch did not move forward from %s (now %s)", first, second)
	}
	if shout := p.git("show", second+":bin/shout"); !strings.Contains(shout, "${1:-data/names.txt}") {
		t.Errorf("the fix is not on the branch:\n%s", shout)
	}
	if st := p.git("log", "--format=%s", first+".."+second); !strings.Contains(st, "fix-1") || strings.Contains(st, "L1-") {
		t.Errorf("the resume redid other tasks or did not merge fix-1:\n%s", st)
	}

	// Reviewed again: clean; the graph change committed as a user would;
	// the merge takes the fix.
	if r := p.zerg("review", "demo", "--rehearse", "--scenario", reviewScenario(t, "clean", `{"findings": []}`)); r.code != 0 {
		t.Fatalf("second review: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	p.git("commit", "--quiet", "-am", "demo: the fix task")
	if m := p.zerg("merge", "demo", "--into", "main"); m.code != 0 || !strings.Contains(m.stdout, "merged zerg/demo/integration into main") {
		t.Fatalf("merge: exit %d\n%s%s", m.code, m.stdout, m.stderr)
	}
	if shout := p.git("show", "main:bin/shout"); !strings.Contains(shout, "${1:-data/names.txt}") {
		t.Errorf("main lacks the fix:\n%s", shout)
	}
}
