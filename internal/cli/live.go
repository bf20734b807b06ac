package cli

import (
	"bytes"
	"io"
	"os"
	"sync"

	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/tui"
)

// The live view (internal/tui) is shown by zerg rush and zerg status
// --watch when a person is at a terminal: stdout and stdin are terminals,
// TERM is not dumb, and neither --plain nor ZERG_NO_TUI asks for lines.
// Anywhere else (a pipe, a file, CI, the tests) the output is the plain
// lines it always was. NO_COLOR keeps the view, without colour.

// liveTerminal is the terminal the live view draws on, or nil when the
// plain lines are wanted.
func (a *app) liveTerminal(plain bool) *os.File {
	if term.PlainWanted(plain, os.Getenv) || !stdinIsTerminal() {
		return nil
	}
	f, ok := terminalFile(a.stdout)
	if !ok {
		return nil
	}
	return f
}

// liveConfig is what the view of a run reads, for both commands.
func (a *app) liveConfig(mode tui.Mode, paths run.Paths) tui.Config {
	return tui.Config{Mode: mode, Poll: run.Poller(paths), Color: os.Getenv("NO_COLOR") == "",
		Log: func(task string) string { return a.taskLog(paths, task) }}
}

// taskLog is a task's attempts as zerg logs prints them, without colour,
// for the view's pager.
func (a *app) taskLog(paths run.Paths, task string) string {
	nums, err := paths.Attempts(task)
	if err != nil || len(nums) == 0 {
		return task + " has no attempts yet"
	}
	var b bytes.Buffer
	la := &app{stdout: &b, stderr: io.Discard, getwd: a.getwd}
	for _, n := range nums {
		la.printAttempt(paths.AttemptDir(task, n), task, n, false, false)
	}
	return b.String()
}

// liveLines is where a rush's progress lines go while it has a live view:
// the view shows the last few; before the view starts and once it ends
// (q, or the run's end) they go on to the terminal's stderr as plain lines.
type liveLines struct {
	mu      sync.Mutex
	w       io.Writer // forward here when not capturing
	capture bool
	partial []byte
	last    []string
}

const liveRecent = 6

func newLiveLines(w io.Writer) *liveLines { return &liveLines{w: w} }

func (l *liveLines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.capture {
		return l.w.Write(b)
	}
	l.partial = append(l.partial, b...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.last = append(l.last, string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	if n := len(l.last); n > liveRecent {
		l.last = append([]string(nil), l.last[n-liveRecent:]...)
	}
	return len(b), nil
}

// setCapture switches between keeping lines for the view and printing them.
func (l *liveLines) setCapture(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.capture = on
	if !on && len(l.partial) > 0 {
		_, _ = l.w.Write(l.partial)
		l.partial = nil
	}
}

// recent is the last lines kept.
func (l *liveLines) recent() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.last...)
}
