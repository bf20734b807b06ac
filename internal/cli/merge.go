package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/delivery"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/journey"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

func init() { register(newMergeCmd) }

// mergeOptions are zerg merge's flags.
type mergeOptions struct {
	into                  string
	create, force, squash bool
}

func newMergeCmd(a *app) *cobra.Command {
	var o mergeOptions
	cmd := &cobra.Command{
		Use:   "merge [FEATURE] --into BRANCH",
		Short: "Merge a delivered integration branch into a branch of yours",
		Long: `Merge zerg/FEATURE/integration into BRANCH: a fast-forward when possible, else a
merge commit; with --squash, one new commit on BRANCH holding the whole change
(the integration branch's commits stay on it, not in BRANCH's history). This
is the only command that writes to your branches, and only when you ask. If
BRANCH is checked out, your working tree must be clean.
FEATURE may be left out when the repository has a single run.

BRANCH must exist: a mistyped name is an error, not a new branch. --create
creates it at the integration head when it does not exist.

When zerg review FEATURE reviewed the integration head and found something
blocking, or could not finish (its answer could not be read), merge refuses
(exit 1) unless --force (.zerg/specs/FEATURE/review.json). A review of an
older head does not count.

When the branch changes protected paths (CI, hook and editor files, and the
instruction files of coding agents such as CLAUDE.md and AGENTS.md, which
only a task security.allow_protected opened can change), merge names them
and asks on a terminal; without one it refuses (exit 1) unless --force.

A merge that conflicts changes nothing: zerg names the conflicting files and
the git commands that resolve them by hand.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.into == "" {
				return usageErrorf("--into BRANCH is required: name the branch to merge into")
			}
			feature := ""
			if len(args) == 1 {
				feature = args[0]
			}
			return runMerge(cmd.Context(), a, feature, o)
		},
	}
	cmd.Flags().StringVar(&o.into, "into", "", "the branch to merge into (required)")
	cmd.Flags().BoolVar(&o.create, "create", false, "create BRANCH at the integration head if it does not exist")
	cmd.Flags().BoolVar(&o.squash, "squash", false, "add the whole change to BRANCH as one commit instead of merging the integration branch's history")
	cmd.Flags().BoolVar(&o.force, "force", false, "merge even though the review of the integration head blocks (a blocking finding or an incomplete review), or the branch changes protected paths")
	return cmd
}

func runMerge(ctx context.Context, a *app, feature string, o mergeOptions) error {
	into, force := o.into, o.force
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
	if v.State != runstate.RunDelivered {
		return usageErrorf("the run of %s has not delivered (it is %s); merging a partial result needs an explicit git merge", t.feature, v.State.Words())
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
	g := delivery.Repo{Repo: repo}
	// What the integration branch changes in protected paths, against
	// where it would land.
	exists, from, err := delivery.Landing(ctx, g, into, head, v.Base)
	if err != nil {
		return err
	}
	prot, err := delivery.FindReaderChanges(ctx, repo, cfg.Protection(), from, head)
	if err != nil {
		return err
	}
	if err := protectedGate(a, t.feature, prot, force); err != nil {
		return err
	}
	plan, err := delivery.Decide(ctx, g, into, integration, head, exists, o.create, o.squash)
	var dirty *delivery.DirtyCheckoutError
	switch {
	case errors.Is(err, delivery.ErrNoBranch):
		return usageErrorf("branch %s does not exist; check the name, or pass --create to create it at the head of %s", into, integration)
	case errors.As(err, &dirty):
		return usageErrorf("%s is checked out in %s with uncommitted changes; commit or stash them first", into, dirty.Dir)
	case err != nil:
		return err
	}
	changed, err := delivery.Apply(ctx, g, plan, t.feature)
	var mergeErr *delivery.MergeError
	var updateErr *delivery.UpdateError
	switch {
	case errors.As(err, &mergeErr):
		return failedf("%w", delivery.MergeFailure(mergeErr.Err, t.feature, into, integration, plan.CheckedOut, o.squash))
	case errors.As(err, &updateErr):
		return failedf("update %s in %s failed; nothing changed: %s", into, plan.CheckedOut, gitx.Message(updateErr.Err))
	case err != nil:
		return err
	}
	if plan.How == delivery.Create {
		fmt.Fprintf(a.stdout, "created %s at %s\n", into, gitx.ShortHash(head))
		return nil
	}
	if !changed {
		if plan.How == delivery.UpToDate {
			fmt.Fprintf(a.stdout, "%s already contains %s; nothing to merge\n", into, integration)
		} else {
			fmt.Fprintf(a.stdout, "%s already holds the change of %s; nothing to merge\n", into, integration)
		}
		return nil
	}
	target := plan.Target
	now, _ := repo.RevParse(ctx, "refs/heads/"+into)
	switch plan.How {
	case delivery.Squash:
		fmt.Fprintf(a.stdout, "squashed %s into one commit on %s: %s → %s; its own commits are not in %s's history, so zerg cleanup --all %s needs --force to remove it\n",
			integration, into, gitx.ShortHash(target), gitx.ShortHash(now), into, t.feature)
	case delivery.FastForward:
		fmt.Fprintf(a.stdout, "fast-forwarded %s to %s: %s → %s\n", into, integration, gitx.ShortHash(target), gitx.ShortHash(now))
	default:
		fmt.Fprintf(a.stdout, "merged %s into %s: %s → %s (a merge commit)\n", integration, into, gitx.ShortHash(target), gitx.ShortHash(now))
	}
	return nil
}

// reviewGate refuses a head whose latest review has a blocking finding,
// unless force; a forced merge says what it overrode.
func reviewGate(a *app, t *runTarget, head string, force bool) error {
	verdict, err := delivery.ReviewVerdict(run.SpecDir(t.root, t.feature), head)
	if err != nil {
		return badInput(err)
	}
	if verdict == nil {
		return nil
	}
	md := filepath.Join(run.SpecDir(".", t.feature), journey.ReviewFile)
	what := fmt.Sprintf("the review of %s at %s has %s (%s)", run.IntegrationBranch(t.feature), gitx.ShortHash(head),
		pluralf(verdict.Blocking, "%d blocking finding", "%d blocking findings"), md)
	next := fmt.Sprintf("fix them and run zerg review %s again (zerg fix %s adds a task for a finding), or merge anyway with --force", t.feature, t.feature)
	if verdict.Incomplete != "" {
		what = fmt.Sprintf("the review of %s at %s is incomplete: %s (%s)", run.IntegrationBranch(t.feature), gitx.ShortHash(head), verdict.Incomplete, md)
		next = fmt.Sprintf("run zerg review %s again, or merge anyway with --force", t.feature)
	}
	if force {
		fmt.Fprintf(a.stderr, "zerg: warning: %s; merging anyway (--force)\n", what)
		return nil
	}
	return failedf("%s; %s", what, next)
}
