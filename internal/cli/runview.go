package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/textx"
)

// The human rendering of runstate.View: the report at the end of a rush and
// zerg status print the same view, so they cannot disagree. Reasons and
// details carry what workers and gates printed: they, and gate names and
// heads, all read back from the run's log, go through term.Clean before
// they are printed. Task ids and feature names need not: the graph's checks
// allow only letters, digits and "_.-" in them.

// printRefusedWrites lists every task's refused writes, one line each:
// what its worker meant to write and could not, so its work lacks it.
func (a *app) printRefusedWrites(v runstate.View, indent string) {
	for _, t := range v.Tasks {
		for _, r := range t.RefusedWrites {
			fmt.Fprintf(a.stdout, "%s%s: write refused: %s\n", indent, t.ID, textx.Truncate(textx.OneLine(term.Clean(r.String())), 200))
		}
	}
}

// printReport writes the end-of-run report.
func (a *app) printReport(v runstate.View) {
	w := a.stdout
	fmt.Fprintf(w, "\n%s: %s", v.Feature, v.Words())
	if v.Rehearsal {
		fmt.Fprint(w, " (rehearsal)")
	}
	fmt.Fprintf(w, " in %s", (time.Duration(v.DurationMS) * time.Millisecond).Round(100*time.Millisecond))
	if v.CostUSD > 0 {
		fmt.Fprintf(w, ", $%.4f", v.CostUSD)
	}
	if v.Subscription {
		fmt.Fprint(w, " (subscription: usage, not dollars)")
	}
	fmt.Fprintln(w)
	a.printLevels(v)
	a.printTaskProblems(v)
	a.printRefusedWrites(v, "  ")
	if v.State == runstate.RunDelivered {
		fmt.Fprintf(w, "  integration branch: %s at %s\n  next: review it (git log %s), then zerg merge %s --into <branch>\n",
			v.IntegrationBranch, gitx.ShortHash(term.Clean(v.Head)), v.IntegrationBranch, v.Feature)
		return
	}
	passed := "only the levels that passed"
	if v.Schedule == config.ScheduleDAG {
		passed = "only the tasks that passed the gates"
	}
	fmt.Fprintf(w, "  integration branch: %s at %s (%s)\n", v.IntegrationBranch, gitx.ShortHash(term.Clean(v.Head)), passed)
	if v.Reason != "" {
		fmt.Fprintf(w, "  why: %s\n", textx.Truncate(textx.OneLine(term.Clean(v.Reason)), 300))
	}
	fmt.Fprintf(w, "  next: %s\n", nextStep(v))
}

// nextStep is what a person does next with a run that did not deliver.
func nextStep(v runstate.View) string {
	switch v.State {
	case runstate.RunHalted, runstate.RunDead:
		return fmt.Sprintf("zerg rush %s --resume continues it", v.Feature)
	case runstate.RunRunning:
		return fmt.Sprintf("zerg stop %s stops it", v.Feature)
	}
	if l, g, ok := v.GateFailedCommittedLevel(); ok {
		// Nothing to retry: the tasks did their part, the merge of them
		// is what failed.
		return fmt.Sprintf("every task of level %d is committed: nothing to retry. zerg logs %s --gate %s shows the gate's output; fix the graph (a gate that needs what a later level adds can run with when: last_level) or the gate, then zerg rush %s --resume",
			l, v.Feature, g, v.Feature)
	}
	return fmt.Sprintf("zerg logs %s <task> for details; zerg retry %s <task>, then zerg rush %s --resume", v.Feature, v.Feature, v.Feature)
}

func (a *app) printLevels(v runstate.View) {
	if v.Schedule == config.ScheduleDAG {
		fmt.Fprintf(a.stdout, "  schedule dag: %s merged; a level is the graph's depth, merged once all its tasks are\n",
			pluralf(v.Batches, "%d batch", "%d batches"))
	}
	for _, l := range v.Levels {
		line := fmt.Sprintf("  level %d: %s", l.Level, l.State)
		if l.Head != "" {
			line += " → " + gitx.ShortHash(term.Clean(l.Head))
		}
		if l.Reason != "" {
			line += " (" + textx.OneLine(term.Clean(l.Reason)) + ")"
		}
		fmt.Fprintln(a.stdout, line)
	}
}

