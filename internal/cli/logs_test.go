package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// hostile is worker or gate output meant for the terminal rather than the
// reader: clear screen, an OSC 52 clipboard write, a window title, cursor
// moves and a line erase, a carriage return before a fake verdict, a bidi
// override, an 8-bit CSI, a bell.
const hostile = "oops\x1b[2J\x1b[H\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\x1b]0;zerg: DELIVERED\x1b\\" +
	"\x1b[1A\x1b[2K\rzerg: demo: DELIVERED \u202etxt.exe\u009b2J\a done"

// padded hides its text behind more escape bytes than the part of a line
// zerg logs shows: the text is seen only if escapes are removed before the
// line is cut.
const padded = "\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m" +
	"\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m" +
	"\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m" +
	"\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m" +
	"\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m\x1b[0m VISIBLE " + hostile

// controlIn returns the first character in s a terminal would act on, and
// where, or -1.
func controlIn(s string) (rune, int) {
	for i, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (0x80 <= r && r <= 0x9f) ||
			(0x202a <= r && r <= 0x202e) || (0x2066 <= r && r <= 0x2069) || (r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD")) {
			return r, i
		}
	}
	return 0, -1
}

func jsonLine(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// writeHostileAttempt records attempt 1 of task T1 as a worker and a gate
// that print escapes would leave it: the stream (text, tool input, a failed
// tool result, an API retry, the result), the verification output, the
// diff and a retry prompt quoting them.
func writeHostileAttempt(t *testing.T, f *fakeRun) {
	t.Helper()
	dir := f.paths.AttemptDir("T1", 1)
	var stream strings.Builder
	stream.WriteString(jsonLine(t, map[string]any{"type": "assistant", "message": map[string]any{"content": []any{
		map[string]any{"type": "text", "text": hostile},
		map[string]any{"type": "tool_use", "id": "t1", "name": "Bash" + "\x1b[8m", "input": map[string]any{"command": hostile}},
	}}}))
	stream.WriteString(jsonLine(t, map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": hostile},
	}}}))
	stream.WriteString(jsonLine(t, map[string]any{"type": "system", "subtype": "api_retry", "attempt": 1, "error_status": 529, "error": hostile}))
	// In JSON, ESC is written \u001b, shown as text, but C1 and bidi
	// characters are not escaped.
	stream.WriteString(jsonLine(t, map[string]any{"type": "assistant", "message": map[string]any{"content": []any{
		map[string]any{"type": "text", "text": padded},
		map[string]any{"type": "tool_use", "id": "t2", "name": "Write", "input": map[string]any{"content": strings.Repeat("\u202e\u0085", 80) + "VISIBLE"}},
	}}}))
	stream.WriteString(jsonLine(t, map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "t2", "is_error": true, "content": padded},
	}}}))
	stream.WriteString(jsonLine(t, map[string]any{"type": "result", "subtype": "error_during_execution", "is_error": true, "num_turns": 2, "result": padded}))
	writeFile(t, filepath.Join(dir, "stream.jsonl"), []byte(stream.String()))
	writeFile(t, filepath.Join(dir, "verify.log"), []byte("--- FAIL: TestX\n"+hostile+"\n"))
	writeFile(t, filepath.Join(dir, "diff.patch"), []byte("diff --git a/x.go b/x"+"\x1b[2J.go\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-old\n+"+hostile+"\n"))
	writeFile(t, filepath.Join(dir, "prompt.md"), []byte("Fix the task. The last attempt failed:\n"+hostile+"\n"))
}

