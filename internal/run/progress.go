package run

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/textx"
)

// progress is the coordinator's narrative for a person watching the run:
// one line per notable step. The wording lives here, not in the
// orchestration code. Much of what it prints comes from workers and gates
// (their output, error details, reasons): every line goes through
// term.Clean, so none of it can move the cursor, clear the screen or
// overwrite zerg's own lines.
type progress struct {
	mu sync.Mutex
	w  io.Writer
}

func newProgress(w io.Writer) *progress {
	if w == nil {
		w = io.Discard
	}
	return &progress{w: w}
}

func (p *progress) printf(format string, a ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, term.Clean(fmt.Sprintf(format, a...)))
}

func (p *progress) start(feature string, tasks, levels, workers int, schedule string, rehearsal bool, credential string) {
	mode := ""
	if schedule == config.ScheduleDAG {
		// Levels are only the graph's depth: tasks start as their
		// dependencies merge.
		mode = ", schedule dag"
	}
	if rehearsal {
		mode += " (rehearsal: scripted model)"
	} else if credential != "" {
		mode += ", " + credential
	}
	p.printf("zerg: %s: %d tasks in %d levels, %d workers%s → %s", feature, tasks, levels, workers, mode, IntegrationBranch(feature))
}

func (p *progress) note(format string, a ...any) { p.printf("zerg: "+format, a...) }

func (p *progress) levelStart(level, n int, base string) {
	p.printf("level %d: %d task(s) to run from %s", level, n, gitx.ShortHash(base))
}

func (p *progress) kept(task, commit string) {
	p.printf("  %s: already committed (%s), kept", task, gitx.ShortHash(commit))
}

func (p *progress) failedEarlier(task, reason string) {
	p.printf("  %s: failed earlier (%s); zerg retry %s runs it again", task, reason, task)
}

func (p *progress) attemptStart(task string, n int, probe bool) {
	suffix := ""
	if probe {
		suffix = " (probe)"
	}
	p.printf("  %s: attempt %d started%s", task, n, suffix)
}

func (p *progress) committed(task, commit string, took time.Duration, usd float64) {
	cost := ""
	if usd > 0 {
		cost = fmt.Sprintf(", $%.4f", usd)
	}
	p.printf("  %s: committed %s in %s%s", task, gitx.ShortHash(commit), took.Round(100*time.Millisecond), cost)
}

func (p *progress) fatal(task, detail string) { p.printf("  %s: fatal: %s", task, detail) }

func (p *progress) failedForGood(task string, t runstate.TaskState, detail string) {
	p.printf("  %s: failed for good after %d attempt(s) (%d task, %d infrastructure failures): %s",
		task, t.Attempts, t.TaskFailures, t.InfraFailures, textx.Clip(textx.OneLine(term.Clean(detail)), 300))
}

func (p *progress) retrying(task string, n int, reason, detail string) {
	p.printf("  %s: attempt %d failed (%s), retrying: %s", task, n, reason, textx.Clip(textx.OneLine(term.Clean(detail)), 200))
}

func (p *progress) infraWait(task, reason string, wait time.Duration) {
	p.printf("  %s: infrastructure failure (%s), retrying in %s (does not count against retries)", task, reason, wait.Round(time.Millisecond))
}

func (p *progress) gate(g config.Gate, ev runstate.GateFinished, feature string) {
	// Clean before cutting, so the 300 characters shown are text.
	out := term.Clean(ev.Output)
	more := ""
	if len(ev.Named) > 0 {
		more += "; its output names files of " + strings.Join(ev.Named, ", ")
	}
	if ev.Log != "" {
		more += fmt.Sprintf("; all of it: zerg logs %s --gate %s", feature, g.Name)
	}
	switch {
	case ev.Exit == 0:
		p.printf("  gate %s: passed on %s", g.Name, gitx.ShortHash(ev.Head))
	case !g.Required:
		p.printf("  gate %s: failed (exit %d), not required: %s%s", g.Name, ev.Exit, textx.Clip(textx.OneLine(tail(out, 300)), 300), more)
	default:
		p.printf("  gate %s: FAILED (exit %d): %s%s", g.Name, ev.Exit, textx.Clip(textx.OneLine(tail(out, 300)), 300), more)
	}
}

func (p *progress) merged(level, n int, head string) {
	p.printf("level %d: merged %d task(s) → %s", level, n, gitx.ShortHash(head))
}

func (p *progress) stopped(feature string) {
	p.printf("zerg: %s stopped; zerg rush %s --resume continues it", feature, feature)
}
