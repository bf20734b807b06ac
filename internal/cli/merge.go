package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/run"
)

func init() { register(newMergeCmd) }

func newMergeCmd(a *app) *cobra.Command {
	var into string
	cmd := &cobra.Command{
		Use:   "merge FEATURE --into BRANCH",
		Short: "Merge a delivered integration branch into a branch of yours",
		Long: `Merge zerg/FEATURE/integration into BRANCH: a fast-forward when possible, else a
merge commit. This is the only command that writes to your branches, and only
when you ask. If BRANCH is checked out, your working tree must be clean.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			if into == "" {
				return usageErrorf("--into BRANCH is required: name the branch to merge into")
			}
			return runMerge(cmd.Context(), a, args[0], into)
		},
	}
	cmd.Flags().StringVar(&into, "into", "", "the branch to merge into (required)")
	return cmd
}

func runMerge(ctx context.Context, a *app, feature, into string) error {
	if err := gitx.ValidateRef(into); err != nil {
		return usageErrorf("--into: %v", err)
	}
	t, err := a.resolveRun(ctx, feature)
	if err != nil {
		return err
	}
	st, err := t.state()
	if err != nil {
		return err
	}
	if st.Finished == nil || !st.Finished.Delivered {
		return usageErrorf("the run of %s has not delivered (%s); merging a partial result needs an explicit git merge", t.feature, runPhase(st))
	}
	repo := &gitx.Repo{Runner: gitx.New(t.root)}
	integration := run.IntegrationBranch(t.feature)
	head, err := repo.RevParse(ctx, "refs/heads/"+integration)
	if err != nil {
		return usageErrorf("branch %s is missing: %v", integration, err)
	}
	exists, err := repo.BranchExists(ctx, into)
	if err != nil {
		return err
	}
	if !exists {
		if err := repo.SetBranch(ctx, into, head, ""); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "created %s at %s\n", into, shortID(head))
		return nil
	}
	target, err := repo.RevParse(ctx, "refs/heads/"+into)
	if err != nil {
		return err
	}
	ff := false
	if _, err := repo.Run(ctx, "merge-base", "--is-ancestor", target, head); err == nil {
		ff = true
	}
	// Where is BRANCH checked out? Then git must update that working tree too.
	checkedOut := worktreeOf(ctx, repo, into)
	if checkedOut != "" {
		w := repo.In(checkedOut)
		// Untracked files do not block a merge (git refuses by itself to
		// overwrite one); changes to tracked files do.
		if st, err := w.Run(ctx, "status", "--porcelain", "--untracked-files=no"); err != nil || strings.TrimSpace(st) != "" {
			return usageErrorf("%s is checked out in %s with uncommitted changes; commit or stash them first", into, checkedOut)
		}
		args := []string{"merge", "--no-verify", "--no-edit", "--ff-only", integration}
		if !ff {
			args = []string{"merge", "--no-verify", "--no-edit", "--no-ff", "-m", fmt.Sprintf("Merge %s (zerg)", integration), integration}
		}
		if _, err := w.Run(ctx, args...); err != nil {
			_, _ = w.Run(ctx, "merge", "--abort")
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
		merged, err := repo.In(ws).Merge(ctx, integration, fmt.Sprintf("Merge %s (zerg)", integration))
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

// worktreeOf returns the working tree where branch is checked out, or "".
func worktreeOf(ctx context.Context, repo *gitx.Repo, branch string) string {
	out, err := repo.Run(ctx, "worktree", "list", "--porcelain")
	if err != nil {
		return ""
	}
	path := ""
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			path = p
		}
		if line == "branch refs/heads/"+branch {
			return path
		}
	}
	return ""
}
