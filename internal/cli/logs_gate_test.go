package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// TestLogsGate: zerg logs --gate prints the last run of a gate whole, from
// its log, line by line (not the event's excerpt), with the tasks its
// output names, and no escape; an unknown gate is refused naming the
// run's gates; the report's advice for a level whose gate failed with
// every task committed is not "zerg retry".
func TestLogsGate(t *testing.T) {
	f := newFakeRun(t, "demo", false)
	writeFile(t, f.paths.GraphSnapshot, []byte(`{"feature": "demo", "tasks": [
	 {"id": "T1", "title": "t", "level": 1, "files": {"create": ["src/x.py"]}}]}`))
	full := "FAILED src/x.py::test_x - assert 1 == 2\n" + hostile + "\n" + strings.Repeat("warning line\n", 2000) + "1 failed, 3 passed\n"
	rel := run.GateLogName(1, "tests")
	writeFile(t, filepath.Join(f.paths.RunDir, rel), []byte(full))
	log, _, err := eventlog.Open(f.paths.Events)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []struct {
		typ, task string
		n         int
		data      any
	}{
		{runstate.EvLevelStarted, "", 0, runstate.LevelStarted{Level: 1, Base: f.base, Tasks: []string{"T1"}}},
		{runstate.EvAttemptStarted, "T1", 1, runstate.AttemptStarted{Level: 1, Base: f.base}},
		{runstate.EvAttemptFinished, "T1", 1, runstate.AttemptFinished{Class: "success", Commit: f.head}},
		{runstate.EvGateFinished, "", 0, runstate.GateFinished{Level: 1, Name: "tests", Command: "pytest", Exit: 1, Required: true, Head: f.head,
			Output: "…1 failed, 3 passed\n", Log: rel, Named: []string{"T1"}}},
		{runstate.EvLevelFailed, "", 0, runstate.LevelFailed{Level: 1, Reason: "gate tests failed (exit 1); its output names files of T1", Tasks: []string{"T1"}}},
		{runstate.EvRunFinished, "", 0, runstate.RunFinished{Reason: "level 1: gate tests failed (exit 1)"}},
	} {
		if _, err := log.AppendData(e.typ, e.task, e.n, e.data); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()
	code, out, errs := runZerg(t, "logs", "demo", "--gate", "tests")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if r, i := controlIn(out); i >= 0 {
		t.Fatalf("printed %U at %d", r, i)
	}
	for _, want := range []string{"== gate tests on level 1", "FAILED (exit 1)", "its output names files of: T1", "-- output\nFAILED src/x.py::test_x - assert 1 == 2\n", "1 failed, 3 passed"} {
		if !strings.Contains(out, want) {
			t.Errorf("logs --gate lacks %q:\n%s", want, out[:min(len(out), 600)])
		}
	}
	if n := strings.Count(out, "warning line\n"); n != 2000 {
		t.Errorf("%d of the 2000 lines of the log printed", n)
	}
	if code, _, errs := runZerg(t, "logs", "demo", "--gate", "lint"); code != ExitUsage || !strings.Contains(errs, `no gate "lint" ran in the run of demo; its gates: tests`) {
		t.Errorf("unknown gate: exit %d %s", code, errs)
	}

	if rep := reportOf(t, f.paths); !strings.Contains(rep, "next: every task of level 1 is committed: nothing to retry. zerg logs demo --gate tests shows the gate's output; fix the graph") || strings.Contains(rep, "zerg retry") {
		t.Errorf("report's advice:\n%s", rep)
	}
}

// reportOf is the end-of-run report of the run at p, as it reads now.
func reportOf(t *testing.T, p run.Paths) string {
	t.Helper()
	v, _, err := run.Inspect(p)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	newApp(&b, &b).printReport(v)
	return b.String()
}

// TestLogsFollow: zerg logs -f follows the running attempt as its stream
// grows (a line written after it started is printed), then the attempt's
// refused writes and its end, and returns once the task committed.
func TestLogsFollow(t *testing.T) {
	f := newFakeRun(t, "demo", false)
	writeFile(t, f.paths.GraphSnapshot, []byte(`{"feature": "demo", "tasks": [
	 {"id": "T1", "title": "t", "level": 1, "files": {"create": ["x.go"]}}]}`))
	// The coordinator: it holds the log while the run goes on.
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
	app(runstate.EvLevelStarted, "", 0, runstate.LevelStarted{Level: 1, Base: f.base, Tasks: []string{"T1"}})
	app(runstate.EvAttemptStarted, "T1", 1, runstate.AttemptStarted{Level: 1, Base: f.base})
	dir := f.paths.AttemptDir("T1", 1)
	say := func(text string) string {
		return jsonLine(t, map[string]any{"type": "assistant", "message": map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}})
	}
	writeFile(t, filepath.Join(dir, "stream.jsonl"), []byte(say("first turn")))

	var out syncBuffer
	done := make(chan int)
	go func() { done <- Run(context.Background(), []string{"logs", "-f", "demo", "T1"}, &out, &out) }()
	for !strings.Contains(out.String(), "says: first turn") {
		select {
		case code := <-done:
			t.Fatalf("logs -f returned (exit %d) before the attempt ended:\n%s", code, out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	s, err := os.OpenFile(filepath.Join(dir, "stream.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.WriteString(say("second turn, written while followed"))
	s.Close()
	writeFile(t, attempt.Record(dir).Refused(), []byte(`[{"path":"test/x_test.go","tool":"Edit","why":"not owned"}]`))
	app(runstate.EvAttemptFinished, "T1", 1, runstate.AttemptFinished{Class: "success", Commit: f.head})
	if code := <-done; code != 0 {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	got := out.String()
	for _, want := range []string{"following, Ctrl-C stops", "says: first turn", "says: second turn, written while followed", "write refused: test/x_test.go, not owned (Edit)", "T1: committed after 1 attempt(s)"} {
		if !strings.Contains(got, want) {
			t.Errorf("logs -f lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "first turn") > strings.Index(got, "second turn") {
		t.Errorf("out of order:\n%s", got)
	}
}
