package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

func init() { register(newRetryCmd) }

func newRetryCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "retry [FEATURE] TASK...",
		Short: "Requeue failed tasks with a fresh retry budget",
		Long: `Requeue tasks that failed for good (or were blocked, cancelled or committed
without being merged), with a fresh retry budget, so that zerg rush FEATURE
--resume runs them again. Only a stopped run can be changed: the running
coordinator is the only writer of its log. FEATURE may be left out when the
repository has one run.`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			t, tasks, err := a.resolveTaskArgs(cmd.Context(), args)
			if err != nil {
				return err
			}
			if err := t.checkTasks(tasks); err != nil {
				return err
			}
			log, evs, err := eventlog.Open(t.paths.Events)
			if errors.Is(err, eventlog.ErrLocked) {
				return &run.Error{Kind: run.Locked, Feature: t.feature, Path: t.paths.Events,
					Err: fmt.Errorf("the run of %s is in progress; only a stopped run can be changed", t.feature)}
			}
			if err != nil {
				return err
			}
			defer log.Close()
			if len(evs) == 0 {
				return usageErrorf("there is no run of %s; start one with zerg rush %s", t.feature, t.feature)
			}
			st := runstate.Replay(evs)
			// Every task is checked against the state machine before any is
			// requeued: all or nothing.
			for _, id := range tasks {
				ts := st.Task(id)
				e, err := eventlog.NewEvent(runstate.EvTaskRequeued, id, 0, map[string]string{"by": "zerg retry"})
				if err != nil {
					return err
				}
				if err := st.Apply(e); err != nil {
					if ts.Status == runstate.StatusPending {
						return usageErrorf("task %s of %s has not failed (it is pending); zerg rush %s --resume runs it", id, t.feature, t.feature)
					}
					return usageErrorf("task %s of %s is %s; only a failed, blocked, cancelled or unmerged task can be retried", id, t.feature, ts.Status)
				}
			}
			for _, id := range tasks {
				if _, err := log.AppendData(runstate.EvTaskRequeued, id, 0, map[string]string{"by": "zerg retry"}); err != nil {
					return fmt.Errorf("write the run log: %w", err)
				}
				fmt.Fprintf(a.stdout, "%s: requeued with a fresh retry budget\n", id)
			}
			fmt.Fprintf(a.stdout, "run it: zerg rush %s --resume\n", t.feature)
			return nil
		},
	}
	return cmd
}
