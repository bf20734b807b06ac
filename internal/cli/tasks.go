package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/tasksmode"
	"github.com/zergrush/zerg/internal/textx"
)

func init() { register(newTasksCmd) }

// The protocol of tasks mode (docs/modes.md): the user's Claude Code
// session asks zerg tasks next for the tasks ready now, runs each as a Task
// subagent in the workspace zerg prepared, and reports each back with zerg
// tasks done; a coordinator (zerg rush --mode tasks, started by zerg tasks
// next) does everything else as in every mode.

func newTasksCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "Tasks mode: hand the ready tasks to this Claude Code session and take their results back",
		Long: `Tasks mode runs a feature's workers as Task subagents of your own Claude Code
session (/zerg:rush FEATURE --mode tasks) while zerg stays the coordinator:
it prepares each task's workspace (a private clone under .zerg/tasks), checks
and commits each result exactly as in every mode (sandbox, container,
subprocess), and merges each level (schedule: dag, each batch of finished
tasks) through the gates.

  zerg tasks next FEATURE    the tasks ready now, each with its lease, workspace,
                             model and prompt (starts the coordinator if none runs)
  zerg tasks done FEATURE TASK --lease L
                             the subagent finished: zerg verifies, checks and
                             commits its workspace, and says what became of it

A lease that is not reported within tasks.lease fails its attempt, and the
task is handed out again with a new lease. docs/modes.md says what tasks
mode does and does not isolate.`,
	}
	cmd.AddCommand(newTasksNextCmd(a), newTasksDoneCmd(a))
	return cmd
}

// nextReport is what zerg tasks next prints (--json).
type nextReport struct {
	Feature string `json:"feature"`
	// State is the run's state (runstate.View.State): starting while the
	// coordinator checks the environment, running while there is work,
	// then delivered or not_delivered.
	State string         `json:"state"`
	Tasks []driver.Lease `json:"tasks"`
	// Working are leases handed out earlier and not reported yet.
	Working []workingLease `json:"working"`
	// Failed are the tasks that failed for good (state not_delivered).
	Failed []string `json:"failed,omitempty"`
	Next   string   `json:"next"`
}

// workingLease is a lease handed out before: named by its task and
// attempt, never by its token, which only the session and the task's
// prompt hold.
type workingLease struct {
	Task    string    `json:"task"`
	Attempt int       `json:"attempt"`
	Expires time.Time `json:"expires"`
}

