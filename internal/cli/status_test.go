package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// statusFixture is a run of auth whose coordinator died: T1 merged (level
// 1), T2 failed for good and T3 in the middle of attempt 1 (level 2), T4
// pending (level 3). Nothing holds the log.
func statusFixture(t *testing.T) *fakeRun {
	t.Helper()
	f := newFakeRun(t, "auth", false)
	graph := []byte(`{"feature": "auth", "tasks": [
		{"id": "T1", "title": "one", "level": 1, "files": {"create": ["a.txt"]}, "verification": {"command": "true"}},
		{"id": "T2", "title": "two", "level": 2, "dependencies": ["T1"], "files": {"create": ["b.txt"]}, "verification": {"command": "true"}},
		{"id": "T3-longer-name", "title": "three", "level": 2, "dependencies": ["T1"], "files": {"create": ["c.txt"]}, "verification": {"command": "true"}},
		{"id": "T4", "title": "four", "level": 3, "dependencies": ["T2"], "files": {"create": ["d.txt"]}, "verification": {"command": "true"}}]}`)
	writeFile(t, f.paths.GraphSnapshot, graph)
	log, _, err := eventlog.Open(f.paths.Events)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	add := func(typ, task string, n int, data any) {
		t.Helper()
		if _, err := log.AppendData(typ, task, n, data); err != nil {
			t.Fatalf("%s %s: %v", typ, task, err)
		}
	}
	add(runstate.EvLevelStarted, "", 0, runstate.LevelStarted{Level: 1, Base: f.base, Tasks: []string{"T1"}})
	add(runstate.EvAttemptStarted, "T1", 1, runstate.AttemptStarted{Level: 1, Base: f.base})
	add(runstate.EvAttemptFinished, "T1", 1, runstate.AttemptFinished{Class: outcome.Success, Reason: "ok", Commit: f.head})
	add(runstate.EvLevelMerged, "", 0, runstate.LevelMerged{Level: 1, Base: f.base, Head: f.head, Tasks: []string{"T1"}})
	add(runstate.EvLevelStarted, "", 0, runstate.LevelStarted{Level: 2, Base: f.head, Tasks: []string{"T2", "T3-longer-name"}})
	add(runstate.EvAttemptStarted, "T2", 1, runstate.AttemptStarted{Level: 2, Base: f.head})
	add(runstate.EvAttemptFinished, "T2", 1, runstate.AttemptFinished{Class: outcome.Task, Reason: "verification_failed", Detail: "exit 1"})
	add(runstate.EvTaskFailed, "T2", 1, nil)
	add(runstate.EvAttemptStarted, "T3-longer-name", 1, runstate.AttemptStarted{Level: 2, Base: f.head})
	return f
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] == ';' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			i = j // the final byte
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// tableLines are the lines of status's task table: its header and a line
// per task.
func tableLines(t *testing.T, out string) []string {
	t.Helper()
	var lines []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(stripANSI(l), "LEVEL") {
			in = true
		}
		if in {
			if !strings.HasPrefix(stripANSI(l), "LEVEL") && (l == "" || !strings.ContainsAny(stripANSI(l)[:1], "0123456789")) {
				break
			}
			lines = append(lines, l)
		}
	}
	if len(lines) != 5 {
		t.Fatalf("no task table of 4 tasks in:\n%s", out)
	}
	return lines
}

// assertAligned: in every row, a cell starts where the header's STATUS,
// ATTEMPTS and COST start, as a terminal shows them.
func assertAligned(t *testing.T, what string, lines []string) {
	t.Helper()
	header := []rune(stripANSI(lines[0]))
	for _, name := range []string{"STATUS", "ATTEMPTS", "COST"} {
		col := strings.Index(string(header), name) // ASCII up to there
		for _, l := range lines[1:] {
			row := []rune(stripANSI(l))
			if col >= len(row) || row[col] == ' ' || row[col-1] != ' ' {
				t.Errorf("%s: no cell starts under %s (column %d):\n%s", what, name, col, stripANSI(strings.Join(lines, "\n")))
				break
			}
		}
	}
}