// printTaskProblems lists the tasks that are not merged.
func (a *app) printTaskProblems(v runstate.View) {
	var bad []runstate.TaskView
	for _, t := range v.Tasks {
		if t.Status != runstate.StatusMerged {
			bad = append(bad, t)
		}
	}
	fmt.Fprintf(a.stdout, "  tasks: %d of %d merged\n", len(v.Tasks)-len(bad), len(v.Tasks))
	for _, t := range bad {
		line := fmt.Sprintf("  %s %s (level %d, %d attempt(s))", t.ID, strings.ToUpper(t.StatusWord()), t.Level, t.Attempts)
		if t.Detail != "" {
			line += ": " + textx.Truncate(textx.OneLine(term.Clean(t.Detail)), 240)
		} else if t.Reason != "" {
			line += ": " + textx.OneLine(term.Clean(t.Reason))
		}
		fmt.Fprintln(a.stdout, line)
		if h := t.Diagnosis; h != nil {
			d := fmt.Sprintf("    diagnosis: %s (%.0f%% sure)", h.Pattern, 100*h.Confidence)
			if len(h.Evidence) > 0 {
				d += ": " + textx.Truncate(textx.OneLine(term.Clean(h.Evidence[0])), 160)
			}
			fmt.Fprintln(a.stdout, d+"; "+h.Fix)
		}
	}
}

