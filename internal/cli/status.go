package cli

import (
	"context"
	"fmt"
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
		Short: "Show a run: levels, tasks, attempts, gates, cost, and whether it is alive",
		Long: `Show the state of a run, rebuilt from its event log and its task graph: every
task (pending and blocked ones too) with its status and attempts, each level, the
gates, what failed and why, the cost so far, and whether the coordinator is alive
(it is exactly as long as it holds the run's log). It only reads; it works while
the run is going and after it ended. --watch redraws until the run is no longer
running. FEATURE may be left out when the repository has one run.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := a.resolveRun(cmd.Context(), firstArg(args))
			if err != nil {
				return err
			}
			if watch {
				return a.watchStatus(cmd.Context(), t, interval, asJSON)
			}
			v, _, err := t.inspect()
			if err != nil {
				return err
			}
			if asJSON {
				return printViewJSON(a.stdout, v)
			}
			a.printStatus(v)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run as JSON (docs/json.md)")
	cmd.Flags().BoolVarP(&watch, "watch", "W", false, "redraw until the run is no longer running")
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "redraw interval for --watch")
	return cmd
}

func (a *app) watchStatus(ctx context.Context, t *runTarget, interval time.Duration, asJSON bool) error {
	for {
		v, _, err := t.inspect()
		if err != nil {
			return err
		}
		switch {
		case asJSON:
			if err := printViewJSON(a.stdout, v); err != nil {
				return err
			}
		case a.color:
			fmt.Fprint(a.stdout, "\x1b[H\x1b[2J")
			a.printStatus(v)
		default:
			a.printStatus(v)
		}
		// A dead coordinator ends the watch too: nothing will change.
		if v.State != run.RunRunning {
			return nil
		}
		if !a.color && !asJSON {
			fmt.Fprintln(a.stdout, "---")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

func firstArg(args []string) string {
	if len(args) > 0 {
		return args[0]
	}
	return ""
}

func shortID(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}
