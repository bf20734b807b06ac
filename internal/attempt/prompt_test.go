package attempt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/contextpack"
	"github.com/zergrush/zerg/internal/spec"
)

// promptGraph: C depends on A and B; the spec has a section about each.
func promptGraph() *spec.Graph {
	return &spec.Graph{Tasks: []*spec.Task{
		{ID: "A", Title: "Names list", Files: spec.Files{Create: []string{"data/names.txt"}}},
		{ID: "B", Title: "Greeter", Files: spec.Files{Create: []string{"lib/greet.sh"}}},
		{ID: "C", Title: "Greet everyone", Dependencies: []string{"A", "B"},
			Description:  "Create bin/greet-all: greet every name in data/names.txt.",
			Files:        spec.Files{Create: []string{"bin/greet-all"}, Read: []string{"data/names.txt"}},
			Verification: &spec.Verification{Command: "sh bin/greet-all"}},
	}}
}

const promptSpec = "# Design\n\n## Names\nThe names file data/names.txt has one name per line.\n\n" +
	"## Greeter\nlib/greet.sh defines greet NAME.\n\n## Greet all\nbin/greet-all greets every name in the names file.\n\n" +
	"## Billing\nInvoices are sent monthly by the billing service.\n"

// streamWith writes a worker's stream ending in result.
func streamWith(t *testing.T, dir string, result map[string]any) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	lines := []string{`{"type":"system","subtype":"init","session_id":"s"}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"working"}]}}`}
	b, _ := json.Marshal(result)
	lines = append(lines, string(b))
	if err := os.WriteFile(filepath.Join(dir, "stream.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func result(subtype string, isError bool, text string) map[string]any {
	return map[string]any{"type": "result", "subtype": subtype, "is_error": isError, "result": text, "num_turns": 2}
}

func TestDependencySummaryIsTheNewestSuccessfulResult(t *testing.T) {
	att := t.TempDir()
	streamWith(t, filepath.Join(att, "A", "1"), result("success", false, "first try"))
	streamWith(t, filepath.Join(att, "A", "2"), result("success", false, "Wrote three names."))
	streamWith(t, filepath.Join(att, "A", "3"), result("error_max_turns", true, "ran out of turns"))
	os.MkdirAll(filepath.Join(att, "A", "4"), 0o700) // started, no stream yet
	s, ok := DependencySummary(att, "A")
	if !ok || s.Text != "Wrote three names." || s.Attempt != 2 {
		t.Errorf("summary %+v %v, want attempt 2's", s, ok)
	}
	if _, ok := DependencySummary(att, "B"); ok {
		t.Error("a task without records has a summary")
	}
	streamWith(t, filepath.Join(att, "B", "1"), result("success", true, "API Error: 529"))
	if _, ok := DependencySummary(att, "B"); ok {
		t.Error("an error result counts as a summary")
	}
}

func TestPromptCarriesThePack(t *testing.T) {
	g := promptGraph()
	specDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(specDir, "design.md"), []byte(promptSpec), 0o600); err != nil {
		t.Fatal(err)
	}
	att := filepath.Join(t.TempDir(), "attempts")
	streamWith(t, filepath.Join(att, "A", "1"), result("success", false, "Wrote three names to data/names.txt."))
	c := g.Task("C")
	in := Input{Feature: "greet", Graph: g, Task: c, Previous: "verification `sh bin/greet-all` failed (exit 1)",
		Context: LoadContext(ContextFiles{SpecDir: specDir, Attempts: att, Budget: 4000}, g, c)}
	prompt, pack := PromptPack(in)
	if !strings.HasPrefix(prompt, "Task C: Greet everyone\n\n") {
		t.Errorf("first line: %q", strings.SplitN(prompt, "\n", 2)[0])
	}
	for _, want := range []string{
		"## What to do\nCreate bin/greet-all",
		"- A (Names list): data/names.txt\n  Its worker's summary: Wrote three names to data/names.txt.\n",
		"- B (Greeter): lib/greet.sh\n",
		"### design.md › Design › Greet all\n",
		"## Previous attempt failed\n",
		"## Rules\n",
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, prompt)
		}
	}
	if strings.Contains(prompt, "Billing") {
		t.Errorf("an unrelated section is in the prompt:\n%s", prompt)
	}
	if pack.Rules.Missing == "" {
		t.Error("the pack does not say why it has no rules")
	}
	if !strings.Contains(prompt, pack.Text) {
		t.Error("the prompt does not hold the pack's text")
	}

	// Without a context the prompt still names the task and its
	// dependencies' files.
	bare := Prompt(Input{Feature: "greet", Graph: g, Task: c})
	if !strings.HasPrefix(bare, "Task C: Greet everyone\n") || !strings.Contains(bare, "- A (Names list): data/names.txt\n") {
		t.Errorf("bare prompt:\n%s", bare)
	}
}

func TestWritePromptRecordsThePack(t *testing.T) {
	g := promptGraph()
	specDir := t.TempDir()
	os.WriteFile(filepath.Join(specDir, "design.md"), []byte(promptSpec), 0o600)
	dir := t.TempDir()
	c := g.Task("C")
	key := "sk-ant-api03-secret-key-of-the-worker"
	in := Input{Feature: "greet", Graph: g, Task: c, Dir: dir, Previous: "the key " + key + " leaked",
		Worker:  claude.Spec{API: claude.APISettings{APIKey: claude.Secret(key)}},
		Context: LoadContext(ContextFiles{SpecDir: specDir, Budget: 4000}, g, c)}
	prompt, err := writePrompt(in)
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := os.ReadFile(filepath.Join(dir, "prompt.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(onDisk), key) || !strings.Contains(prompt, key) {
		t.Error("prompt.md must be redacted, the prompt itself not")
	}
	raw, err := os.ReadFile(Record(dir).Context())
	if err != nil {
		t.Fatal(err)
	}
	var rec contextpack.Pack
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Task != "C" || rec.Budget != 4000 || rec.Tokens != contextpack.Tokens(Pack(in).Text) || len(rec.Sections) != 4 {
		t.Errorf("context.json: %s", raw)
	}
	if fi, err := os.Stat(Record(dir).Context()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("context.json mode: %v %v", fi.Mode(), err)
	}
}
