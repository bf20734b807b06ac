package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Report is the outcome of a run, for the terminal and --json.
type Report struct {
	Feature     string        `json:"feature"`
	Integration string        `json:"integration_branch"`
	Base        string        `json:"base"`
	Head        string        `json:"head"`
	Delivered   bool          `json:"delivered"`
	Reason      string        `json:"reason,omitempty"`
	Levels      []LevelReport `json:"levels"`
	Tasks       []TaskReport  `json:"tasks"`
	CostUSD     float64       `json:"cost_usd"`
	Duration    time.Duration `json:"duration_ns"`
	Rehearsal   bool          `json:"rehearsal,omitempty"`
}

// LevelReport is one level's outcome.
type LevelReport struct {
	Level  int    `json:"level"`
	Status string `json:"status"` // merged | failed | not_run
	Head   string `json:"head,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// TaskReport is one task's outcome.
type TaskReport struct {
	ID       string  `json:"id"`
	Level    int     `json:"level"`
	Status   string  `json:"status"`
	Attempts int     `json:"attempts"`
	Reason   string  `json:"reason,omitempty"`
	Detail   string  `json:"detail,omitempty"`
	CostUSD  float64 `json:"cost_usd"`
}

// finish records the end of the run and builds the report.
func (c *Coordinator) finish(ctx context.Context, runErr error, took time.Duration) (*Report, error) {
	interrupted := runErr != nil && ctx.Err() != nil && !errors.Is(context.Cause(ctx), ErrFatal)
	if interrupted || errors.Is(runErr, context.Canceled) {
		_ = c.emit(EvRunStopped, "", 0, RunStopped{Reason: "interrupted"})
		c.printf("zerg: stopped; continue with zerg rush %s --resume", c.opts.Feature)
		return c.report(took), fmt.Errorf("%w: continue with zerg rush %s --resume", ErrInterrupted, c.opts.Feature)
	}
	if cause := context.Cause(ctx); runErr != nil && errors.Is(cause, ErrFatal) {
		runErr = cause
	}
	delivered := runErr == nil
	fin := RunFinished{Delivered: delivered, Head: c.state.Head}
	if runErr != nil {
		fin.Reason = runErr.Error()
	}
	if err := c.emit(EvRunFinished, "", 0, fin); err != nil {
		return nil, err
	}
	rep := c.report(took)
	if !delivered {
		return rep, runErr
	}
	return rep, nil
}

func (c *Coordinator) report(took time.Duration) *Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.state
	rep := &Report{Feature: c.opts.Feature, Integration: IntegrationBranch(c.opts.Feature), Head: st.Head,
		CostUSD: st.CostUSD, Duration: took, Rehearsal: c.opts.Rehearsal}
	if st.Started != nil {
		rep.Base = st.Started.Base
	}
	if st.Finished != nil {
		rep.Delivered, rep.Reason = st.Finished.Delivered, st.Finished.Reason
	}
	failed := 0
	if st.FailedLevel != nil {
		failed = st.FailedLevel.Level
	}
	for _, l := range c.levels() {
		lr := LevelReport{Level: l, Status: "not_run"}
		if m, ok := st.Merged[l]; ok {
			lr.Status, lr.Head = "merged", m.Head
		} else if l == failed {
			lr.Status, lr.Reason = "failed", st.FailedLevel.Reason
		}
		rep.Levels = append(rep.Levels, lr)
	}
	for _, t := range c.graph.Tasks {
		tr := TaskReport{ID: t.ID, Level: t.Level, Status: StatusPending}
		if ts := st.Tasks[t.ID]; ts != nil {
			tr.Status, tr.Attempts, tr.Reason, tr.Detail, tr.CostUSD = ts.Status, ts.Attempts, ts.Reason, ts.Detail, ts.CostUSD
			if tr.Status == StatusMerged || tr.Status == StatusCommitted && ts.Reason == "completed" {
				tr.Detail = ""
			}
		}
		// Tasks of levels after a failure never ran: blocked by it.
		if failed > 0 && t.Level > failed && tr.Status == StatusPending {
			tr.Status, tr.Reason = StatusBlocked, fmt.Sprintf("level %d failed", failed)
		}
		rep.Tasks = append(rep.Tasks, tr)
	}
	slices.SortStableFunc(rep.Tasks, func(a, b TaskReport) int { return a.Level - b.Level })
	return rep
}

// Print writes the report for a person.
func (r *Report) Print(w io.Writer) {
	verdict := "DELIVERED"
	if !r.Delivered {
		verdict = "NOT DELIVERED"
	}
	fmt.Fprintf(w, "\n%s: %s", r.Feature, verdict)
	if r.Rehearsal {
		fmt.Fprint(w, " (rehearsal)")
	}
	fmt.Fprintf(w, " in %s", r.Duration.Round(100*time.Millisecond))
	if r.CostUSD > 0 {
		fmt.Fprintf(w, ", $%.4f", r.CostUSD)
	}
	fmt.Fprintln(w)
	for _, l := range r.Levels {
		line := fmt.Sprintf("  level %d: %s", l.Level, l.Status)
		if l.Head != "" {
			line += " → " + short(l.Head)
		}
		if l.Reason != "" {
			line += " (" + l.Reason + ")"
		}
		fmt.Fprintln(w, line)
	}
	var bad []TaskReport
	for _, t := range r.Tasks {
		if t.Status != StatusMerged {
			bad = append(bad, t)
		}
	}
	merged := len(r.Tasks) - len(bad)
	fmt.Fprintf(w, "  tasks: %d of %d merged\n", merged, len(r.Tasks))
	for _, t := range bad {
		line := fmt.Sprintf("  %s %s (level %d, %d attempt(s))", t.ID, strings.ToUpper(t.Status), t.Level, t.Attempts)
		if t.Detail != "" {
			line += ": " + clip(oneLine(t.Detail), 240)
		} else if t.Reason != "" {
			line += ": " + t.Reason
		}
		fmt.Fprintln(w, line)
	}
	if r.Delivered {
		fmt.Fprintf(w, "  integration branch: %s at %s\n  next: review it (git log %s), then zerg merge %s --into <branch>\n",
			r.Integration, short(r.Head), r.Integration, r.Feature)
	} else {
		fmt.Fprintf(w, "  integration branch: %s at %s (only the levels that passed)\n", r.Integration, short(r.Head))
		if r.Reason != "" {
			fmt.Fprintf(w, "  why: %s\n", clip(oneLine(r.Reason), 300))
		}
		fmt.Fprintf(w, "  next: zerg logs <task> for details; zerg retry <task>, then zerg rush %s --resume\n", r.Feature)
	}
}