// TestLogsPrintNoEscapes: zerg logs of an attempt whose records are full of
// terminal escapes prints none of them, and still prints the text.
func TestLogsPrintNoEscapes(t *testing.T) {
	f := newFakeRun(t, "demo", false)
	writeHostileAttempt(t, f)
	code, out, errs := runZerg(t, "logs", "demo", "T1", "--diff", "--prompt")
	if code != 0 {
		t.Fatalf("zerg logs: exit %d\n%s%s", code, out, errs)
	}
	if r, i := controlIn(out); i >= 0 {
		t.Fatalf("zerg logs printed %U at %d:\n%q", r, i, out)
	}
	for _, want := range []string{"-- worker", "says: oops", "Bash {", "✗ oops", "api retry 1", "(error: VISIBLE", "says: VISIBLE", `Write {"content":"VISIBLE"}`, "✗ VISIBLE", "-- verification output", "--- FAIL: TestX", "-- diff", "-- prompt", "done"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, errs = runZerg(t, "logs", "demo", "T1")
	if code != 0 {
		t.Fatalf("zerg logs: exit %d\n%s%s", code, out, errs)
	}
	if r, i := controlIn(out); i >= 0 || !strings.Contains(out, "-- changed: x") {
		t.Fatalf("zerg logs without --diff printed %U at %d, or no changed file:\n%q", r, i, out)
	}
}

// writeHostileRun records a failed run of demo whose reasons, task details
// and gate name and heads hold terminal escapes: level 1 merged (its head
// and gate have escapes), level 2 failed with T2 (a detail) and T3 (only a
// reason).
func writeHostileRun(t *testing.T, f *fakeRun) {
	t.Helper()
	graph := `{"feature": "demo", "tasks": [
	 {"id": "T1", "title": "t", "level": 1, "files": {"create": ["x.go"]}},
	 {"id": "T2", "title": "t", "level": 2, "dependencies": ["T1"], "files": {"create": ["y.go"]}},
	 {"id": "T3", "title": "t", "level": 2, "dependencies": ["T1"], "files": {"create": ["z.go"]}}]}`
	writeFile(t, f.paths.GraphSnapshot, []byte(graph))
	log, _, err := eventlog.Open(f.paths.Events)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	app := func(typ, task string, n int, data any) {
		t.Helper()
		if _, err := log.AppendData(typ, task, n, data); err != nil {
			t.Fatal(err)
		}
	}
	head := "\x1b[2J0123456789abc"
	app(runstate.EvLevelStarted, "", 0, runstate.LevelStarted{Level: 1, Base: f.base, Tasks: []string{"T1"}})
	app(runstate.EvAttemptStarted, "T1", 1, runstate.AttemptStarted{Level: 1, Base: f.base})
	app(runstate.EvAttemptFinished, "T1", 1, runstate.AttemptFinished{Class: "success", Commit: f.head})
	app(runstate.EvLevelMerged, "", 0, runstate.LevelMerged{Level: 1, Base: f.base, Head: head, Tasks: []string{"T1"}})
	app(runstate.EvGateFinished, "", 0, runstate.GateFinished{Level: 1, Name: "lint\x1b]0;x\a", Exit: 1, Head: head, Output: hostile})
	app(runstate.EvLevelStarted, "", 0, runstate.LevelStarted{Level: 2, Base: f.head, Tasks: []string{"T2", "T3"}})
	app(runstate.EvAttemptStarted, "T2", 1, runstate.AttemptStarted{Level: 2, Base: f.head})
	app(runstate.EvAttemptFinished, "T2", 1, runstate.AttemptFinished{Class: "task", Reason: "verification_failed", Detail: hostile})
	app(runstate.EvTaskFailed, "T2", 0, runstate.TaskFailed{Reason: "verification_failed", Detail: hostile})
	app(runstate.EvAttemptStarted, "T3", 1, runstate.AttemptStarted{Level: 2, Base: f.head})
	app(runstate.EvAttemptFinished, "T3", 1, runstate.AttemptFinished{Class: "task", Reason: hostile})
	app(runstate.EvTaskFailed, "T3", 0, runstate.TaskFailed{Reason: hostile})
	app(runstate.EvLevelFailed, "", 0, runstate.LevelFailed{Level: 2, Reason: hostile, Tasks: []string{"T2", "T3"}})
	app(runstate.EvRunFinished, "", 0, runstate.RunFinished{Reason: hostile})
}

// TestStatusPrintsNoEscapes: the run's reason, a level's reason and head, a
// task's detail or reason and a gate's name and head reach zerg status and
// the end-of-run report without escapes.
func TestStatusPrintsNoEscapes(t *testing.T) {
	f := newFakeRun(t, "demo", false)
	writeHostileRun(t, f)
	code, out, errs := runZerg(t, "status", "demo")
	if code != 0 && out == "" {
		t.Fatalf("zerg status: exit %d\n%s", code, errs)
	}
	if r, i := controlIn(out); i >= 0 {
		t.Fatalf("zerg status printed %U at %d:\n%q", r, i, out)
	}
	for _, want := range []string{"$0.0000  oops", "level 2 failed: oops", "gate lint on level 1 (0123456789)", "why: oops"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "$0.0000  oops"); n != 2 {
		t.Errorf("status shows %d task details, want T2's and T3's:\n%s", n, out)
	}

	v, _, err := run.Inspect(f.paths)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	newApp(&b, &b).printReport(v)
	out = b.String()
	if r, i := controlIn(out); i >= 0 {
		t.Fatalf("the report printed %U at %d:\n%q", r, i, out)
	}
	for _, want := range []string{"level 1: merged → 0123456789", "level 2: failed (oops", "T2 FAILED (level 2, 1 attempt(s)): oops", "T3 FAILED (level 2, 1 attempt(s)): oops", "why: oops"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// The report of a delivered run names the head in other words.
	v.State = runstate.RunDelivered
	b.Reset()
	newApp(&b, &b).printReport(v)
	if r, i := controlIn(b.String()); i >= 0 {
		t.Fatalf("the report of a delivered run printed %U at %d:\n%q", r, i, b.String())
	}
}
