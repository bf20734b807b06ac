package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/cleanup"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/textx"
)

func init() { register(newCleanupCmd) }

func newCleanupCmd(a *app) *cobra.Command {
	var o cleanupOpts
	cmd := &cobra.Command{
		Use:   "cleanup [FEATURE]",
		Short: "Remove the workspaces and branches zerg owns for a feature (never dirty ones)",
		Long: `Remove what zerg created for a feature and no longer needs: its clean
workspaces, and attempt branches already merged into the integration branch.
A workspace with uncommitted changes is never deleted (it is listed instead),
nor is a branch checked out in any worktree, and nothing outside zerg/FEATURE/
branches and zerg's workspace directory is touched. FEATURE may be left out
when the repository has a single run.

--all also removes the integration branch, every attempt branch (failed attempts'
preserved work included) and the run's log, so the feature can be run afresh.
It keeps the log and the integration branch, and exits 1, while a kept
workspace holds uncommitted work (the log is what zerg rush --resume saves it
from) or while the run delivered and its integration branch was never merged
into a branch of yours; --force removes them anyway (never a dirty workspace).`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.force && !o.all {
				return usageErrorf("--force only applies with --all")
			}
			feature := ""
			if len(args) == 1 {
				feature = args[0]
			}
			return runCleanup(cmd.Context(), a, feature, o)
		},
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "also remove the integration branch, all attempt branches and the run log")
	cmd.Flags().BoolVar(&o.force, "force", false, "with --all, remove the run log and integration branch even if they hold unsaved or unmerged work")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "list what would be removed and remove nothing")
	return cmd
}

type cleanupOpts struct {
	all, force, dryRun bool
}

func runCleanup(ctx context.Context, a *app, feature string, o cleanupOpts) error {
	t, err := a.resolveRun(ctx, feature)
	if err != nil {
		return err
	}
	if err := gitx.ValidateRef(run.BranchPrefix(t.feature) + "x"); err != nil {
		return usageErrorf("%q is not a feature name zerg could have used", t.feature)
	}
	repo := cleanup.Repo{Repo: &gitx.Repo{Runner: gitx.New(t.root)}}
	if known, err := cleanup.Known(ctx, repo, t.paths); err != nil {
		return err
	} else if !known {
		runs := run.Runs(t.root)
		if len(runs) == 0 {
			return usageErrorf("nothing of %s to clean up: no spec, run log, workspace or branch of zerg's by that name (this repository has no run)", t.feature)
		}
		return usageErrorf("nothing of %s to clean up: no spec, run log, workspace or branch of zerg's by that name (its runs: %s)", t.feature, strings.Join(runs, ", "))
	}
	st, logErr, closeLog, err := cleanup.OpenLog(t.paths)
	if err != nil {
		return err
	}
	defer closeLog()
	rep, err := cleanup.Run(ctx, repo, cleanup.Security{},
		cleanup.Target{Feature: t.feature, Paths: t.paths, LogPath: pathx.Short(t.root, t.paths.RunDir), State: st, LogErr: logErr},
		cleanup.Options{All: o.all, Force: o.force, DryRun: o.dryRun, NameCommits: namedCommits})
	for _, l := range rep.Lines {
		fmt.Fprintln(a.stdout, l)
	}
	if err != nil {
		return err
	}
	if len(rep.Failures) > 0 {
		return failedf("%s", strings.Join(rep.Failures, "; "))
	}
	return nil
}

// namedCommits names commits zerg did not make for a kept line: "1 commit
// (abc1234 "fix" by Ada)", the first cleanup.MaxNamedCommits of them.
func namedCommits(list []gitx.ForeignCommit) string {
	var names []string
	for i, c := range list {
		if i == cleanup.MaxNamedCommits {
			names = append(names, "…")
			break
		}
		names = append(names, fmt.Sprintf("%s %q by %s", gitx.ShortHash(c.Commit), textx.Truncate(textx.OneLine(term.Clean(c.Subject)), 60), term.Clean(c.Committer.Name)))
	}
	n := pluralf(len(list), "%d commit", "%d commits")
	if len(list) > cleanup.MaxNamedCommits {
		n = fmt.Sprintf("more than %d commits", cleanup.MaxNamedCommits)
	}
	return fmt.Sprintf("%s (%s)", n, strings.Join(names, ", "))
}
