package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

// runTarget is a feature's run as the inspection commands see it.
type runTarget struct {
	root    string
	feature string
	paths   run.Paths
}

// resolveRun finds the feature's run: the one named, or the only run in
// .zerg/runs. Every command names the feature the same way: as its first
// argument, optional when the repository has one run.
func (a *app) resolveRun(ctx context.Context, feature string) (*runTarget, error) {
	cwd, err := a.getwd()
	if err != nil {
		return nil, err
	}
	root, err := zergRepoRoot(ctx, cwd)
	if err != nil {
		return nil, err
	}
	runs := run.Runs(root)
	if feature == "" {
		switch len(runs) {
		case 0:
			return nil, usageErrorf("no zerg run in this repository; start one with zerg rush FEATURE")
		case 1:
			feature = runs[0]
		default:
			return nil, usageErrorf("several runs (%s); name the feature as the first argument", strings.Join(runs, ", "))
		}
	}
	paths, err := run.PathsFor(ctx, root, feature)
	if err != nil {
		return nil, err
	}
	return &runTarget{root: root, feature: feature, paths: paths}, nil
}

// resolveTaskArgs reads "[FEATURE] TASK..." for the commands about tasks:
// the first argument names the feature when it is a run of this repository
// and more arguments follow; otherwise every argument is a task of the
// only run. A first argument that is neither a run nor a name a feature or
// a task could have ("../x", "a/b", ".x") is taken as the feature, so it is
// refused as one rather than looked up as a task.
func (a *app) resolveTaskArgs(ctx context.Context, args []string) (*runTarget, []string, error) {
	feature := ""
	if len(args) > 1 {
		if spec.FeatureNameProblem(args[0]) != "" {
			feature, args = args[0], args[1:]
		} else if cwd, err := a.getwd(); err == nil {
			if root, err := zergRepoRoot(ctx, cwd); err == nil && slices.Contains(run.Runs(root), args[0]) {
				feature, args = args[0], args[1:]
			}
		}
	}
	t, err := a.resolveRun(ctx, feature)
	return t, args, err
}

// inspect reads the run: its view (log, graph, liveness) and state.
func (r *runTarget) inspect() (runstate.View, *runstate.State, error) {
	v, st, err := run.Inspect(r.paths)
	if errors.Is(err, os.ErrNotExist) {
		return v, nil, usageErrorf("no run of %s (%s does not exist); start one with zerg rush %s", r.feature, r.paths.Events, r.feature)
	}
	if err != nil {
		return v, nil, fmt.Errorf("read the run log: %w", err)
	}
	return v, st, nil
}

// tasks lists the run's tasks: every task of the graph it works on, then
// any its log names that the graph lacks (the view's tasks).
func (r *runTarget) tasks() ([]string, error) {
	v, _, err := r.inspect()
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(v.Tasks))
	for _, t := range v.Tasks {
		ids = append(ids, t.ID)
	}
	return ids, nil
}

// checkTasks refuses the first of tasks that is not a task of the run.
func (r *runTarget) checkTasks(tasks []string) error {
	ids, err := r.tasks()
	if err != nil || len(ids) == 0 {
		// No log, or a log without a graph or a task: the caller says what
		// it finds, not that every task is unknown.
		return nil
	}
	for _, id := range tasks {
		if !slices.Contains(ids, id) {
			return unknownTask(id, r.feature, ids)
		}
	}
	return nil
}

// unknownTask is how every command says a task is not one of the
// feature's: one line naming both, and the feature's tasks (the first 12)
// so the right name is at hand.
func unknownTask(task, feature string, ids []string) error {
	if len(ids) > 12 {
		ids = append(slices.Clip(ids[:12]), "…")
	}
	return usageErrorf("unknown task %q in feature %s (its tasks: %s)", task, feature, strings.Join(ids, ", "))
}

// state replays the run's log.
func (r *runTarget) state() (*runstate.State, error) {
	_, st, err := r.inspect()
	return st, err
}

func (a *app) completeRuns(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	cwd, err := a.getwd()
	if err != nil || len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	if root := run.FindZergRoot(cwd); root != "" {
		return run.Runs(root), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}
