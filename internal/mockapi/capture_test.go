package mockapi

import (
	"strings"
	"testing"
)

// TestCapturesFillInWhatAToolPrinted: a tool call's {{NAME}} takes the
// first group of its capture's last match in the tool results so far, the
// newest first (a string result or text blocks); one that matches nothing
// says so in the input.
func TestCapturesFillInWhatAToolPrinted(t *testing.T) {
	_, url := startServer(t, `
tasks:
  - name: lease
    match: "hand out"
    turns:
      - tools: [{name: Bash, input: {command: "zerg tasks next f"}}]
      - tools:
          - name: Bash
            input: {command: "zerg tasks done f T1 --lease {{lease}}", again: ["{{lease}}", "{{none}}"]}
            captures: {lease: '"lease": "(T1-1-[0-9a-f]+)"', none: 'nothing (here)'}
      - text: "done"
`)
	c := newConvo("please hand out the tasks")
	m := assemble(t, parseSSE(t, post(t, url, "s1", c.body(true)).Body))
	tus := toolUses(m.Blocks)
	if len(tus) != 1 {
		t.Fatalf("turn 1: %v", m.Blocks)
	}
	// Two results: an older one with another lease, the newest as text
	// blocks.
	c.messages = append(c.messages,
		map[string]any{"role": "assistant", "content": []any{tus[0]}},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_other", "content": `"lease": "T1-1-00aa"`},
			map[string]any{"type": "tool_result", "tool_use_id": tus[0]["id"], "content": []any{
				map[string]any{"type": "text", "text": `{"tasks": [{"task": "T1", "lease": "T1-1-0bad", `},
				map[string]any{"type": "text", "text": `"lease": "T1-1-beef"}]}`}}}}})
	m = assemble(t, parseSSE(t, post(t, url, "s1", c.body(true)).Body))
	tus = toolUses(m.Blocks)
	if len(tus) != 1 {
		t.Fatalf("turn 2: %v", m.Blocks)
	}
	in := tus[0]["input"].(map[string]any)
	if in["command"] != "zerg tasks done f T1 --lease T1-1-beef" {
		t.Errorf("command %q", in["command"])
	}
	again := in["again"].([]any)
	if again[0] != "T1-1-beef" || !strings.Contains(again[1].(string), "mockapi-capture-none-matched-nothing") {
		t.Errorf("again %v", again)
	}
}

// A capture is checked when the scenario is read: it compiles, has a
// group, and fills in something.
func TestCapturesAreChecked(t *testing.T) {
	for yaml, want := range map[string]string{
		`{name: Bash, input: {command: "{{x}}"}, captures: {x: "("}}`:      "captures.x: error parsing regexp",
		`{name: Bash, input: {command: "{{x}}"}, captures: {x: "plain"}}`:  "has no group",
		`{name: Bash, input: {command: "no place"}, captures: {x: "(a)"}}`: "the input has no {{x}}",
	} {
		_, err := ParseScenario([]byte("tasks:\n  - name: t\n    match: x\n    turns:\n      - tools: [" + yaml + "]\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", yaml, err, want)
		}
	}
}
