package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/run"
)

func init() { register(newRetryCmd) }

func newRetryCmd(a *app) *cobra.Command {
	var feature string
	cmd := &cobra.Command{
		Use:   "retry TASK [TASK...]",
		Short: "Requeue failed tasks with a fresh retry budget",
		Long: `Requeue tasks that failed for good, with a fresh retry budget, so that
zerg rush FEATURE --resume runs them again. Only a stopped run can be changed: the
running coordinator is the only writer of its log.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := a.resolveRun(cmd.Context(), feature)
			if err != nil {
				return err
			}
			log, evs, err := eventlog.Open(t.paths.Events)
			if errors.Is(err, eventlog.ErrLocked) {
				return usageErrorf("the run of %s is in progress; stop it first (zerg stop %s)", t.feature, t.feature)
			}
			if err != nil {
				return err
			}
			defer log.Close()
			st := run.Replay(evs)
			if st.Finished != nil && st.Finished.Delivered {
				return usageErrorf("the run of %s was delivered; there is nothing to retry", t.feature)
			}
			for _, id := range args {
				ts := st.Tasks[id]
				if ts == nil {
					return usageErrorf("task %s has not run in %s; only tasks that ran can be retried", id, t.feature)
				}
				if ts.Status == run.StatusMerged {
					return usageErrorf("task %s is merged; it cannot be retried", id)
				}
			}
			for _, id := range args {
				if _, err := log.AppendData(run.EvTaskRequeued, id, 0, map[string]string{"by": "zerg retry"}); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "%s: requeued with a fresh retry budget\n", id)
			}
			fmt.Fprintf(a.stdout, "run it: zerg rush %s --resume\n", t.feature)
			return nil
		},
	}
	cmd.Flags().StringVar(&feature, "feature", "", "the run's feature (default: the only run)")
	return cmd
}
