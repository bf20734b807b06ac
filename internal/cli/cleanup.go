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
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/run"
)

func init() { register(newCleanupCmd) }

func newCleanupCmd(a *app) *cobra.Command {
	var all, dryRun bool
	cmd := &cobra.Command{
		Use:   "cleanup FEATURE",
		Short: "Remove the workspaces and branches zerg owns for a feature (never dirty ones)",
		Long: `Remove what zerg created for a feature and no longer needs: its clean
workspaces, and attempt branches already merged into the integration branch.
A workspace with uncommitted changes is never deleted (it is listed instead), and
nothing outside zerg/FEATURE/ branches and zerg's workspace directory is touched.

--all also removes the integration branch, every attempt branch (failed attempts'
preserved work included) and the run's log, so the feature can be run afresh.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCleanup(cmd.Context(), a, args[0], all, dryRun)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also remove the integration branch, all attempt branches and the run log")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be removed and remove nothing")
	return cmd
}

func runCleanup(ctx context.Context, a *app, feature string, all, dryRun bool) error {
	t, err := a.resolveRun(ctx, feature)
	if err != nil {
		return err
	}
	if err := gitx.ValidateRef(run.BranchPrefix(t.feature) + "x"); err != nil {
		return usageErrorf("%q is not a feature name zerg could have used", t.feature)
	}
	// Holding the log's lock proves no coordinator is running.
	if _, statErr := os.Stat(t.paths.Events); statErr == nil {
		log, _, err := eventlog.Open(t.paths.Events)
		if errors.Is(err, eventlog.ErrLocked) {
			return usageErrorf("the run of %s is in progress; stop it first (zerg stop %s)", t.feature, t.feature)
		}
		if err == nil {
			defer log.Close()
		}
	}
	repo := &gitx.Repo{Runner: gitx.New(t.root)}
	verb := map[bool]string{true: "would remove", false: "removed"}[dryRun]
	kept := 0

	// Workspaces: git's own list, restricted to zerg's directory for this feature.
	out, err := repo.Run(ctx, "worktree", "list", "--porcelain")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(out, "\n") {
		path, ok := strings.CutPrefix(line, "worktree ")
		if !ok || !within(t.paths.Workspaces, path) {
			continue
		}
		// Workspaces may belong to the worker user; trust exactly this one
		// (gitx checks that its .git entry is still zerg's).
		repo.TrustWorkspace(path)
		if dirty, err := repo.In(path).IsDirty(ctx); err == nil && dirty {
			fmt.Fprintf(a.stdout, "kept     %s (uncommitted changes: commit or copy them, then run cleanup again)\n", path)
			kept++
			continue
		}
		if !dryRun {
			if err := repo.RemoveWorktree(ctx, path); err != nil {
				fmt.Fprintf(a.stdout, "kept     %s (%v)\n", path, err)
				kept++
				continue
			}
		}
		fmt.Fprintf(a.stdout, "%s workspace %s\n", verb, path)
	}
	if !dryRun {
		_, _ = repo.Run(ctx, "worktree", "prune")
	}
	// Workers' private state (settings, HOME, CLAUDE_CONFIG_DIR) is zerg's
	// scratch: the records of each attempt are in the run directory.
	if _, err := os.Stat(t.paths.State); err == nil {
		if !dryRun {
			if err := os.RemoveAll(t.paths.State); err != nil {
				return err
			}
		}
		fmt.Fprintf(a.stdout, "%s worker state %s\n", verb, t.paths.State)
	}

	// Branches: only zerg/<feature>/…
	integration := run.IntegrationBranch(t.feature)
	refs, err := repo.Run(ctx, "for-each-ref", "--format=%(refname:short)", "refs/heads/"+run.BranchPrefix(t.feature))
	if err != nil {
		return err
	}
	merged := map[string]bool{}
	if ok, _ := repo.BranchExists(ctx, integration); ok {
		if m, err := repo.Run(ctx, "branch", "--format=%(refname:short)", "--merged", integration, "--list", run.BranchPrefix(t.feature)+"*"); err == nil {
			for _, b := range strings.Fields(m) {
				merged[b] = true
			}
		}
	}
	for _, b := range strings.Fields(refs) {
		if b == integration && !all {
			continue
		}
		if !all && !merged[b] {
			continue
		}
		if !dryRun {
			if err := repo.DeleteBranch(ctx, b); err != nil {
				return err
			}
		}
		fmt.Fprintf(a.stdout, "%s branch %s\n", verb, b)
	}
	if all {
		if !dryRun {
			if err := os.RemoveAll(t.paths.RunDir); err != nil {
				return err
			}
		}
		fmt.Fprintf(a.stdout, "%s run log %s\n", verb, rel(t.root, t.paths.RunDir))
	}
	if kept > 0 {
		return failedf("%d workspace(s) kept because they hold uncommitted work", kept)
	}
	return nil
}

func within(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != "." && !strings.HasPrefix(r, "..")
}
