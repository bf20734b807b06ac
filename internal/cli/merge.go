package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/journey"
	"github.com/zergrush/zerg/internal/run"
)

func init() { register(newMergeCmd) }

func newMergeCmd(a *app) *cobra.Command {
	var into string
	var create, force bool
	cmd := &cobra.Command{
		Use:   "merge [FEATURE] --into BRANCH",
		Short: "Merge a delivered integration branch into a branch of yours",
		Long: `Merge zerg/FEATURE/integration into BRANCH: a fast-forward when possible, else a
merge commit. This is the only command that writes to your branches, and only
when you ask. If BRANCH is checked out, your working tree must be clean.
FEATURE may be left out when the repository has a single run.

BRANCH must exist: a mistyped name is an error, not a new branch. --create
creates it at the integration head when it does not exist.

When zerg review FEATURE reviewed the integration head and found something
blocking (.zerg/specs/FEATURE/review.json), merge refuses (exit 1) unless
--force. A review of an older head does not count.

When the branch changes protected paths (CI, hook and editor files, which
only a task security.allow_protected opened can change), merge names them
and asks on a terminal; without one it refuses (exit 1) unless --force.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			if into == "" {
				return usageErrorf("--into BRANCH is required: name the branch to merge into")
			}
			feature := ""
			if len(args) == 1 {
				feature = args[0]
			}
			return runMerge(cmd.Context(), a, feature, into, create, force)
		},
	}
	cmd.Flags().StringVar(&into, "into", "", "the branch to merge into (required)")
	cmd.Flags().BoolVar(&create, "create", false, "create BRANCH at the integration head if it does not exist")
	cmd.Flags().BoolVar(&force, "force", false, "merge even though the review of the integration head has a blocking finding, or the branch changes protected paths")
	return cmd
}

func runMerge(ctx context.Context, a *app, feature, into string, create, force bool) error {
	if err := gitx.ValidateRef(into); err != nil {
		return usageErrorf("--into: %v", err)
	}
	t, err := a.resolveRun(ctx, feature)
	if err != nil {
		return err
	}
	v, _, err := t.inspect()
	if err != nil {
		return err
	}
	if v.State != run.RunDelivered {
		return usageErrorf("the run of %s has not delivered (it is %s); merging a partial result needs an explicit git merge", t.feature, stateWords(v.State))
	}
	repo := &gitx.Repo{Runner: gitx.New(t.root)}
	integration := run.IntegrationBranch(t.feature)
	head, err := repo.RevParse(ctx, "refs/heads/"+integration)
	if err != nil {
		return usageErrorf("branch %s is missing: %v", integration, err)
	}
	if err := reviewGate(a, t, head, force); err != nil {
		return err
	}
	cfg, err := loadProjectConfig(t.root)
	if err != nil {
		return err
	}
	// The merge commit on your branch is written as the run's are
	// (commits.*): your name as its author.
	repo = &gitx.Repo{Runner: repo.WithCommits(run.CommitPolicy(ctx, t.root, cfg.Commits, t.feature))}
	exists, err := repo.BranchExists(ctx, into)
	if err != nil {
		return err
	}
	// What the integration branch changes in protected paths, against
	// where it would land.
	from := v.Base
	if exists {
		if from, err = repo.Run(ctx, "merge-base", "refs/heads/"+into, head); err != nil {
			return err
		}
		from = strings.TrimSpace(from)
	}
	prot, err := protectedChanges(ctx, repo, cfg, from, head)
	if err != nil {
		return err
	}
	if err := protectedGate(a, t.feature, prot, force); err != nil {
		return err
	}
	if !exists {
		if !create {
			return usageErrorf("branch %s does not exist; check the name, or pass --create to create it at the head of %s", into, integration)
		}
		// The all-zero old value makes the update fail if the branch
		// appeared meanwhile, rather than overwrite it.
		if err := repo.SetBranch(ctx, into, head, strings.Repeat("0", len(head))); err != nil {
			return fmt.Errorf("create branch %s: %w", into, err)
		}
		fmt.Fprintf(a.stdout, "created %s at %s\n", into, shortID(head))
		return nil
	}
	target, err := repo.RevParse(ctx, "refs/heads/"+into)
	if err != nil {
		return err
	}
	if done, err := repo.IsAncestor(ctx, head, target); err != nil {
		return err
	} else if done {
		fmt.Fprintf(a.stdout, "%s already contains %s; nothing to merge\n", into, integration)
		return nil
	}
	ff, err := repo.IsAncestor(ctx, target, head)
	if err != nil {
		return err
	}
	message := fmt.Sprintf("Merge %s (zerg)", integration)
	// Where is BRANCH checked out? Then git must update that working tree too.
	checkedOut, err := repo.WorktreeOf(ctx, into)
	if err != nil {
		return err
	}
	if checkedOut != "" {
		w := repo.In(checkedOut)
		// Untracked files do not block a merge (git refuses by itself to
		// overwrite one); changes to tracked files do.
		if changed, err := w.HasTrackedChanges(ctx); err != nil || changed {
			return usageErrorf("%s is checked out in %s with uncommitted changes; commit or stash them first", into, checkedOut)
		}
		if ff {
			err = w.FastForward(ctx, integration)
		} else {
			// Merge aborts a failed merge, leaving the working tree as it was.
			_, err = w.Merge(ctx, integration, message)
		}
		if err != nil {
			return failedf("merge into %s failed; nothing changed: %v", into, err)
		}
	} else if ff {
		if err := repo.SetBranch(ctx, into, head, target); err != nil {
			return err
		}
	} else {
		tmp, err := os.MkdirTemp("", "zerg-merge-")
		if err != nil {
			return err
		}
		ws := filepath.Join(tmp, "ws")
		defer os.RemoveAll(tmp)
		if err := repo.AddDetachedWorktree(ctx, ws, target); err != nil {
			return err
		}
		defer repo.RemoveWorktree(context.WithoutCancel(ctx), ws)
		merged, err := repo.In(ws).Merge(ctx, integration, message)
		if err != nil {
			return failedf("merge into %s failed; nothing changed: %v", into, err)
		}
		if err := repo.SetBranch(ctx, into, merged, target); err != nil {
			return err
		}
	}
	now, _ := repo.RevParse(ctx, "refs/heads/"+into)
	how := map[bool]string{true: "fast-forwarded", false: "merged"}[ff]
	fmt.Fprintf(a.stdout, "%s %s into %s: %s → %s\n", how, integration, into, shortID(target), shortID(now))
	return nil
}

// reviewGate refuses a head whose latest review has a blocking finding,
// unless force; a forced merge says what it overrode.
func reviewGate(a *app, t *runTarget, head string, force bool) error {
	specDir := run.SpecDir(t.root, t.feature)
	latest, err := journey.LoadReview(specDir)
	if err != nil {
		return badInput(err)
	}
	if !journey.MergeBlock(latest, head) {
		return nil
	}
	n := latest.Counts[journey.Blocking]
	what := fmt.Sprintf("the review of %s at %s has %s (%s)", run.IntegrationBranch(t.feature), shortID(head),
		pluralf(n, "%d blocking finding", "%d blocking findings"), filepath.Join(run.SpecDir(".", t.feature), journey.ReviewFile))
	if force {
		fmt.Fprintf(a.stderr, "zerg: warning: %s; merging anyway (--force)\n", what)
		return nil
	}
	return failedf("%s; fix them and run zerg review %s again, or merge anyway with --force", what, t.feature)
}
