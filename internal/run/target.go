package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

// Target is a feature's run as the inspection commands (status, logs,
// stop, retry, diagnose, merge...) see it: the repository, the feature and
// the run's paths. Every command finds it with Resolve, so they all mean
// the same run by the same arguments and refuse the same way.
type Target struct {
	Root    string
	Feature string
	Paths   Paths
}

// Resolve finds the feature's run in the repository holding cwd: the one
// named, or the only run in .zerg/runs. Every command names the feature the
// same way: as its first argument, optional when the repository has one
// run. A directory outside a repository, no run, or several runs with none
// named are bad input (BadInput, exit 2), with the words a person needs.
func Resolve(ctx context.Context, cwd, feature string) (*Target, error) {
	root, err := gitx.WorkTreeRoot(ctx, cwd)
	if err != nil {
		return nil, &Error{Kind: BadInput, Err: err}
	}
	if feature, err = ChooseRun(Runs(root), feature); err != nil {
		return nil, err
	}
	paths, err := PathsFor(ctx, root, feature)
	if err != nil {
		return nil, err
	}
	return &Target{Root: root, Feature: feature, Paths: paths}, nil
}

// ChooseRun is which of the repository's runs a command means: the feature
// named, else the only run; none, or several with none named, is bad input.
func ChooseRun(runs []string, feature string) (string, error) {
	if feature != "" {
		return feature, nil
	}
	switch len(runs) {
	case 0:
		return "", &Error{Kind: BadInput, Err: errors.New("no zerg run in this repository; start one with zerg rush FEATURE")}
	case 1:
		return runs[0], nil
	}
	return "", &Error{Kind: BadInput, Err: fmt.Errorf("several runs (%s); name the feature as the first argument", strings.Join(runs, ", "))}
}

// ResolveTaskArgs reads "[FEATURE] TASK..." for the commands about tasks
// and resolves the run (Resolve); it returns the tasks named.
func ResolveTaskArgs(ctx context.Context, cwd string, args []string) (*Target, []string, error) {
	var runs []string
	if len(args) > 1 {
		if root, err := gitx.WorkTreeRoot(ctx, cwd); err == nil {
			runs = Runs(root)
		}
	}
	feature, tasks := SplitTaskArgs(args, runs)
	t, err := Resolve(ctx, cwd, feature)
	return t, tasks, err
}

// SplitTaskArgs splits "[FEATURE] TASK..." given the repository's runs: the
// first argument names the feature when it is one of runs and more
// arguments follow; otherwise every argument is a task of the only run. A
// first argument that is neither a run nor a name a feature or a task could
// have ("../x", "a/b", ".x") is taken as the feature, so it is refused as
// one (PathsFor) rather than looked up as a task.
func SplitTaskArgs(args, runs []string) (feature string, tasks []string) {
	if len(args) > 1 && (spec.FeatureNameProblem(args[0]) != "" || slices.Contains(runs, args[0])) {
		return args[0], args[1:]
	}
	return "", args
}

// Inspect reads the run: its view (log, graph, liveness) and state. A run
// without a log is bad input: the feature has no run.
func (t *Target) Inspect() (runstate.View, *runstate.State, error) {
	v, st, err := Inspect(t.Paths)
	if errors.Is(err, os.ErrNotExist) {
		return v, nil, &Error{Kind: BadInput, Feature: t.Feature, Path: t.Paths.Events,
			Err: fmt.Errorf("no run of %s (%s does not exist); start one with zerg rush %s", t.Feature, t.Paths.Events, t.Feature)}
	}
	if err != nil {
		return v, nil, fmt.Errorf("read the run log: %w", err)
	}
	return v, st, nil
}

// State replays the run's log.
func (t *Target) State() (*runstate.State, error) {
	_, st, err := t.Inspect()
	return st, err
}

// CheckTasks refuses the first of tasks that is not a task of the run: of
// the graph it works on, or named by its log. A run without a log, or
// without a graph or a task, refuses none: the caller says what it finds,
// not that every task is unknown.
func (t *Target) CheckTasks(tasks []string) error {
	v, _, err := t.Inspect()
	if err != nil {
		return nil
	}
	ids := make([]string, 0, len(v.Tasks))
	for _, tv := range v.Tasks {
		ids = append(ids, tv.ID)
	}
	return FirstUnknownTask(tasks, ids, t.Feature)
}

// FirstUnknownTask is UnknownTask for the first of tasks not among ids, nil
// when all are, or when ids is empty (nothing to check against).
func FirstUnknownTask(tasks, ids []string, feature string) error {
	if len(ids) == 0 {
		return nil
	}
	for _, id := range tasks {
		if !slices.Contains(ids, id) {
			return UnknownTask(id, feature, ids)
		}
	}
	return nil
}

// UnknownTask is how every command says a task is not one of the
// feature's: one line naming both, and the feature's tasks (the first 12)
// so the right name is at hand. It is bad input.
func UnknownTask(task, feature string, ids []string) error {
	if len(ids) > 12 {
		ids = append(slices.Clip(ids[:12]), "…")
	}
	return &Error{Kind: BadInput, Feature: feature, Task: task,
		Err: fmt.Errorf("unknown task %q in feature %s (its tasks: %s)", task, feature, strings.Join(ids, ", "))}
}
