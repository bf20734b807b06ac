package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/run"
)

// runTarget is a feature's run as the inspection commands see it.
type runTarget struct {
	root    string
	feature string
	paths   run.Paths
}

// resolveRun finds the feature's run: the argument, or the only run in
// .zerg/runs.
func (a *app) resolveRun(ctx context.Context, feature string) (*runTarget, error) {
	cwd, err := a.getwd()
	if err != nil {
		return nil, err
	}
	root, err := zergRepoRoot(ctx, cwd)
	if err != nil {
		return nil, err
	}
	if feature == "" {
		runs := listRuns(root)
		switch len(runs) {
		case 0:
			return nil, usageErrorf("no zerg run in this repository; start one with zerg rush FEATURE")
		case 1:
			feature = runs[0]
		default:
			return nil, usageErrorf("several runs (%s); name one with --feature", strings.Join(runs, ", "))
		}
	}
	paths, err := run.PathsFor(ctx, root, feature)
	if err != nil {
		return nil, err
	}
	return &runTarget{root: root, feature: feature, paths: paths}, nil
}

func listRuns(root string) []string {
	entries, _ := os.ReadDir(filepath.Join(root, ".zerg", "runs"))
	var out []string
	for _, e := range entries {
		if e.IsDir() && fileExists(filepath.Join(root, ".zerg", "runs", e.Name(), "events.jsonl")) {
			out = append(out, e.Name())
		}
	}
	return out
}

// state replays the run's log.
func (r *runTarget) state() (*run.State, error) {
	evs, err := eventlog.Read(r.paths.Events)
	if errors.Is(err, os.ErrNotExist) {
		return nil, usageErrorf("no run of %s (%s does not exist); start one with zerg rush %s", r.feature, r.paths.Events, r.feature)
	}
	if err != nil {
		return nil, fmt.Errorf("read the run log: %w", err)
	}
	return run.Replay(evs), nil
}

func (a *app) completeRuns(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	cwd, err := a.getwd()
	if err != nil || len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	if root := findZergRoot(cwd); root != "" {
		return listRuns(root), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}
