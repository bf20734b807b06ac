package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/delivery"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/journey"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/textx"
)

func init() { register(newReviewCmd) }

func newReviewCmd(a *app) *cobra.Command {
	var f journeyFlags
	cmd := &cobra.Command{
		Use:   "review FEATURE",
		Short: "Review the integration branch: gates, secret scan, security rules and a Claude review",
		Long: `Review zerg/FEATURE/integration in a private clone of its head (never your
checkout): run the gates of .zerg/config.yaml, scan the diff against the run's
base for secrets, name the protected paths and the instruction files of coding
agents (CLAUDE.md, AGENTS.md, …) it changes, list the security rules of the
languages touched, and have Claude review the whole diff (read-only tools;
over 60 KB in parts, each its own session, at most 8: what no part holds is a
blocking "not fully reviewed" finding). Findings are graded blocking, major,
minor or info, numbered for zerg fix, and written to
.zerg/specs/FEATURE/review.md, with review.json for programs. An answer zerg
cannot read is a review error, never a lesser finding. zerg merge refuses a
head whose review has a blocking finding or an error unless --force.

A failing required gate and a secret are blocking; a failing optional gate
is major. Gates run in the isolation of the run's own gates: in sandbox mode
in a sandbox of a worker user with the toolchains and no network, in
container mode in a container of the project's image with no network, in
subprocess mode as the worker user, in tasks mode as you. --rehearse plays
the model from the scenario, matching the prompt's first line "Review
FEATURE:".

Exit status: 0 no blocking finding, 1 a blocking finding or a review error
(or the review session failed: nothing written), 2 bad input (nothing
written).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReview(cmd.Context(), a, args[0], f)
		},
	}
	cmd.Flags().BoolVar(&f.rehearse, "rehearse", false, "use the scripted model (zerg mockapi) instead of the real API")
	cmd.Flags().StringVar(&f.scenario, "scenario", "", "scenario for --rehearse (default .zerg/specs/FEATURE/scenario.yaml)")
	return cmd
}

func runReview(ctx context.Context, a *app, feature string, f journeyFlags) error {
	j, err := openJourney(ctx, a, feature, f)
	if err != nil {
		return err
	}
	defer j.close()
	branch := run.IntegrationBranch(feature)
	head, err := j.repo.RevParse(ctx, "refs/heads/"+branch)
	if err != nil {
		return usageErrorf("branch %s does not exist; deliver %s first with zerg rush %s", branch, feature, feature)
	}
	base, err := delivery.ReviewBase(ctx, delivery.Repo{Repo: j.repo}, j.root, j.feature, head)
	if err != nil {
		return err
	}
	model, err := j.connect(ctx, f, true)
	if err != nil {
		return err
	}
	ws, err := j.clone(ctx, head)
	if err != nil {
		return err
	}
	diff, err := j.repo.DiffCommits(ctx, base, head)
	if err != nil {
		return err
	}
	names, err := j.repo.Run(ctx, "diff", "--name-only", "-z", "--no-renames", base, head, "--")
	if err != nil {
		return err
	}
	changed := strings.FieldsFunc(names, func(r rune) bool { return r == 0 })

	sum := &journey.Summary{Version: journey.SummaryVersion, Feature: feature, Branch: branch, Head: head, Base: base, Time: time.Now().UTC()}
	add := func(fs ...journey.Finding) { sum.Findings = append(sum.Findings, fs...) }

	// Gates, on the head, in the isolation the run's own gates get.
	gates, err := reviewGates(ctx, a, j, feature, head)
	if err != nil {
		return err
	}
	for _, g := range gates {
		sum.Checks = append(sum.Checks, "gate:"+g.Gate.Name)
		add(gateFinding(g.Gate, gateResult{g.Exit, g.Output}))
	}

	// Secrets in the lines the branch adds.
	scanner, err := newSecretScanner(j.root)
	if err != nil {
		return err
	}
	sum.Checks = append(sum.Checks, "secrets")
	for _, s := range scanner.ScanDiff(diff) {
		add(journey.Finding{Severity: journey.Blocking, Source: "secrets", File: s.File, Line: s.Line,
			Title:  fmt.Sprintf("possible secret (%s): %s", s.RuleID, s.Description),
			Detail: "Remove it from the branch (and revoke it if it is real), or list a false positive in " + security.SecretsAllowFile + "."})
	}

	// Protected paths a task was let change (security.allow_protected),
	// and the instruction files of coding agents any task may change.
	sum.Checks = append(sum.Checks, "protected")
	prot, err := delivery.FindReaderChanges(ctx, j.repo, j.cfg.Protection(), base, head)
	if err != nil {
		return err
	}
	add(prot.Findings()...)

	// Security rules of the languages touched.
	var ruleNames []string
	if j.cfg.SecurityRules.Enabled {
		sum.Checks = append(sum.Checks, "rules")
		var fnd journey.Finding
		fnd, ruleNames = rulesFinding(j.root, j.cfg.SecurityRules, changed)
		add(fnd)
	}

	// Claude's review of the diff: all of it, in parts when it is large,
	// or a blocking finding saying what no prompt held.
	sum.Checks = append(sum.Checks, "claude")
	plan := journey.PlanReview(diff, journey.MaxPromptDiff, journey.MaxReviewParts)
	add(plan.Findings()...)
	parts := max(len(plan.Parts), 1)
	sum.Parts = parts
	fmt.Fprintf(a.stderr, "zerg: review: Claude reviews %s%s\n", pluralf(len(plan.Files), "%d changed file", "%d changed files"),
		map[bool]string{true: fmt.Sprintf(" in %d parts", parts), false: ""}[parts > 1])
	for part := 1; part <= parts; part++ {
		name := "review"
		if part > 1 {
			name = fmt.Sprintf("review-%d", part)
		}
		ans, err := model.Run(ctx, journey.Session{Name: name, Workdir: ws,
			Prompt: journey.ReviewPrompt(feature, base, head, plan, part, ruleNames),
			System: journey.ReviewSystem, Tools: journey.ReaderTools, Model: j.cfg.Models.For("review")})
		if err != nil {
			return sessionFailed("review "+feature, err)
		}
		sum.CostUSD += ans.CostUSD
		fs, err := journey.ParseModelFindings(ans.Text)
		if err != nil {
			where := ""
			if parts > 1 {
				where = fmt.Sprintf("part %d of %d: ", part, parts)
			}
			sum.Errors = append(sum.Errors, fmt.Sprintf("%s%s: %v (the answer began %q)", where, unreadableAnswer, err,
				textx.Clip(textx.OneLine(term.Clean(ans.Text)), 200)))
			continue
		}
		add(fs...)
	}

	journey.Aggregate(sum)
	if err := journey.WriteReview(j.specDir, sum); err != nil {
		return err
	}
	printReview(a, j, sum)
	reviewMD := j.rel(filepath.Join(j.specDir, journey.ReviewFile))
	if len(sum.Errors) > 0 {
		return failedf("%s: %s; the review of %s is incomplete and zerg merge refuses this head without --force: run zerg review %s again (%s)",
			feature, unreadableAnswer, gitx.ShortHash(head), feature, reviewMD)
	}
	if sum.Blocking {
		return failedf("%s: %s at %s (%s); fix them (zerg fix %s adds a task for each and resumes the run) and review again; zerg merge refuses this head without --force",
			feature, pluralf(sum.Counts[journey.Blocking], "%d blocking finding", "%d blocking findings"), gitx.ShortHash(head), reviewMD, feature)
	}
	return nil
}

// unreadableAnswer is the review error of an answer zerg could not read:
// the review did not happen, so it blocks like a blocking finding.
const unreadableAnswer = "the review's answer could not be read"

type gateResult struct {
	exit int
	out  string
}

// reviewGates runs the gates on head the way zerg rush does: sandboxed
// with the toolchains in sandbox mode, as the worker user in subprocess
// mode (code the workers wrote never runs as root or unconfined).
func reviewGates(ctx context.Context, a *app, j *journeyCtx, feature, head string) ([]run.GateResult, error) {
	if len(j.cfg.Gates) == 0 {
		return nil, nil
	}
	opts := run.Options{Root: j.root, Feature: feature, Config: j.cfg, Progress: a.stderr}
	return run.RunGates(ctx, opts, checkWorker(&opts), head, func(s string) { fmt.Fprintf(a.stderr, "zerg: review: %s\n", s) })
}

// gateFinding grades a gate's result: a failing required gate blocks.
func gateFinding(g config.Gate, r gateResult) journey.Finding {
	if r.exit == 0 {
		return journey.Finding{Severity: journey.Info, Source: "gate", Title: fmt.Sprintf("gate %s passed", g.Name)}
	}
	sev := journey.Major
	if g.Required {
		sev = journey.Blocking
	}
	out := strings.TrimSpace(r.out)
	if len(out) > 2000 {
		out = "…" + out[len(out)-2000:]
	}
	return journey.Finding{Severity: sev, Source: "gate", Title: fmt.Sprintf("gate %s failed (exit %d): %s", g.Name, r.exit, g.Command), Detail: out}
}

// rulesFinding lists the security rules that apply to the changed files'
// languages (an info finding) and returns their file names for the model.
func rulesFinding(root string, rc config.SecurityRules, changed []string) (journey.Finding, []string) {
	dest := security.RulesCacheDir(root, rc.Commit)
	if _, err := security.VerifyCache(dest, rc.Commit, rc.Checksum(rc.Commit)); err != nil {
		return journey.Finding{Severity: journey.Info, Source: "rules", Title: "security rules not checked: " + err.Error()}, nil
	}
	files, err := security.RulesFor(dest, changed)
	if err != nil {
		return journey.Finding{Severity: journey.Info, Source: "rules", Title: "security rules not checked: " + err.Error()}, nil
	}
	var names, lines []string
	for _, f := range files {
		names = append(names, f.Path)
		lines = append(lines, fmt.Sprintf("%s (%s: %s)", f.Path, f.Kind, strings.Join(f.For, ", ")))
	}
	return journey.Finding{Severity: journey.Info, Source: "rules",
		Title:  fmt.Sprintf("%s apply to the files changed; the review was given their names", pluralf(len(files), "%d security rule file", "%d security rule files")),
		Detail: strings.Join(lines, "\n")}, names
}

// printReview is the summary on stdout: counts, then every finding above
// info, numbered for zerg fix.
func printReview(a *app, j *journeyCtx, s *journey.Summary) {
	var counts []string
	for _, sev := range journey.Severities {
		counts = append(counts, fmt.Sprintf("%d %s", s.Counts[sev], sev))
	}
	fmt.Fprintf(a.stdout, "%s: review of %s at %s: %s\n", s.Feature, s.Branch, gitx.ShortHash(s.Head), strings.Join(counts, ", "))
	for _, e := range s.Errors {
		fmt.Fprintf(a.stdout, "  review error: %s\n", e)
	}
	for i, f := range s.Findings {
		if f.Severity == journey.Info {
			continue
		}
		where := ""
		if f.File != "" {
			where = " " + f.File
			if f.Line > 0 {
				where += fmt.Sprintf(":%d", f.Line)
			}
		}
		// The number is the finding's place in review.json: zerg fix
		// FEATURE N takes it.
		fmt.Fprintf(a.stdout, "  %d. %s [%s]%s: %s\n", i+1, f.Severity, f.Source, where, f.Title)
	}
	fmt.Fprintf(a.stdout, "wrote %s and %s\n", j.rel(filepath.Join(j.specDir, journey.ReviewFile)), j.rel(filepath.Join(j.specDir, journey.ReviewJSONFile)))
}
