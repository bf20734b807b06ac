package run

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/pathx"
)

// FeatureTask reads a command's "[FEATURE] TASK" arguments (zerg context)
// in the repository holding cwd: with two the first is the feature; with
// one, the feature is OnlyFeature. It returns the feature's paths and the
// task's id. No repository, or a feature without a task graph, is bad
// input, the graph named relative to cwd; usage is the command's synopsis,
// for OnlyFeature's refusals.
func FeatureTask(ctx context.Context, cwd string, args []string, usage string) (Paths, string, error) {
	root, err := gitx.WorkTreeRoot(ctx, cwd)
	if err != nil {
		return Paths{}, "", &Error{Kind: BadInput, Err: err}
	}
	task := args[len(args)-1]
	feature := ""
	if len(args) == 2 {
		feature = args[0] // PathsFor refuses a name that is not a plain name
	} else {
		if feature, err = OnlyFeature(root, usage); err != nil {
			return Paths{}, "", err
		}
	}
	paths, err := PathsFor(ctx, root, feature)
	if err != nil {
		return Paths{}, "", err
	}
	if _, err := os.Stat(paths.Graph); err != nil {
		return Paths{}, "", &Error{Kind: BadInput, Feature: feature,
			Err: fmt.Errorf("unknown feature %q: no task graph at %s", feature, pathx.Short(cwd, paths.Graph))}
	}
	return paths, task, nil
}

// OnlyFeature is the feature meant when a command names none: the
// repository's only run, else its only feature with a task graph. Several,
// or none, is bad input; usage ("zerg context FEATURE TASK") says how to
// name one.
func OnlyFeature(root, usage string) (string, error) {
	bad := func(format string, a ...any) error {
		return &Error{Kind: BadInput, Err: fmt.Errorf(format, a...)}
	}
	if runs := Runs(root); len(runs) == 1 {
		return runs[0], nil
	} else if len(runs) > 1 {
		return "", bad("several runs (%s); name the feature: %s", strings.Join(runs, ", "), usage)
	}
	features := Features(root)
	switch len(features) {
	case 0:
		return "", bad("no feature in this repository: no .zerg/specs/<feature>/task-graph.json")
	case 1:
		return features[0], nil
	}
	return "", bad("several features (%s); name the feature: %s", strings.Join(features, ", "), usage)
}