func newTasksNextCmd(a *app) *cobra.Command {
	var asJSON bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "next FEATURE",
		Short: "Print the tasks ready now, each with its lease, workspace and prompt",
		Long: `Print the tasks of FEATURE that are ready now and not handed out before, each
with its lease, its workspace (a private clone of the base it starts from,
under .zerg/tasks/FEATURE), its model and its prompt. Start one Task subagent per task
with that prompt, then report each with zerg tasks done.

When no coordinator runs the feature, zerg tasks next starts one in the
background (zerg rush FEATURE --mode tasks, or --resume for a run that exists;
its output goes to .zerg/runs/FEATURE/tasks-rush.log). When nothing is ready
(a level or a batch is merging, subagents are still working) it waits up to
--wait for new tasks, then prints what is still being worked on. When the run
has ended it prints its state: delivered, or not_delivered with the failed
tasks.

Exit status: 0 tasks handed out, nothing ready yet, or delivered; 1 not
delivered or the coordinator could not start; 2 bad input.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTasksNext(cmd.Context(), a, args[0], wait, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().DurationVar(&wait, "wait", 100*time.Second, "how long to wait for new tasks (under the Bash tool's 2-minute limit by default)")
	return cmd
}

func runTasksNext(ctx context.Context, a *app, feature string, wait time.Duration, asJSON bool) error {
	r, err := a.resolveRun(ctx, feature)
	if err != nil {
		return err
	}
	if wait < 0 {
		return usageErrorf("--wait %s: give a duration of 0 or more, like 100s", wait)
	}
	res, err := tasksmode.Next(ctx, tasksmode.Background{Root: r.root, Feature: r.feature, Paths: r.paths}, r.paths.Board, wait, 200*time.Millisecond)
	if err != nil {
		return err
	}
	v := res.View
	switch res.Outcome {
	case tasksmode.Delivered:
		return printNext(a, asJSON, nextReport{Feature: feature, State: string(v.State),
			Next: fmt.Sprintf("the work is on %s; zerg review %s, then zerg merge %s --into BRANCH", v.IntegrationBranch, feature, feature)})
	case tasksmode.NotDelivered:
		rep := nextReport{Feature: feature, State: string(v.State), Failed: res.Failed,
			Next: fmt.Sprintf("zerg status %s says why; after zerg retry %s TASK, zerg tasks next %s continues", feature, feature, feature)}
		if err := printNext(a, asJSON, rep); err != nil {
			return err
		}
		return silent(ExitFailed)
	case tasksmode.Starting:
		return printNext(a, asJSON, nextReport{Feature: feature, State: "starting",
			Next: fmt.Sprintf("the coordinator is starting (its output: %s); run zerg tasks next %s again", tasksmode.RushLog(r.paths), feature)})
	case tasksmode.Ended:
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("the coordinator of %s ended (%v): %s", feature, res.Exit, tasksmode.LogTail(tasksmode.RushLog(r.paths), 5))}
	}
	var working []workingLease
	for _, l := range res.Working {
		working = append(working, workingLease{Task: l.Task, Attempt: l.Attempt, Expires: l.Expires})
	}
	rep := nextReport{Feature: feature, State: string(runstate.RunRunning), Tasks: res.Tasks, Working: working}
	rep.Next = sessionNext(feature, v.Schedule, len(res.Tasks), len(working))
	return printNext(a, asJSON, rep)
}

// sessionNext is what the session does next while the run goes on, with
// fresh leases handed out now and working ones out before.
func sessionNext(feature, schedule string, fresh, working int) string {
	switch {
	case fresh > 0:
		return fmt.Sprintf("start one Task subagent per task with its prompt (and model) and run_in_background false, then zerg tasks done %s TASK --lease LEASE for each as it returns", feature)
	case working > 0:
		return fmt.Sprintf("report each finished subagent with zerg tasks done %s TASK --lease LEASE; then zerg tasks next %s", feature, feature)
	case schedule == config.ScheduleDAG:
		return fmt.Sprintf("nothing is ready yet (finished tasks are being checked or merged; the rest wait for their dependencies); run zerg tasks next %s again", feature)
	default:
		return fmt.Sprintf("nothing is ready yet (a level is being checked or merged); run zerg tasks next %s again", feature)
	}
}

// resumeCommand is how a stopped run of feature continues: zerg tasks next
// for a run in tasks mode (a resume does not cross into another mode),
// zerg rush --resume for the others.
func resumeCommand(st *runstate.State, feature string) string {
	if st != nil && st.Started != nil && !st.Started.Caps().StartsWorker {
		return fmt.Sprintf("zerg tasks next %s (or /zerg:rush %s --mode tasks in your Claude Code session)", feature, feature)
	}
	return fmt.Sprintf("zerg rush %s --resume", feature)
}

func printNext(a *app, asJSON bool, rep nextReport) error {
	if rep.Tasks == nil {
		rep.Tasks = []driver.Lease{}
	}
	if rep.Working == nil {
		rep.Working = []workingLease{}
	}
	if asJSON {
		return printJSON(a.stdout, rep)
	}
	w := a.stdout
	fmt.Fprintf(w, "%s: %s\n", rep.Feature, rep.State)
	for _, l := range rep.Tasks {
		fmt.Fprintf(w, "\n## %s (lease %s, model %s, until %s)\nworkspace: %s\n\n%s\n", l.Task, l.ID, textx.Or(l.Model, "-"), l.Expires.Local().Format("15:04:05"), l.Workspace, l.Prompt)
	}
	for _, l := range rep.Working {
		fmt.Fprintf(w, "working: %s (attempt %d, until %s)\n", l.Task, l.Attempt, l.Expires.Local().Format("15:04:05"))
	}
	if len(rep.Failed) > 0 {
		fmt.Fprintf(w, "failed: %s\n", strings.Join(rep.Failed, ", "))
	}
	fmt.Fprintf(w, "next: %s\n", rep.Next)
	return nil
}

// doneReport is what zerg tasks done prints (--json).
type doneReport struct {
	Feature string `json:"feature"`
	Task    string `json:"task"`
	Lease   string `json:"lease"`
	// Status is the task's status once zerg took the result: committed
	// (or merged), retry_wait (handed out again), failed, or verifying
	// when --wait ran out first.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	Detail string `json:"detail,omitempty"`
	Commit string `json:"commit,omitempty"`
}

func newTasksDoneCmd(a *app) *cobra.Command {
	var lease string
	var asJSON bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "done FEATURE TASK --lease LEASE",
		Short: "Report a subagent's task finished: zerg verifies, checks and commits its workspace",
		Long: `Report that the subagent of TASK finished its work in the workspace of lease
LEASE. zerg then takes the workspace through exactly the checks of every mode
(the verification command, secrets in every file, protected paths, file
ownership, an empty change) and commits it, and prints what became of it:
committed, or why not and whether the task is handed out again.

Exit status: 0 committed (or still being checked when --wait ran out), 1 the
result was refused, 2 the lease is not open (expired and handed out again, or
reported already) or another bad input.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTasksDone(cmd.Context(), a, args[0], args[1], lease, wait, asJSON)
		},
	}
	cmd.Flags().StringVar(&lease, "lease", "", "the task's lease, as zerg tasks next printed it and its prompt holds (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().DurationVar(&wait, "wait", 100*time.Second, "how long to wait for zerg's checks")
	_ = cmd.MarkFlagRequired("lease")
	return cmd
}

