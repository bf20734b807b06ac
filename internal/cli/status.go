package cli

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

func init() { register(newStatusCmd) }

func newStatusCmd(a *app) *cobra.Command {
	var asJSON, watch, plain bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "status [FEATURE]",
		Short: "Show a run: levels, tasks, attempts, gates, cost, and whether it is alive",
		Long: `Show the state of a run, rebuilt from its event log and its task graph: every
task (pending and blocked ones too) with its status and attempts, each level, the
gates, what failed and why, the cost so far, and whether the coordinator is alive
(it is exactly as long as it holds the run's log). It only reads; it works while
the run is going and after it ended. --watch follows the run until it is no
longer running; started before the run, it waits for the run to start. On a
terminal --watch is a live view (docs/tui.md): levels with progress bars and an
ETA, one row per running worker, failures with their diagnosis, the breaker,
backpressure and rate limits; l opens the selected task's log, s stops the run
(after y), q or Ctrl-C quits the watch and leaves the run going. --plain (or
ZERG_NO_TUI=1), --json or no terminal redraws plain text every --interval.
FEATURE may be left out when the repository has one run.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			if watch {
				if interval <= 0 {
					return usageErrorf("--interval %s: give a positive duration, like 1s", interval)
				}
				t, err := a.waitForRun(cmd.Context(), firstArg(args), interval)
				if err != nil || t == nil {
					return err // nil: interrupted while waiting (exit 3)
				}
				if tty := a.liveTerminal(plain); tty != nil && !asJSON {
					return a.watchLive(cmd.Context(), t, tty)
				}
				return a.watchStatus(cmd.Context(), t, interval, asJSON)
			}
			t, err := a.resolveRun(cmd.Context(), firstArg(args))
			if err != nil {
				return err
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
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "redraw interval for --watch (plain)")
	cmd.Flags().BoolVar(&plain, "plain", false, "with --watch on a terminal: redraw plain text instead of the live view (also ZERG_NO_TUI=1)")
	return cmd
}

// waitForRun is the run status --watch watches: the feature's, or the
// repository's only one. Started before the run (zerg status --watch in
// another terminal, then zerg rush), it waits for the run's log to appear,
// saying so once on stderr (stdout may be JSON), and returns nil if
// interrupted first.
func (a *app) waitForRun(ctx context.Context, feature string, interval time.Duration) (*runTarget, error) {
	cwd, err := a.getwd()
	if err != nil {
		return nil, err
	}
	root, err := zergRepoRoot(ctx, cwd)
	if err != nil {
		return nil, err
	}
	if feature != "" {
		// A name that is not a feature is refused now, not waited for.
		if _, err := run.PathsFor(ctx, root, feature); err != nil {
			return nil, err
		}
	}
	said := false
	for {
		runs := run.Runs(root)
		switch {
		case feature != "" && slices.Contains(runs, feature), feature == "" && len(runs) == 1:
			return a.resolveRun(ctx, feature)
		case feature == "" && len(runs) > 1:
			return a.resolveRun(ctx, feature) // several runs: name one
		}
		if !said {
			if feature == "" {
				fmt.Fprintln(a.stderr, "zerg: no run in this repository yet; waiting for one to start (zerg rush FEATURE); Ctrl-C stops waiting")
			} else {
				fmt.Fprintf(a.stderr, "zerg: no run of %s yet; waiting for it to start (zerg rush %s); Ctrl-C stops waiting\n", feature, feature)
			}
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(interval):
		}
	}
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
			fmt.Fprint(uncleaned(a.stdout), "\x1b[H\x1b[2J")
			a.printStatus(v)
		default:
			a.printStatus(v)
		}
		// A dead coordinator ends the watch too: nothing will change. A
		// log without events yet is a run starting (its coordinator holds
		// the log before it creates it).
		if v.State != runstate.RunRunning && (v.State != runstate.RunNotStarted || !v.Coordinator.Alive) {
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