// TestStatusColumnsInColour: coloured status cells (failed red, merged
// green) do not push their rows out of line: with colour on, the table is
// the one printed without colour, codes aside.
func TestStatusColumnsInColour(t *testing.T) {
	statusFixture(t)
	v, _, err := run.Inspect(mustPaths(t, "auth"))
	if err != nil {
		t.Fatal(err)
	}
	var plain, colour bytes.Buffer
	(&app{stdout: &plain, stderr: io.Discard, color: false}).printStatus(v)
	(&app{stdout: &colour, stderr: io.Discard, color: true}).printStatus(v)
	if !strings.Contains(colour.String(), ansiRed+"failed"+ansiReset) || !strings.Contains(colour.String(), ansiGreen+"merged"+ansiReset) {
		t.Fatalf("no colour in:\n%q", colour.String())
	}
	assertAligned(t, "colour off", tableLines(t, plain.String()))
	assertAligned(t, "colour on", tableLines(t, colour.String()))
	// "started 3s ago" may tick between the two: compare the tables.
	if p, c := strings.Join(tableLines(t, plain.String()), "\n"), stripANSI(strings.Join(tableLines(t, colour.String()), "\n")); p != c {
		t.Errorf("the coloured table, codes removed, differs from the plain one:\n%s\n---\n%s", c, p)
	}
}

// TestStatusOnATerminal: zerg status writing to a terminal (a pseudo-
// terminal here) colours its status cells, and they line up; NO_COLOR
// turns the colour off.
func TestStatusOnATerminal(t *testing.T) {
	statusFixture(t)
	for _, noColor := range []string{"", "1"} {
		t.Setenv("NO_COLOR", noColor)
		t.Setenv("TERM", "xterm")
		out := runOnTerminal(t, "status", "auth")
		if hasColour := strings.Contains(out, ansiRed+"failed"); hasColour != (noColor == "") {
			t.Fatalf("NO_COLOR=%q: colour %v in:\n%q", noColor, hasColour, out)
		}
		assertAligned(t, fmt.Sprintf("terminal, NO_COLOR=%q", noColor), tableLines(t, out))
	}
}

func mustPaths(t *testing.T, feature string) run.Paths {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	p, err := run.PathsFor(context.Background(), wd, feature)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runOnTerminal runs zerg with stdout on a new pseudo-terminal and returns
// what it printed there (the terminal's \r\n made \n again).
func runOnTerminal(t *testing.T, args ...string) string {
	t.Helper()
	master, slave := openPTY(t)
	read := make(chan string)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 4096)
		for {
			k, err := master.Read(buf)
			b.Write(buf[:k])
			if err != nil {
				break
			}
		}
		read <- b.String()
	}()
	var errb bytes.Buffer
	code := Run(context.Background(), args, slave, &errb)
	slave.Close() // the reader gets EIO once the terminal's last user is gone
	var out string
	select {
	case out = <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal did not close")
	}
	if code != ExitOK {
		t.Fatalf("zerg %v: exit %d: %s", args, code, errb.String())
	}
	return strings.ReplaceAll(out, "\r\n", "\n")
}

// TestDeadCoordinatorAttemptIsInterrupted: an attempt the log leaves open
// while nothing holds the log is shown as interrupted with the time its run
// was last seen alive, not as running for an ever longer time; while a
// coordinator holds the log, it is running.
func TestDeadCoordinatorAttemptIsInterrupted(t *testing.T) {
	f := statusFixture(t)
	// The heartbeat file the dead coordinator left: its last beat is the
	// last moment it was known alive.
	beat := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	writeFile(t, f.paths.LiveFile(), []byte(fmt.Sprintf(`{"written": %q, "pid": 1, "governor": {}, "running": {}}`, beat.Format(time.RFC3339))))

	_, out1, _ := runZerg(t, "status", "auth")
	time.Sleep(1100 * time.Millisecond)
	code, out2, errOut := runZerg(t, "status", "auth")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	row := ""
	for _, l := range strings.Split(out2, "\n") {
		if strings.Contains(l, "T3-longer-name") {
			row = l
		}
	}
	if !strings.Contains(row, "interrupted") || strings.Contains(row, "running") ||
		!strings.Contains(row, "attempt 1 interrupted: its coordinator died (last seen "+beat.Local().Format(time.TimeOnly)+")") {
		t.Errorf("the open attempt of a dead run:\n%s", out2)
	}
	if t1, t2 := strings.Join(tableLines(t, out1), "\n"), strings.Join(tableLines(t, out2), "\n"); t1 != t2 {
		t.Errorf("a dead run's table changed over a second:\n%s\n---\n%s", t1, t2)
	}

	_, js, _ := runZerg(t, "status", "--json", "auth")
	var v runstate.View
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatal(err)
	}
	for _, tv := range v.Tasks {
		if tv.ID != "T3-longer-name" {
			continue
		}
		if tv.Running != nil || tv.Abandoned == nil || tv.Abandoned.Attempt != 1 || !tv.Abandoned.LastSeen.Equal(beat) {
			t.Errorf("JSON of the open attempt: running %+v, abandoned %+v; want abandoned, last seen %s", tv.Running, tv.Abandoned, beat)
		}
	}
	checkJSONRules(t, "status --json of a dead run", []byte(js))

	// Held by a coordinator, the same attempt is running.
	held, _, err := eventlog.Open(f.paths.Events)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, out, _ := runZerg(t, "status", "auth")
	if !strings.Contains(out, "attempt 1 running for") || strings.Contains(out, "interrupted") {
		t.Errorf("the attempt of a live run:\n%s", out)
	}
}