func runTasksDone(ctx context.Context, a *app, feature, task, lease string, wait time.Duration, asJSON bool) error {
	r, err := a.resolveRun(ctx, feature)
	if err != nil {
		return err
	}
	if err := r.checkTasks([]string{task}); err != nil {
		return err
	}
	v, _, err := r.inspect()
	if err != nil {
		return err
	}
	if !v.Coordinator.Alive {
		return usageErrorf("no coordinator runs %s, so lease %s is not open; zerg tasks next %s resumes the run and hands the task out again", feature, lease, feature)
	}
	done, err := tasksmode.Report(ctx, r.paths.Board, r.paths.Events, v.Coordinator.PID, task, lease, wait, 200*time.Millisecond,
		func() (runstate.View, error) { v, _, err := r.inspect(); return v, err })
	var notOpen *tasksmode.NotOpenError
	if errors.As(err, &notOpen) {
		// Never the open lease's token: only the session and the task's
		// prompt hold it.
		now := "task " + task + " has no open lease"
		if notOpen.Open > 0 {
			now = fmt.Sprintf("its open lease is attempt %d's, handed out with its prompt", notOpen.Open)
		}
		return usageErrorf("lease %s of %s is not open (%s): it expired and the task was handed out again, or it was reported already, or it is not a lease zerg tasks next printed for %s; zerg tasks next %s shows what is open", textx.Clip(textx.OneLine(lease), 80), task, now, task, feature)
	}
	if err != nil {
		return err
	}
	rep := doneReport{Feature: feature, Task: task, Lease: lease, Status: string(runstate.StatusVerifying)}
	refused := false
	if fin := done.Finished; fin != nil {
		rep.Status, rep.Commit = string(runstate.StatusCommitted), fin.Commit
		if fin.Class != outcome.Success {
			refused = true
			rep.Reason, rep.Detail = fin.Reason, fin.Detail
			// What the coordinator made of the failure: a retry
			// (handed out again) or the task's end.
			rep.Status = string(runstate.StatusRetryWait)
			if done.TaskFailed {
				rep.Status = string(runstate.StatusFailed)
			}
		}
	}
	if err := printDone(a, asJSON, rep); err != nil {
		return err
	}
	if refused {
		return silent(ExitFailed)
	}
	return nil
}

func printDone(a *app, asJSON bool, rep doneReport) error {
	if asJSON {
		return printJSON(a.stdout, rep)
	}
	w := a.stdout
	switch runstate.Status(rep.Status) {
	case runstate.StatusCommitted, runstate.StatusMerged:
		fmt.Fprintf(w, "%s: %s as %s\n", rep.Task, rep.Status, gitx.ShortHash(rep.Commit))
	case runstate.StatusVerifying:
		fmt.Fprintf(w, "%s: still being checked; zerg status %s shows the result\n", rep.Task, rep.Feature)
	case runstate.StatusRetryWait:
		fmt.Fprintf(w, "%s: refused (%s): %s; zerg tasks next %s hands it out again\n", rep.Task, rep.Reason, rep.Detail, rep.Feature)
	default:
		fmt.Fprintf(w, "%s: %s (%s): %s\n", rep.Task, rep.Status, rep.Reason, rep.Detail)
	}
	return nil
}
