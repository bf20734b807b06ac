package rush

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/run"
)

// writeLevel1Graph replaces the demo's graph with level 1 only, each task's
// verification `true` (a check that cannot fail, as a hasty graph has),
// and L1-docs creating two files.
func writeLevel1Graph(t *testing.T, dir string) {
	t.Helper()
	var tasks []any
	for _, tk := range []struct {
		id     string
		create []string
	}{
		{"L1-names", []string{"data/names.txt"}}, {"L1-greet", []string{"lib/greet.sh"}},
		{"L1-upper", []string{"lib/upper.sh"}}, {"L1-docs", []string{"docs/usage.md", "docs/extra.md"}},
	} {
		tasks = append(tasks, map[string]any{"id": tk.id, "title": tk.id, "level": 1,
			"files": map[string]any{"create": tk.create}, "verification": map[string]any{"command": "true"}})
	}
	b, _ := json.Marshal(map[string]any{"feature": "demo", "tasks": tasks})
	if err := os.WriteFile(filepath.Join(dir, ".zerg", "specs", "demo", "task-graph.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
		return strings.Replace(s, "task_retries: 2", "task_retries: 0", 1)
	})
}

// TestEmptyWorkIsNotDelivered: the scripted model matches no task (a
// scenario for another feature), so every worker just answers "done".
// Their verifications pass on the base (`true`), so only the attempt's
// completeness check stands between that and a delivered branch: no task
// is merged, each fails as empty_change, and zerg check warned beforehand
// that the checks cannot fail.
func TestEmptyWorkIsNotDelivered(t *testing.T) {
	p := newProject(t, func(dir string) {
		writeLevel1Graph(t, dir)
		if err := os.WriteFile(scenarioPath(dir), []byte("tasks:\n  - name: other\n    match: \"Task of another feature:\"\n    turns:\n      - text: done\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	chk := p.zerg("check", "demo")
	if chk.code != 0 || strings.Count(chk.stdout, "a check that cannot fail") != 4 {
		t.Errorf("zerg check: exit %d, want 0 with 4 warnings:\n%s%s", chk.code, chk.stdout, chk.stderr)
	}
	if strict := p.zerg("check", "demo", "--strict"); strict.code != 1 {
		t.Errorf("zerg check --strict: exit %d, want 1", strict.code)
	}
	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (not delivered)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	evs := p.events()
	for _, e := range evs {
		if e.Type == run.EvLevelMerged {
			t.Errorf("a level was merged: %s", e.Data)
		}
	}
	for _, id := range []string{"L1-names", "L1-greet", "L1-upper", "L1-docs"} {
		if got := attemptReason(evs, id, 1); got != "empty_change" {
			t.Errorf("%s attempt 1: %q, want empty_change", id, got)
		}
	}
	if out, err := exec.Command("git", "-C", p.dir, "rev-parse", "--verify", "-q", run.IntegrationBranch("demo")).Output(); err == nil && strings.TrimSpace(string(out)) != p.base {
		t.Errorf("the integration branch moved to %s", out)
	}
	if !strings.Contains(r.stdout, "changed nothing") {
		t.Errorf("the report does not say the workers changed nothing:\n%s", r.stdout)
	}
}

// TestMissingCreatedFileIsNotDelivered: L1-docs writes docs/usage.md but
// not docs/extra.md, which its task also creates: it fails as
// missing_file and the level is not merged; the others did their work.
func TestMissingCreatedFileIsNotDelivered(t *testing.T) {
	p := newProject(t, func(dir string) { writeLevel1Graph(t, dir) })
	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	evs := p.events()
	if got := attemptReason(evs, "L1-docs", 1); got != "missing_file" {
		t.Errorf("L1-docs attempt 1: %q, want missing_file", got)
	}
	for _, id := range []string{"L1-names", "L1-greet", "L1-upper"} {
		if got := attemptReason(evs, id, 1); got != "completed" {
			t.Errorf("%s attempt 1: %q, want completed (the control: real work passes)", id, got)
		}
	}
	if !strings.Contains(r.stdout, "docs/extra.md") {
		t.Errorf("the report does not name docs/extra.md:\n%s", r.stdout)
	}
}
