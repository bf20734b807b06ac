package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/contextpack"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/textx"
)

func init() { register(newContextCmd) }

func newContextCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "context [FEATURE] TASK",
		Short: "Show the context pack a task's worker would get now, its tokens and what was left out",
		Long: `Print the context pack the worker of TASK would get if it started now: the
task, its files, what its dependencies produced (their files and their workers'
summaries, from the run's records), the spec sections ranked most relevant to it,
and the security rules of its languages, within context.token_budget. Then its
size in tokens (about 4 characters per token) and everything left out, with why:
each spec section with its score, each rule and summary that did not fit.
A worker's attempt records the same account as context.json beside prompt.md.
FEATURE may be left out when the repository has one run or one feature.
See docs/context.md.`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			feature, taskID, paths, err := a.resolveContextArgs(cmd.Context(), args)
			if err != nil {
				return err
			}
			pack, err := contextPackNow(paths, taskID)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, struct {
					Feature string `json:"feature"`
					contextpack.Pack
					Text string `json:"text"`
				}{feature, pack, pack.Text})
			}
			a.printPack(feature, pack)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the pack and its account as JSON")
	return cmd
}

// resolveContextArgs reads "[FEATURE] TASK" (run.FeatureTask): with one
// argument the feature is the repository's only run, or else its only
// feature with a task graph.
func (a *app) resolveContextArgs(ctx context.Context, args []string) (string, string, run.Paths, error) {
	cwd, err := a.getwd()
	if err != nil {
		return "", "", run.Paths{}, err
	}
	paths, task, err := run.FeatureTask(ctx, cwd, args, "zerg context FEATURE TASK")
	return paths.Feature, task, paths, err
}

// contextPackNow builds the pack the task would get if its next attempt
// started now: the current graph and spec, the verified rules cache, the
// dependencies' records and, when the run holds one, the diagnosis of its
// last failure.
func contextPackNow(paths run.Paths, taskID string) (contextpack.Pack, error) {
	rep, err := run.LoadGraph(paths.Graph, run.GraphLoad{Root: paths.Root})
	if err != nil {
		return contextpack.Pack{}, badInput(err)
	}
	if rep.Graph == nil {
		return contextpack.Pack{}, usageErrorf("%s is not a task graph; zerg graph validate %s shows why", paths.Graph, paths.Feature)
	}
	task := rep.Graph.Task(taskID)
	if task == nil {
		var ids []string
		for _, t := range rep.Graph.Tasks {
			ids = append(ids, t.ID)
		}
		return contextpack.Pack{}, run.UnknownTask(taskID, paths.Feature, ids)
	}
	cfg, err := loadProjectConfig(paths.Root)
	if err != nil {
		return contextpack.Pack{}, err
	}
	files := attempt.ContextFiles{SpecDir: paths.SpecDir, Attempts: paths.AttemptRecords(), Budget: cfg.Context.TokenBudget}
	if r := cfg.SecurityRules; !r.Enabled {
		files.NoRules = "security_rules.enabled is false"
	} else {
		dir := security.RulesCacheDir(paths.Root, r.Commit)
		_, err := security.VerifyRules(dir, r.Checksum(r.Commit))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			files.NoRules = "the security rules are not fetched (zerg rules update); workers get none"
		case err != nil:
			files.NoRules = fmt.Sprintf("the rules cache fails verification (%v); zerg rush would stop", err)
		default:
			files.RulesDir = dir
		}
	}
	in := attempt.Input{Feature: paths.Feature, Graph: rep.Graph, Task: task,
		Context: attempt.LoadContext(files, rep.Graph, task)}
	if _, err := os.Stat(paths.Events); err == nil {
		if _, st, err := run.Inspect(paths); err == nil && st != nil {
			in.Previous = st.Task(taskID).Diagnosis
		}
	}
	return attempt.Pack(in), nil
}

// printPack prints the pack's text, then its size and what was left out.
// The text holds the workers' summaries and the diagnosis of a failure, so
// it goes through term.Clean.
func (a *app) printPack(feature string, p contextpack.Pack) {
	w := a.stdout
	fmt.Fprintln(w, strings.TrimRight(term.Clean(p.Text), "\n"))
	fmt.Fprintln(w)
	var parts []string
	for _, part := range p.Parts {
		parts = append(parts, fmt.Sprintf("%s %d", part.Name, part.Tokens))
	}
	over := ""
	if p.OverBudget {
		over = " (over: the task's own text is more than the budget)"
	}
	fmt.Fprintln(w, a.paint(ansiBold, fmt.Sprintf("== context pack of %s (%s): %d of %d tokens%s, ≈%d characters per token",
		p.Task, feature, p.Tokens, p.Budget, over, p.CharsPerToken)))
	fmt.Fprintf(w, "parts: %s\n", strings.Join(parts, ", "))
	in := 0
	for _, s := range p.Sections {
		if s.Included {
			in++
		}
	}
	fmt.Fprintf(w, "spec: %d of %d sections in\n", in, len(p.Sections))
	for _, s := range p.Sections {
		mark := "-"
		if s.Included {
			mark = "+"
		}
		fmt.Fprintf(w, "  %s %6.2f  %s (%d tokens): %s\n", mark, s.Score, term.Clean(s.Name), s.Tokens, s.Reason)
	}
	for _, d := range p.Dependencies {
		sum := "no summary (no successful attempt recorded)"
		if d.Summary {
			sum = fmt.Sprintf("summary of attempt %d", d.Attempt)
		}
		fmt.Fprintf(w, "dependency %s: %s; %s\n", d.ID, strings.Join(textx.OrList(d.Files, "no files"), ", "), sum)
	}
	if p.Rules.Missing != "" {
		fmt.Fprintf(w, "rules: none: %s\n", term.Clean(p.Rules.Missing))
	} else {
		fmt.Fprintf(w, "rules: %d of %d rules in (%d tokens) from %s\n", p.Rules.Kept, p.Rules.Rules, p.Rules.Tokens, strings.Join(p.Rules.Files, ", "))
	}
	var left []contextpack.Omission
	for _, o := range p.Omitted {
		if o.Kind != "section" { // the sections are all listed above
			left = append(left, o)
		}
	}
	slices.SortStableFunc(left, func(x, y contextpack.Omission) int { return strings.Compare(x.Kind, y.Kind) })
	if len(left) > 0 {
		fmt.Fprintln(w, "left out:")
		for _, o := range left {
			fmt.Fprintf(w, "  %s %s (%d tokens): %s\n", o.Kind, term.Clean(o.Name), o.Tokens, o.Reason)
		}
	}
}
