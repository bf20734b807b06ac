package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// runTarget is a feature's run as the inspection commands see it
// (run.Target: run.Resolve decides which run and which tasks are meant).
type runTarget struct {
	root    string
	feature string
	paths   run.Paths
}

// resolveRun is run.Resolve from the working directory.
func (a *app) resolveRun(ctx context.Context, feature string) (*runTarget, error) {
	cwd, err := a.getwd()
	if err != nil {
		return nil, err
	}
	return toRunTarget(run.Resolve(ctx, cwd, feature))
}

// resolveTaskArgs is run.ResolveTaskArgs from the working directory.
func (a *app) resolveTaskArgs(ctx context.Context, args []string) (*runTarget, []string, error) {
	cwd, err := a.getwd()
	if err != nil {
		return nil, args, err
	}
	t, tasks, err := run.ResolveTaskArgs(ctx, cwd, args)
	r, err := toRunTarget(t, err)
	return r, tasks, err
}

func toRunTarget(t *run.Target, err error) (*runTarget, error) {
	if err != nil {
		return nil, err
	}
	return &runTarget{root: t.Root, feature: t.Feature, paths: t.Paths}, nil
}

func (r *runTarget) target() *run.Target {
	return &run.Target{Root: r.root, Feature: r.feature, Paths: r.paths}
}

func (r *runTarget) inspect() (runstate.View, *runstate.State, error) { return r.target().Inspect() }

func (r *runTarget) state() (*runstate.State, error) { return r.target().State() }

func (r *runTarget) checkTasks(tasks []string) error { return r.target().CheckTasks(tasks) }

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
