package run

import (
	"bytes"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/runstate"
)

// nasty is gate and worker output that acts on a terminal: clear screen, an
// OSC 52 clipboard write, a title, cursor moves, a carriage return that
// would overwrite the line with a fake verdict, a bidi override.
const nasty = "FAIL\x1b[2J\x1b[H\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\x1b]0;zerg: DELIVERED\x1b\\\x1b[1A\x1b[2K" +
	"\rzerg: demo: DELIVERED\u202etxt.exe\u009b2J\n"

// TestProgressCleansWorkerText: gate output, retry and failure details and
// fatal details reach the terminal without a control character.
func TestProgressCleansWorkerText(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b)
	p.gate(config.Gate{Name: "tests", Required: true}, runstate.GateFinished{Exit: 1, Head: "0123456789abcdef", Output: nasty}, "demo")
	p.gate(config.Gate{Name: "lint"}, runstate.GateFinished{Exit: 2, Head: "0123456789abcdef", Output: nasty}, "demo")
	p.retrying("T1", 1, "verification failed", nasty)
	p.failedForGood("T1", runstate.TaskState{Attempts: 2}, nasty)
	p.fatal("T2", nasty)
	p.failedEarlier("T3", nasty)
	p.note("%s", nasty)
	out := b.String()
	for i, r := range out {
		if (r < 0x20 && r != '\n') || r == 0x7f || (0x80 <= r && r <= 0x9f) || r == '\u202e' {
			t.Fatalf("control character %U at %d in:\n%q", r, i, out)
		}
	}
	if !strings.Contains(out, "gate tests: FAILED (exit 1): FAIL") || !strings.Contains(out, "T2: fatal: FAIL") {
		t.Errorf("the text itself is missing:\n%s", out)
	}
	if n := strings.Count(out, "\n"); n < 7 {
		t.Errorf("%d lines, want at least 7", n)
	}
	// Escapes do not use up the part of the output shown: it is cut after
	// cleaning.
	b.Reset()
	p.gate(config.Gate{Name: "tests", Required: true}, runstate.GateFinished{Exit: 1, Head: "0123456789abcdef", Output: "assertion failed\n" + strings.Repeat("\x1b[0m", 100)}, "demo")
	if !strings.Contains(b.String(), "assertion failed") {
		t.Errorf("the gate's message was cut away by escapes: %q", b.String())
	}
}

// TestProjectionLineOfAResume: a resume's projection is of the tasks it
// still has to merge, and never says there are no earlier runs (the run
// itself is one).
func TestProjectionLineOfAResume(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b)
	pr := &runstate.Projection{Basis: "estimate", Tasks: []runstate.TaskProjection{
		{Task: "A", Range: runstate.Range{Low: 1, Expected: 2, High: 4}}, {Task: "B", Range: runstate.Range{Low: 1, Expected: 3, High: 6}}}}
	pr.Range = runstate.Range{Low: 2, Expected: 5, High: 10}
	p.projection(pr, func(id string) bool { return id == "A" }, 0.5, 0)
	out := b.String()
	if !strings.Contains(out, "projected cost: $3.00 expected (range $1.00–$6.00") || !strings.Contains(out, "for the 1 task(s) not merged yet, of $5.00 for all 2") ||
		strings.Contains(out, "no earlier runs") {
		t.Errorf("resume's projection:\n%s", out)
	}
}
