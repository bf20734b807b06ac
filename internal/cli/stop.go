package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/proc"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

func init() { register(newStopCmd) }

func newStopCmd(a *app) *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "stop [FEATURE]",
		Short: "Stop a running zerg rush: gracefully, then its whole process trees",
		Long: `Ask the run's coordinator to stop (SIGTERM): it stops its workers, keeps their
work on their attempt branches, records the stop and exits. If it has not exited
within --wait, it is killed, and so are the worker processes its log recorded
(only those: processes zerg did not start are never touched) and the containers
labelled as the run's (container mode). Continue the run later with
zerg rush FEATURE --resume.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := a.resolveRun(cmd.Context(), firstArg(args))
			if err != nil {
				return err
			}
			v, st, err := t.inspect()
			if err != nil {
				return err
			}
			var coord proc.ID
			if v.Coordinator.Alive {
				coord = run.CoordinatorProcess(v.Coordinator.PID)
				if coord.PID == 0 {
					// Alive (it holds the log) but not one zerg can name: its
					// workers are its own to stop.
					return &run.Error{Kind: run.Locked, Feature: t.feature, Path: t.paths.Events,
						Err: fmt.Errorf("the run of %s is held by a coordinator zerg cannot identify (its pid file is missing or names another program)", t.feature)}
				}
			}
			pid := coord.PID
			if pid > 0 {
				fmt.Fprintf(a.stdout, "stopping the coordinator of %s (pid %d)\n", t.feature, pid)
				// By its identity (PID and start time), so that the PID,
				// freed when it exits, is never signalled for another.
				proc.Terminate(proc.Process(coord), wait, func([]proc.ID) {
					fmt.Fprintf(a.stdout, "it did not stop within %s: killing it\n", wait)
				})
				if st, err = t.state(); err != nil {
					return err
				}
			} else if v.State == runstate.RunDead {
				fmt.Fprintf(a.stdout, "the coordinator of %s is dead (nothing holds the run's log)\n", t.feature)
			}
			// Whatever the coordinator could not clean up: the workers its log
			// recorded (only those), and what each mode finds by the run's
			// label (containers).
			var recorded []driver.Leftover
			for _, o := range st.OpenAttempts() {
				recorded = append(recorded, driver.Leftover{Marker: o.Marker, PIDs: o.PIDs, Workspace: o.Workspace})
			}
			killed, removed := driver.ReapRun(cmd.Context(), t.paths.RunDir, recorded)
			switch {
			case pid <= 0 && killed == 0 && removed == 0 && v.State != runstate.RunDead:
				fmt.Fprintf(a.stdout, "%s is not running\n", t.feature)
			case killed > 0:
				fmt.Fprintf(a.stdout, "killed %d leftover worker process(es)\n", killed)
			}
			if removed > 0 {
				fmt.Fprintf(a.stdout, "removed %d leftover container(s)\n", removed)
			}
			if pid > 0 || killed > 0 || removed > 0 || v.State == runstate.RunDead {
				fmt.Fprintf(a.stdout, "stopped; continue with %s\n", resumeCommand(st, t.feature))
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for a graceful stop before killing")
	return cmd
}
