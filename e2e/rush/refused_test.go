package rush

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/runstate"
)

// namesWritesATest makes L1-names's worker also Write a file its task does
// not own (tests/names_test.sh: the hook refuses it) and then claim it did.
func namesWritesATest(t *testing.T, dir string) {
	t.Helper()
	editFile(t, scenarioPath(dir), func(s string) string {
		out := strings.Replace(s, `      - text: "Created data/names.txt with three names."`,
			`      - tools: [{name: Write, input: {file_path: tests/names_test.sh, content: "grep -q Ada data/names.txt\n"}}]
      - text: "Created data/names.txt with three names and a test of it in tests/names_test.sh."`, 1)
		if out == s {
			t.Fatal("the demo scenario's L1-names no longer ends as this test expects")
		}
		return out
	})
}

// TestRefusedWriteIsInTheVerdict: a worker whose hook refused a write (a
// file its task does not own) in both modes: the run is "DELIVERED with 1
// refused write", never a plain DELIVERED; the report, zerg status and
// status --json name the refused path and why; the summary L2-greet-all
// reads of L1-names says what was refused before the worker's own (false)
// words; and the file is on no branch.
func TestRefusedWriteIsInTheVerdict(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{isolated, "subprocess"} {
		t.Run(mode, func(t *testing.T) {
			p := newProject(t, func(dir string) {
				namesWritesATest(t, dir)
				editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string { return modeLines(mode) + s })
			})
			r := p.zerg("rush", "demo", "--rehearse")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			for _, want := range []string{"demo: DELIVERED with 1 refused write (rehearsal)", "  L1-names: write refused: tests/names_test.sh, not owned\n"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("report lacks %q:\n%s", want, r.stdout)
				}
			}
			if s := p.zerg("status"); !strings.Contains(s.stdout, "demo: DELIVERED with 1 refused write") || !strings.Contains(s.stdout, "L1-names: write refused: tests/names_test.sh, not owned") {
				t.Errorf("status:\n%s", s.stdout)
			}
			var v struct {
				State         string `json:"state"`
				RefusedWrites int    `json:"refused_writes"`
				Tasks         []struct {
					ID            string                             `json:"id"`
					RefusedWrites []struct{ Path, Tool, Why string } `json:"refused_writes"`
				} `json:"tasks"`
			}
			s := p.zerg("status", "--json")
			if err := json.Unmarshal([]byte(s.stdout), &v); err != nil {
				t.Fatalf("status --json: %v\n%s", err, s.stdout)
			}
			if v.State != "delivered" || v.RefusedWrites != 1 {
				t.Errorf("status --json: state %s, refused_writes %d", v.State, v.RefusedWrites)
			}
			for _, task := range v.Tasks {
				want := task.ID == "L1-names"
				got := len(task.RefusedWrites) == 1 && task.RefusedWrites[0].Path == "tests/names_test.sh" && task.RefusedWrites[0].Tool == "Write" && task.RefusedWrites[0].Why == "not owned"
				if want != got {
					t.Errorf("status --json: %s refused writes %+v", task.ID, task.RefusedWrites)
				}
			}
			prompt, err := os.ReadFile(filepath.Join(p.dir, ".zerg", "runs", "demo", "attempts", "L2-greet-all", "1", "prompt.md"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(prompt), "[zerg: the hook refused 1 write of this task: tests/names_test.sh, not owned; they are not in its commit, whatever follows says] Created data/names.txt") {
				t.Errorf("the summary L2-greet-all read of L1-names does not say what was refused:\n%s", prompt)
			}
			if p.integrationFiles()["tests/names_test.sh"] {
				t.Error("the refused file is on the integration branch")
			}
		})
	}
}

