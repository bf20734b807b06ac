package dashboard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDashboardRefusedWritesAndGates: a delivered rehearsal in which
// L1-names's hook refused a write (a file its task does not own) and a gate
// that is not required failed with several lines naming docs/usage.md.
// The run page says "delivered with 1 refused write" and names the refused
// path; the task page of L1-names names it too; the gate's page shows its
// output line by line, from its log, with the task whose file it names.
func TestDashboardRefusedWritesAndGates(t *testing.T) {
	ctx := browser(t)
	p := newProject(t, func(s string) string {
		out := strings.Replace(s, `      - text: "Created data/names.txt with three names."`,
			`      - tools: [{name: Write, input: {file_path: tests/names_test.sh, content: "grep -q Ada data/names.txt\n"}}]
      - text: "Created data/names.txt with three names and tests/names_test.sh."`, 1)
		if out == s {
			panic("the demo scenario's L1-names no longer ends as this test expects")
		}
		return out
	})
	cfg := filepath.Join(p.dir, ".zerg", "config.yaml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gate := "  - name: notes\n    command: printf 'notes - line one\\nnotes - docs/usage.md is read by nobody\\nline three\\n'; exit 1\n    required: false\n"
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), "gates:\n", "gates:\n"+gate, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("commit", "-q", "-am", "a gate that only reports")
	if code, so, se := p.zerg("rush", "demo", "--rehearse"); code != 0 || !strings.Contains(so, "demo: DELIVERED with 1 refused write") {
		t.Fatalf("rush: exit %d\n%s\n%s", code, so, se)
	}
	u := startDashboard(t, p, "demo")
	if err := chromedp.Do(within(t, ctx), chromedp.Navigate(u), chromedp.WaitVisible(`#refused-writes li`)); err != nil {
		t.Fatalf("the run page shows no refused write: %v", err)
	}
	state, err := chromedp.Run(within(t, ctx), chromedp.Text(`#state`))
	if err != nil || state != "delivered with 1 refused write" {
		t.Errorf("state badge %q (%v)", state, err)
	}
	refused, err := chromedp.Run(within(t, ctx), chromedp.Text(`#refused-writes`))
	if err != nil || !strings.Contains(refused, "L1-names: write refused: tests/names_test.sh, not owned") {
		t.Errorf("refused writes %q (%v)", refused, err)
	}
	screenshot(t, ctx, "refused.png")

	// The gate's page, from its row's link.
	if err := chromedp.Do(within(t, ctx),
		chromedp.Evaluate[chromedp.Void](`location.hash = document.querySelector('tr.gate[data-gate="notes"] a').getAttribute("href")`),
		chromedp.WaitVisible(`#gate-output`)); err != nil {
		t.Fatalf("gate page: %v", err)
	}
	output, err := chromedp.Run(within(t, ctx), chromedp.Evaluate[string](`document.getElementById("gate-output").innerText`))
	if err != nil || !strings.Contains(output, "notes - line one\nnotes - docs/usage.md is read by nobody\nline three") {
		t.Errorf("gate output %q (%v): not the gate's lines", output, err)
	}
	named, err := chromedp.Run(within(t, ctx), chromedp.Text(`#gate-named`))
	if err != nil || !strings.Contains(named, "L1-docs") {
		t.Errorf("gate names %q (%v), want L1-docs (it owns docs/usage.md)", named, err)
	}
	screenshot(t, ctx, "gate.png")

	if err := chromedp.Do(within(t, ctx),
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/run/demo/task/L1-names"`),
		chromedp.WaitVisible(`#task-refused`)); err != nil {
		t.Fatalf("task page: %v", err)
	}
	task, err := chromedp.Run(within(t, ctx), chromedp.Text(`#task-refused`))
	if err != nil || !strings.Contains(task, "write refused: tests/names_test.sh, not owned (Write)") {
		t.Errorf("task page's refused writes %q (%v)", task, err)
	}
}
