package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/journey"
	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/spec"
)

func init() { register(newFixCmd) }

type fixFlags struct {
	files    []string
	verify   string
	noResume bool
	rush     rushFlags
}

func newFixCmd(a *app) *cobra.Command {
	var f fixFlags
	cmd := &cobra.Command{
		Use:   "fix FEATURE [FINDING...]",
		Short: "Add a task for review findings to the feature's graph and resume the run to do it",
		Long: `Turn findings of zerg review FEATURE into work: zerg fix adds one task per file
the findings name to .zerg/specs/FEATURE/task-graph.json (or --graph), at a new
last level, owning that file, depending on the tasks that own it and verified
by their verification commands (--verify replaces them), with the findings'
text as its description; then it resumes the run (zerg rush FEATURE --resume),
which runs the new task and merges it into zerg/FEATURE/integration. The
result is a new head: review it again with zerg review FEATURE.

FINDING is the number zerg review prints before a finding (the order of
review.json); without one, every blocking finding a worker can fix. The review
must be of the integration branch's current head. Findings no worker can fix
are refused when named, skipped (and listed) otherwise: the review's own (what
it could not read), changes to protected paths, and findings with no file
(pass --files for the files the fix needs, a failing gate's for instance).

--no-resume only adds the tasks: resume yourself with zerg rush FEATURE
--resume. The task is an ordinary task of the graph: edit it before resuming
if you want, or remove it before it runs.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var nums []int
			for _, s := range args[1:] {
				n, err := strconv.Atoi(strings.TrimPrefix(s, "#"))
				if err != nil || n < 1 {
					return usageErrorf("%q is not a finding number; give the numbers zerg review printed (1, 2, …)", s)
				}
				nums = append(nums, n)
			}
			return runFix(cmd.Context(), a, args[0], nums, f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.files, "files", nil, "a path the fix task owns besides the findings' files (repeatable)")
	fl.StringVar(&f.verify, "verify", "", "the fix task's verification command (default: the verification of the tasks that own its files)")
	fl.BoolVar(&f.noResume, "no-resume", false, "add the tasks to the graph and stop; resume with zerg rush FEATURE --resume")
	fl.StringVar(&f.rush.graph, "graph", "", "task graph file (default .zerg/specs/FEATURE/task-graph.json)")
	fl.BoolVar(&f.rush.rehearse, "rehearse", false, "resume with the scripted model (zerg mockapi) instead of the real API")
	fl.StringVar(&f.rush.scenario, "scenario", "", "scenario for --rehearse (default .zerg/specs/FEATURE/scenario.yaml)")
	fl.BoolVarP(&f.rush.yes, "yes", "y", false, "resume without asking, even above the budget's confirmation threshold")
	fl.BoolVar(&f.rush.plain, "plain", false, "print progress lines instead of the live view on a terminal")
	return cmd
}

func runFix(ctx context.Context, a *app, feature string, nums []int, f fixFlags) error {
	if !f.rush.rehearse && f.rush.scenario != "" {
		return usageErrorf("--scenario needs --rehearse")
	}
	t, err := a.resolveRun(ctx, feature)
	if err != nil {
		return err
	}
	cwd, err := a.getwd()
	if err != nil {
		return err
	}
	cfg, err := loadProjectConfig(t.root)
	if err != nil {
		return err
	}
	specDir := run.SpecDir(t.root, t.feature)
	review, err := journey.LoadReview(specDir)
	if err != nil {
		return badInput(err)
	}
	integration := run.IntegrationBranch(t.feature)
	if review == nil {
		return usageErrorf("%s has no review; run zerg review %s first", t.feature, t.feature)
	}
	repo := gitx.New(t.root)
	head, err := repo.RevParse(ctx, "refs/heads/"+integration)
	if err != nil {
		return usageErrorf("branch %s is missing: %v", integration, err)
	}
	if review.Head != head {
		return usageErrorf("the review in %s is of %s, and %s is now at %s: run zerg review %s again, then fix its findings",
			pathx.Short(cwd, filepath.Join(specDir, journey.ReviewJSONFile)), gitx.ShortHash(review.Head), integration, gitx.ShortHash(head), t.feature)
	}
	graphFile, err := graphFlag(cwd, f.rush.graph, t.paths, t.feature)
	if err != nil {
		return err
	}
	opts := run.GraphLoadFor(t.root, cfg, nil)
	r, err := run.LoadGraph(graphFile, opts)
	if err != nil {
		return badInput(err)
	}
	if !r.Valid() {
		return usageErrorf("%s is not a valid task graph (%s); fix it first (zerg graph validate %s)", pathx.Short(cwd, graphFile), r.Errors[0].String(), t.feature)
	}
	prot := cfg.Protection()
	tasks, skipped, err := journey.PlanFixes(review, nums, r.Graph, journey.FixOptions{
		Files: f.files, Verify: f.verify,
		Exists: func(p string) bool {
			_, err := repo.Run(ctx, "cat-file", "-e", head+":"+p)
			return err == nil
		},
		Protected: func(p string) bool {
			_, ok := prot.Match(p)
			return ok && !prot.Opening().Opens(p)
		},
	})
	if err != nil {
		return usageErrorf("%s: %v", t.feature, err)
	}
	docs := make([]any, len(tasks))
	for i, ft := range tasks {
		docs[i] = ft.Doc()
	}
	data, err := spec.AppendTasks(r.Graph.Raw, docs...)
	if err != nil {
		return badInput(fmt.Errorf("%s: %v", pathx.Short(cwd, graphFile), err))
	}
	if check := run.CheckGraph(data, opts); !check.Valid() {
		return usageErrorf("%s: the graph with the fix would not be valid: %s; write the task yourself", t.feature, check.Errors[0].String())
	}
	if err := fsx.WriteFileAtomic(graphFile, data, 0o644); err != nil {
		return err
	}
	for _, p := range skipped {
		fmt.Fprintf(a.stderr, "zerg: fix: finding %d skipped: %s\n", p.Number, p.Why)
	}
	for _, ft := range tasks {
		owns := append(append([]string{}, ft.Modify...), ft.Create...)
		fmt.Fprintf(a.stdout, "added task %s (level %d) to %s for %s: owns %s, verified by `%s`\n", ft.ID, ft.Level, pathx.Short(cwd, graphFile),
			ft.FindingWords(), strings.Join(owns, ", "), ft.Verify)
	}
	if _, err := repo.Run(ctx, "ls-files", "--error-unmatch", "--", graphFile); err == nil {
		fmt.Fprintf(a.stderr, "zerg: fix: %s is a file of your checkout and now differs: commit it (zerg merge needs the checked-out branch clean)\n", pathx.Short(cwd, graphFile))
	}
	if f.noResume {
		fmt.Fprintf(a.stdout, "next: zerg rush %s --resume runs it; then zerg review %s\n", t.feature, t.feature)
		return nil
	}
	fmt.Fprintf(a.stderr, "zerg: fix: resuming the run of %s to run %s (zerg rush %s --resume)\n", t.feature, map[bool]string{true: "the new task", false: fmt.Sprintf("the %d new tasks", len(tasks))}[len(tasks) == 1], t.feature)
	rf := f.rush
	rf.resume = true
	if err := runRush(ctx, a, t.feature, rf, func(string) bool { return false }); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "next: zerg review %s reviews the new head\n", t.feature)
	return nil
}