// TestRefusedWritesFail: with security.refused_writes: fail, the attempt
// whose write was refused fails (write_refused), its retry is told what
// was refused, and the run delivers plainly once the retry does without.
func TestRefusedWritesFail(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		namesWritesATest(t, dir)
		editFile(t, scenarioPath(dir), func(s string) string {
			// The retry writes only its own file.
			return strings.Replace(s, "tasks:\n", `tasks:
  - name: names-retry
    match_regexp: "(?s)Task L1-names:.*Previous attempt failed"
    turns:
      - tools: [{name: Write, input: {file_path: data/names.txt, content: "Ada\nGrace\nLinus\n"}}]
      - text: "Created data/names.txt."
`, 1)
		})
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
			return s + "security:\n  refused_writes: fail\n"
		})
	})
	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 0 || !strings.Contains(r.stdout, "demo: DELIVERED (rehearsal)") || strings.Contains(r.stdout, "write refused") {
		t.Fatalf("exit %d, want a plain delivery\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var first runstate.AttemptFinished
	for _, e := range p.events() {
		if e.Type == runstate.EvAttemptFinished && e.Task == "L1-names" && e.Attempt == 1 {
			e.Decode(&first)
		}
	}
	if first.Class != "task" || first.Reason != "write_refused" || !strings.Contains(first.Detail, "tests/names_test.sh, not owned") {
		t.Errorf("L1-names attempt 1: %+v", first)
	}
	prompt, err := os.ReadFile(filepath.Join(p.dir, ".zerg", "runs", "demo", "attempts", "L1-names", "2", "prompt.md"))
	if err != nil || !strings.Contains(string(prompt), "tests/names_test.sh, not owned") {
		t.Errorf("the retry's prompt does not say what was refused (%v):\n%s", err, prompt)
	}
}

// TestGateOutputAndAdvice: a required gate that fails on level 1 with the
// failure first and thousands of lines after it (as pytest prints a
// failure before a long summary). zerg logs --gate prints the failure
// line, kept whole in the gate's log; the gate names the task whose file
// its output names; the report's advice is not "zerg retry" (every task
// is committed); and with the gate moved to the last level
// (gates[].when: last_level), --resume delivers, the old failure marked
// superseded.
func TestGateOutputAndAdvice(t *testing.T) {
	t.Parallel()
	gate := `  - name: docs
    command: if [ -f docs/usage.md ] && [ ! -f bin/greet-all ]; then echo "FAILED docs/usage.md:3 names sh bin/greet-all, which does not exist"; seq 1 20000; exit 1; fi
    required: true
`
	p := newProject(t, func(dir string) {
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
			return strings.Replace(s, "gates:\n", "gates:\n"+gate, 1)
		})
	})
	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"level 1: failed (gate docs failed (exit 1); its output names files of L1-docs)",
		"next: every task of level 1 is committed: nothing to retry. zerg logs demo --gate docs shows the gate's output"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "zerg retry") {
		t.Errorf("the report advises zerg retry with nothing to retry:\n%s", r.stdout)
	}
	l := p.zerg("logs", "demo", "--gate", "docs")
	if l.code != 0 || !strings.Contains(l.stdout, "-- output\nFAILED docs/usage.md:3 names sh bin/greet-all") ||
		!strings.Contains(l.stdout, "\n20000") || !strings.Contains(l.stdout, "its output names files of: L1-docs") {
		t.Errorf("logs --gate: exit %d\n%s%s", l.code, l.stdout[:min(len(l.stdout), 1500)], l.stderr)
	}
	editFile(t, filepath.Join(p.dir, ".zerg", "config.yaml"), func(s string) string {
		return strings.Replace(s, "    required: true\n", "    required: true\n    when: last_level\n", 1)
	})
	r = p.zerg("rush", "demo", "--rehearse", "--resume")
	if r.code != 0 || !strings.Contains(r.stdout, "demo: DELIVERED") {
		t.Fatalf("resume with the gate on the last level: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var v runstate.View
	if err := json.Unmarshal([]byte(p.zerg("status", "--json").stdout), &v); err != nil {
		t.Fatal(err)
	}
	docs := 0
	for _, g := range v.Gates {
		if g.Name != "docs" {
			continue
		}
		docs++
		if (g.Level == 1) != g.Superseded || (g.Level != 1 && g.Level != 3) {
			t.Errorf("gate docs on level %d: exit %d, superseded %v", g.Level, g.Exit, g.Superseded)
		}
	}
	if docs != 2 {
		t.Errorf("gate docs ran %d times, want on level 1, then only on the last", docs)
	}
}