// syncBuffer is a bytes.Buffer a command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// eventually waits for cond, failing after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestWatchWaitsForTheRun: status --watch started before the run says once
// that it waits, shows the run when its log appears and ends with it (exit
// 0); interrupted while it waits, it exits 3. Either way, with or without
// the feature named.
func TestWatchWaitsForTheRun(t *testing.T) {
	for _, args := range [][]string{{"status", "--watch", "--interval", "20ms", "auth"}, {"status", "--watch", "--interval", "20ms"}} {
		f := newFakeRun(t, "auth", false)
		if err := os.RemoveAll(f.paths.RunDir); err != nil { // no run yet
			t.Fatal(err)
		}
		var out, errOut syncBuffer
		code := make(chan int, 1)
		go func() { code <- Run(context.Background(), args, &out, &errOut) }()
		eventually(t, "the waiting line", func() bool { return strings.Contains(errOut.String(), "waiting for") })
		time.Sleep(100 * time.Millisecond) // a few more polls: still one line
		if n := strings.Count(errOut.String(), "\n"); n != 1 || out.String() != "" {
			t.Fatalf("%v: while waiting: stdout %q, stderr %q; want one line on stderr", args, out.String(), errOut.String())
		}

		// The rush starts: its coordinator holds the log, then writes to it.
		log, _, err := eventlog.Open(f.paths.Events)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := log.AppendData(runstate.EvRunStarted, "", 0, runstate.RunStarted{Feature: "auth", Base: f.base, Integration: run.IntegrationBranch("auth"), Workers: 3}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the running run", func() bool { return strings.Contains(out.String(), "auth: running · 3 workers") })
		if _, err := log.AppendData(runstate.EvRunFinished, "", 0, runstate.RunFinished{Delivered: true, Head: f.head}); err != nil {
			t.Fatal(err)
		}
		log.Close()
		select {
		case c := <-code:
			if c != ExitOK || !strings.Contains(out.String(), "auth: DELIVERED") {
				t.Errorf("%v: exit %d, stdout:\n%s", args, c, out.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: the watch did not end with the run:\n%s", args, out.String())
		}
	}

	// Interrupted while waiting: exit 3, as an interrupted watch.
	newFakeRun(t, "other", false)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	code := make(chan int, 1)
	go func() { code <- Run(ctx, []string{"status", "--watch", "--interval", "20ms", "auth"}, &out, &errOut) }()
	eventually(t, "the waiting line", func() bool { return strings.Contains(errOut.String(), "no run of auth yet") })
	cancel()
	if c := <-code; c != ExitInterrupted || out.String() != "" || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("interrupted: exit %d, stdout %q, stderr %q", c, out.String(), errOut.String())
	}
	// Without --watch there is nothing to wait for: exit 2 as before.
	if c, _, errs := runZerg(t, "status", "auth"); c != ExitUsage || !strings.Contains(errs, "no run of auth") {
		t.Errorf("status of no run: exit %d %q", c, errs)
	}
}

// TestStatusShowsTheResetWait: a run waiting for a usage limit's reset
// says so, with when launching resumes and how to end the wait.
func TestStatusShowsTheResetWait(t *testing.T) {
	until := time.Now().Add(20 * time.Second).Truncate(time.Second)
	v := runstate.View{Feature: "demo", State: runstate.RunRunning, ResetWait: &runstate.ResetWait{Task: "L1-docs", Reason: "usage_limit",
		Reset: until.Add(-time.Second).UTC().Format(time.RFC3339), Until: until.UTC().Format(time.RFC3339)}}
	var out bytes.Buffer
	(&app{stdout: &out, stderr: io.Discard}).printStatus(v)
	want := "waiting for the usage limit to reset (L1-docs was refused): launching resumes by itself at " + until.Local().Format(time.TimeOnly)
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "zerg stop demo ends the wait") {
		t.Errorf("status lacks %q:\n%s", want, out.String())
	}
	v.ResetWait = nil
	out.Reset()
	(&app{stdout: &out, stderr: io.Discard}).printStatus(v)
	if strings.Contains(out.String(), "waiting for") {
		t.Errorf("status shows a wait the view does not have:\n%s", out.String())
	}
}