// printStatus writes the live view of a run.
func (a *app) printStatus(v runstate.View) {
	w := a.stdout
	fmt.Fprintf(w, "%s: %s", a.paint(ansiBold, v.Feature), v.Words())
	if v.Rehearsal {
		fmt.Fprint(w, " (rehearsal)")
	}
	if v.Workers > 0 {
		fmt.Fprintf(w, " · %d workers", v.Workers)
	}
	if !v.StartedAt.IsZero() {
		fmt.Fprintf(w, " · started %s ago", time.Since(v.StartedAt).Round(time.Second))
	}
	if v.CostUSD > 0 {
		fmt.Fprintf(w, " · $%.4f", v.CostUSD)
	}
	fmt.Fprintln(w)
	switch {
	case v.Coordinator.Alive && v.Coordinator.PID > 0:
		fmt.Fprintf(w, "coordinator: alive (pid %d)\n", v.Coordinator.PID)
	case v.Coordinator.Alive:
		fmt.Fprintln(w, "coordinator: alive")
	case v.State == runstate.RunDead:
		fmt.Fprintf(w, "coordinator: dead (nothing holds the run's log); zerg stop %s reaps its workers, zerg rush %s --resume continues the run\n", v.Feature, v.Feature)
	}
	if v.Head != "" {
		fmt.Fprintf(w, "integration: %s at %s\n", v.IntegrationBranch, gitx.ShortHash(term.Clean(v.Head)))
	}
	if !driver.ModeCapabilities(v.Mode, v.Caps).StartsWorker {
		fmt.Fprintln(w, "workers: the Claude Code session's own subagents (tasks mode: zerg launches none)")
	} else if g := v.Governor; g != nil {
		line := fmt.Sprintf("workers: %d running, concurrency %d · breaker %s · zone %s", g.Running, g.Limit, g.Breaker, g.Zone)
		if !g.PausedUntil.IsZero() {
			line += fmt.Sprintf(" · launches paused for %s", time.Until(g.PausedUntil).Round(time.Second))
		}
		if !g.OpenUntil.IsZero() {
			line += fmt.Sprintf(" · probe in %s", time.Until(g.OpenUntil).Round(time.Second))
		}
		fmt.Fprintln(w, line)
	} else if v.BreakerOpens > 0 || v.RateLimitPauses > 0 {
		fmt.Fprintf(w, "resilience: breaker opened %d time(s), %d rate-limit pause(s)\n", v.BreakerOpens, v.RateLimitPauses)
	}
	if rw := v.ResetWait; rw != nil {
		line := fmt.Sprintf("waiting for the %s to reset (%s was refused): launching resumes by itself", strings.ReplaceAll(term.Clean(rw.Reason), "_", " "), term.Clean(rw.Task))
		if until, err := time.Parse(time.RFC3339, rw.Until); err == nil {
			line += fmt.Sprintf(" at %s", runstate.SeenAt(until, time.Now()))
			if left := time.Until(until); left > 0 {
				line += fmt.Sprintf(" (in %s)", left.Round(time.Second))
			}
		}
		fmt.Fprintf(w, "%s; zerg stop %s ends the wait (resume later with zerg rush %s --resume)\n", line, v.Feature, v.Feature)
	}
	if v.GraphChanged {
		fmt.Fprintf(w, "the task graph changed since the run recorded it; zerg rush %s --resume applies the change or says why it cannot\n", v.Feature)
	}
	// The status column is coloured: the table measures cells without
	// their colour codes, which tabwriter would count.
	tw := newTable(w)
	tw.row("LEVEL", "TASK", "STATUS", "ATTEMPTS", "COST", "DETAIL")
	for _, t := range v.Tasks {
		detail := ""
		switch {
		case t.Abandoned != nil:
			detail = fmt.Sprintf("attempt %d interrupted: its coordinator died (last seen %s); zerg rush %s --resume runs it again",
				t.Abandoned.Attempt, runstate.SeenAt(t.Abandoned.LastSeen, time.Now()), v.Feature)
		case t.Running != nil:
			detail = fmt.Sprintf("attempt %d running for %s", t.Running.Attempt, time.Since(t.Running.Started).Round(time.Second))
			if t.Running.Agent != "" {
				detail += " on agent " + t.Running.Agent
			}
			if t.Running.TakenBack != "" {
				detail += " (" + t.Running.TakenBack + ")"
			}
			if !t.Running.LastEvent.IsZero() {
				detail += fmt.Sprintf(", last event %s ago, %d turn(s), %d tokens", time.Since(t.Running.LastEvent).Round(time.Second), t.Running.Turns, t.Running.Tokens)
			}
		case t.Status != runstate.StatusMerged && t.Status != runstate.StatusCommitted:
			detail = t.Detail
			if detail == "" {
				detail = t.Reason
			}
		}
		status := t.StatusWord()
		switch {
		case t.Abandoned != nil:
			status = a.paint(ansiYel, status)
		case t.Status == runstate.StatusFailed:
			status = a.paint(ansiRed, status)
		case t.Status == runstate.StatusMerged:
			status = a.paint(ansiGreen, status)
		}
		tw.row(fmt.Sprint(t.Level), t.ID, status, fmt.Sprintf("%d (%d task, %d infra)", t.Attempts, t.TaskFailures, t.InfraFailures),
			fmt.Sprintf("$%.4f", t.CostUSD), textx.Truncate(textx.OneLine(term.Clean(detail)), 80))
	}
	_ = tw.flush() // the terminal's; a report cannot be told it went away
	a.printRefusedWrites(v, "")
	for _, l := range v.Levels {
		if l.State == "failed" {
			fmt.Fprintf(w, "level %d failed: %s\n", l.Level, textx.OneLine(term.Clean(l.Reason)))
		}
	}
	for _, g := range v.Gates {
		verdict := "passed"
		switch {
		case g.Exit != 0 && g.Superseded:
			verdict = fmt.Sprintf("failed (exit %d), since run again", g.Exit)
		case g.Exit != 0:
			verdict = fmt.Sprintf("FAILED (exit %d)", g.Exit)
			if !g.Required {
				verdict = fmt.Sprintf("failed (exit %d), not required", g.Exit)
			}
			if len(g.Named) > 0 {
				verdict += "; its output names files of " + strings.Join(g.Named, ", ")
			}
			if g.Log != "" {
				verdict += fmt.Sprintf("; zerg logs %s --gate %s shows it", v.Feature, term.Clean(g.Name))
			}
		}
		on := fmt.Sprintf("level %d", g.Level)
		if g.Batch > 0 {
			// The DAG schedule: a merge of some tasks, not of a level.
			on = fmt.Sprintf("batch %d [%s]", g.Batch, strings.Join(g.Tasks, " "))
		}
		fmt.Fprintf(w, "gate %s on %s (%s): %s\n", term.Clean(g.Name), term.Clean(on), gitx.ShortHash(term.Clean(g.Head)), verdict)
	}
	if v.State == runstate.RunNotDelivered && v.Reason != "" {
		fmt.Fprintf(w, "why: %s\n", textx.Truncate(textx.OneLine(term.Clean(v.Reason)), 200))
	}
}

// printViewJSON writes the view as the documented JSON (docs/json.md).
func printViewJSON(w io.Writer, v runstate.View) error { return printJSON(w, v) }
