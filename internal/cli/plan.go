package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/textx"

	"github.com/zergrush/zerg/internal/journey"
)

func init() { register(newPlanCmd) }

type planFlags struct {
	journeyFlags
	from string
}

func newPlanCmd(a *app) *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan FEATURE",
		Short: "Discover a feature's requirements with Claude and write requirements.md",
		Long: `Requirements discovery. On a terminal, opens an interactive Claude Code session
whose system prompt makes it ask its questions before it writes anything; with
--from FILE (an idea in a few lines) it runs without questions and lists them
as open questions instead. Either way the result is
.zerg/specs/FEATURE/requirements.md, ending with its open questions; an existing
one is given to the session to revise.

The session runs in a private clone of HEAD: it can read and search the
repository and write only that one file (no Bash). Its model is models.plan
(default: models.implement). --rehearse plays the model from the scenario
(.zerg/specs/FEATURE/scenario.yaml or --scenario), matching the prompt's first
line "Plan FEATURE:".

Exit status: 0 written, 1 the session failed or wrote nothing (nothing
written), 2 bad input (nothing written).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlan(cmd.Context(), a, args[0], f)
		},
	}
	cmd.Flags().StringVar(&f.from, "from", "", "plan without questions from the idea in FILE")
	cmd.Flags().BoolVar(&f.rehearse, "rehearse", false, "use the scripted model (zerg mockapi) instead of the real API")
	cmd.Flags().StringVar(&f.scenario, "scenario", "", "scenario for --rehearse (default .zerg/specs/FEATURE/scenario.yaml)")
	return cmd
}

// stdinIsTerminal is a seam for tests.
var stdinIsTerminal = func() bool { return term.IsTerminal(int(os.Stdin.Fd())) }

func runPlan(ctx context.Context, a *app, feature string, f planFlags) error {
	j, err := openJourney(ctx, a, feature, f.journeyFlags)
	if err != nil {
		return err
	}
	defer j.close()
	var idea string
	if f.from != "" {
		b, err := os.ReadFile(f.from)
		if err != nil {
			return usageErrorf("--from %s: cannot read the idea: %v", f.from, textx.FirstLine(err.Error()))
		}
		if idea = strings.TrimSpace(string(b)); idea == "" {
			return usageErrorf("--from %s: the file is empty; write the idea in a few lines", f.from)
		}
	} else if !stdinIsTerminal() {
		return usageErrorf("stdin is not a terminal: pass --from FILE with the idea to plan %s without questions", feature)
	}
	head, err := j.head(ctx)
	if err != nil {
		return err
	}
	model, err := j.connect(ctx, f.journeyFlags, f.from != "")
	if err != nil {
		return err
	}
	ws, err := j.clone(ctx, head)
	if err != nil {
		return err
	}
	dest := filepath.Join(j.specDir, journey.RequirementsFile)
	revise := fsx.IsFile(dest)
	if revise {
		if err := copyIn(dest, ws, journey.RequirementsFile); err != nil {
			return err
		}
	}
	before, _ := os.ReadFile(journey.DraftPath(ws, journey.RequirementsFile))
	s := journey.PlanSession(feature, ws, idea, j.cfg.Models.For("plan"), revise)
	var cost float64
	if f.from != "" {
		ans, err := model.Run(ctx, s)
		if err != nil {
			return sessionFailed("plan "+feature, err)
		}
		cost = ans.CostUSD
	} else {
		s.System = journey.PlanSystem
		if err := runInteractive(ctx, a, model, s); err != nil {
			return sessionFailed("plan "+feature, err)
		}
	}
	after, err := os.ReadFile(journey.DraftPath(ws, journey.RequirementsFile))
	if err != nil || strings.TrimSpace(string(after)) == "" {
		return failedf("plan %s: the session wrote no %s; nothing written (run zerg plan %s again)", feature, journey.RequirementsFile, feature)
	}
	if revise && string(after) == string(before) {
		fmt.Fprintf(a.stdout, "%s: unchanged\n", j.rel(dest))
		return nil
	}
	if err := journey.CopyDrafts(ws, j.specDir, journey.RequirementsFile); err != nil {
		return err
	}
	qs, hasSection := journey.OpenQuestions(string(after))
	fmt.Fprintf(a.stdout, "wrote %s", j.rel(dest))
	if f.from != "" {
		fmt.Fprintf(a.stdout, " (%s)", fmtUSD(cost))
	}
	fmt.Fprintln(a.stdout)
	switch {
	case !hasSection:
		fmt.Fprintln(a.stdout, "it has no \"Open questions\" section")
	case len(qs) == 0:
		fmt.Fprintln(a.stdout, "open questions: none")
	default:
		fmt.Fprintf(a.stdout, "open questions (%d):\n", len(qs))
		for _, q := range qs {
			fmt.Fprintf(a.stdout, "  - %s\n", q)
		}
	}
	fmt.Fprintf(a.stdout, "next: answer them in the file, then zerg design %s\n", feature)
	return nil
}

// runInteractive runs the plan session on the terminal with the same hook
// policy and tools as the non-interactive one.
func runInteractive(ctx context.Context, a *app, m *journey.Claude, s journey.Session) error {
	sp := m.Base
	sp.Workdir = s.Workdir
	sp.AttemptDir = filepath.Join(m.StateDir, s.Name)
	sp.Prompt = s.Prompt
	sp.AppendSystemPrompt = s.System
	sp.Tools = s.Tools
	sp.Model = s.Model
	sp.Hook.AllowedPaths = s.Writable
	// The person's own session on their terminal, with their HOME (and its
	// login): it runs as they do, unlike the sessions zerg runs unattended.
	sp.RunAs = nil
	if !sp.API.HasCredential() {
		sp.API = claude.APIFromEnv()
	}
	cmd, err := claude.Interactive(ctx, sp)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "zerg: plan: Claude asks its questions, then writes %s/%s; leave the session (/exit) when it has\n", journey.DraftDir, journey.RequirementsFile)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the interactive session: %w", err)
	}
	return nil
}
