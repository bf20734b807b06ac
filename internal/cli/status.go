package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/run"
)

func init() { register(newStatusCmd) }

func newStatusCmd(a *app) *cobra.Command {
	var asJSON, watch bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "status [FEATURE]",
		Short: "Show a run: levels, tasks, attempts, cost",
		Long: `Show the state of a run, rebuilt from its event log: each level, each task's
status and attempts, what failed and why, and the cost so far. It only reads; it
works while the run is going and after it ended. --watch redraws until the run ends.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			feature := ""
			if len(args) == 1 {
				feature = args[0]
			}
			t, err := a.resolveRun(cmd.Context(), feature)
			if err != nil {
				return err
			}
			if !watch {
				st, err := t.state()
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(a.stdout, statusJSON(t, st))
				}
				a.printStatus(t, st)
				return nil
			}
			return a.watchStatus(cmd.Context(), t, interval)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the state as JSON")
	cmd.Flags().BoolVarP(&watch, "watch", "W", false, "redraw until the run ends")
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "redraw interval for --watch")
	return cmd
}

func (a *app) watchStatus(ctx context.Context, t *runTarget, interval time.Duration) error {
	for {
		st, err := t.state()
		if err != nil {
			return err
		}
		if a.color {
			fmt.Fprint(a.stdout, "\x1b[H\x1b[2J")
		}
		a.printStatus(t, st)
		if st.Finished != nil || st.Stopped != nil {
			return nil
		}
		if !a.color {
			fmt.Fprintln(a.stdout, "---")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

func runPhase(st *run.State) string {
	switch {
	case st.Finished != nil && st.Finished.Delivered:
		return "delivered"
	case st.Finished != nil:
		return "not delivered"
	case st.Stopped != nil:
		return "stopped (zerg rush --resume continues it)"
	case st.Started == nil:
		return "not started"
	default:
		return "running"
	}
}

func (a *app) printStatus(t *runTarget, st *run.State) {
	w := a.stdout
	fmt.Fprintf(w, "%s: %s", a.paint(ansiBold, t.feature), runPhase(st))
	if st.Started != nil {
		fmt.Fprintf(w, " · %d workers · started %s ago", st.Started.Workers, time.Since(st.StartedAt).Round(time.Second))
	}
	if st.CostUSD > 0 {
		fmt.Fprintf(w, " · $%.4f", st.CostUSD)
	}
	fmt.Fprintln(w)
	if st.Started != nil {
		fmt.Fprintf(w, "integration: %s at %s (%d level(s) merged)\n", st.Started.Integration, shortID(st.Head), len(st.Merged))
	}
	// The live view (heartbeats, governor) exists only while the coordinator runs.
	var live *run.Live
	if coordinatorPID(t.paths.Coordinator) > 0 {
		live, _ = run.ReadLive(t.paths.RunDir)
	}
	if live != nil {
		g := live.Governor
		line := fmt.Sprintf("workers: %d running, concurrency %d · breaker %s · zone %s", g.Running, g.Limit, g.Breaker, g.Zone)
		if !g.PausedUntil.IsZero() {
			line += fmt.Sprintf(" · launches paused for %s", time.Until(g.PausedUntil).Round(time.Second))
		}
		if !g.OpenUntil.IsZero() {
			line += fmt.Sprintf(" · probe in %s", time.Until(g.OpenUntil).Round(time.Second))
		}
		fmt.Fprintln(w, line)
	} else if st.BreakerOpens > 0 || st.Pauses > 0 {
		fmt.Fprintf(w, "resilience: breaker opened %d time(s), %d rate-limit pause(s)\n", st.BreakerOpens, st.Pauses)
	}
	tasks := make([]*run.TaskState, 0, len(st.Tasks))
	for _, id := range st.Order {
		tasks = append(tasks, st.Tasks[id])
	}
	slices.SortStableFunc(tasks, func(x, y *run.TaskState) int {
		if x.Level != y.Level {
			return x.Level - y.Level
		}
		return strings.Compare(x.ID, y.ID)
	})
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LEVEL\tTASK\tSTATUS\tATTEMPTS\tCOST\tDETAIL")
	for _, ts := range tasks {
		detail := ""
		switch {
		case ts.Open != nil:
			detail = fmt.Sprintf("attempt %d running for %s", ts.Open.Number, time.Since(ts.Open.Started).Round(time.Second))
			if live != nil {
				if la, ok := live.Running[ts.ID]; ok && !la.LastEvent.IsZero() {
					detail += fmt.Sprintf(", last event %s ago, %d turn(s), %d tokens", time.Since(la.LastEvent).Round(time.Second), la.Turns, la.Tokens)
				}
			}
		case ts.Status != run.StatusMerged && ts.Status != run.StatusCommitted:
			detail = ts.Detail
		}
		status := ts.Status
		switch status {
		case run.StatusFailed:
			status = a.paint(ansiRed, status)
		case run.StatusMerged:
			status = a.paint(ansiGreen, status)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d (%d task, %d infra)\t$%.4f\t%s\n", ts.Level, ts.ID, status, ts.Attempts,
			ts.TaskFailures, ts.InfraFailures, ts.CostUSD, truncate(oneLine(detail), 80))
	}
	tw.Flush()
	if st.FailedLevel != nil {
		fmt.Fprintf(w, "level %d failed: %s\n", st.FailedLevel.Level, st.FailedLevel.Reason)
	}
	if st.Finished != nil && !st.Finished.Delivered && st.Finished.Reason != "" {
		fmt.Fprintf(w, "why: %s\n", truncate(oneLine(st.Finished.Reason), 200))
	}
}

func statusJSON(t *runTarget, st *run.State) any {
	tasks := make([]*run.TaskState, 0, len(st.Tasks))
	for _, id := range st.Order {
		tasks = append(tasks, st.Tasks[id])
	}
	levels := st.MergedLevels()
	out := map[string]any{
		"feature": t.feature, "phase": strings.SplitN(runPhase(st), " (", 2)[0], "head": st.Head,
		"merged_levels": nonNil(levels), "tasks": tasks, "cost_usd": st.CostUSD, "gates": nonNil(st.Gates),
	}
	if st.Started != nil {
		out["integration_branch"] = st.Started.Integration
		out["base"] = st.Started.Base
		out["workers"] = st.Started.Workers
	}
	if st.FailedLevel != nil {
		out["failed_level"] = st.FailedLevel
	}
	return out
}

func shortID(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}
