package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/journey"
	"github.com/zergrush/zerg/internal/spec"
	"github.com/zergrush/zerg/internal/textx"
)

func init() { register(newDesignCmd) }

func newDesignCmd(a *app) *cobra.Command {
	var f journeyFlags
	cmd := &cobra.Command{
		Use:   "design FEATURE",
		Short: "Write the design and the task graph from requirements.md, repaired until it validates",
		Long: `Claude reads .zerg/specs/FEATURE/requirements.md and the repository (a private
clone of HEAD) and writes design.md and task-graph.json: tasks with levels, the
files each owns, verification commands and estimates. zerg validates the graph
as zerg graph validate does and, while it has errors, runs a new session told
every error, at most design.max_rounds sessions. The sessions can write only
those two files.

On success both files are in .zerg/specs/FEATURE and the levels and the
ownership table are printed. --rehearse plays the model from the scenario
(.zerg/specs/FEATURE/scenario.yaml or --scenario), whose tasks match the
prompts' first lines "Design FEATURE round N:".

Exit status: 0 valid graph, 1 still invalid after the last round (both files
are written, the errors printed) or a session failed (nothing written), 2 bad
input (nothing written).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDesign(cmd.Context(), a, args[0], f)
		},
	}
	cmd.Flags().BoolVar(&f.rehearse, "rehearse", false, "use the scripted model (zerg mockapi) instead of the real API")
	cmd.Flags().StringVar(&f.scenario, "scenario", "", "scenario for --rehearse (default .zerg/specs/FEATURE/scenario.yaml)")
	return cmd
}

func runDesign(ctx context.Context, a *app, feature string, f journeyFlags) error {
	j, err := openJourney(ctx, a, feature, f)
	if err != nil {
		return err
	}
	defer j.close()
	reqPath := filepath.Join(j.specDir, journey.RequirementsFile)
	req, err := os.ReadFile(reqPath)
	if err != nil || strings.TrimSpace(string(req)) == "" {
		return usageErrorf("%s: no requirements for %s; write them with zerg plan %s (or by hand), then design", j.rel(reqPath), feature, feature)
	}
	head, err := j.head(ctx)
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
	if err := copyIn(reqPath, ws, journey.RequirementsFile); err != nil {
		return err
	}
	rounds := j.cfg.Design.MaxRounds
	res, err := journey.Design(ctx, model, journey.DesignInput{
		Feature: feature, Workdir: ws, Requirements: string(req), MaxRounds: rounds,
		Model: j.cfg.Models.For("design"), Protection: j.cfg.Protection(),
		Progress: func(r journey.Round) {
			if r.Valid() {
				fmt.Fprintf(a.stderr, "zerg: design round %d of %d: the task graph is valid\n", r.N, rounds)
				return
			}
			fmt.Fprintf(a.stderr, "zerg: design round %d of %d: %s\n", r.N, rounds, pluralf(len(r.Errors), "%d error", "%d errors"))
			for _, e := range r.Errors {
				fmt.Fprintf(a.stderr, "  %s\n", e)
			}
		},
	})
	if err != nil {
		return sessionFailed("design "+feature, err)
	}
	// Whatever the graph's state, the files the sessions wrote are the
	// result: an invalid graph is kept for the user to finish by hand.
	var wrote []string
	for _, n := range []string{journey.DesignFile, journey.GraphFile} {
		if _, err := os.Stat(journey.DraftPath(ws, n)); err == nil {
			if err := journey.CopyDrafts(ws, j.specDir, n); err != nil {
				return err
			}
			wrote = append(wrote, j.rel(filepath.Join(j.specDir, n)))
		}
	}
	last := res.Last()
	if !res.Valid() {
		graph := j.rel(filepath.Join(j.specDir, journey.GraphFile))
		for _, e := range last.Errors {
			fmt.Fprintf(a.stderr, "%s: error: %s\n", graph, e)
		}
		where := "nothing was written"
		if len(wrote) > 0 {
			where = "wrote " + strings.Join(wrote, " and ")
		}
		return failedf("%s: the task graph is still invalid after %s (%s; %s); fix it by hand and check it with zerg graph validate %s, or run zerg design %s again",
			feature, pluralf(len(res.Rounds), "%d round", "%d rounds"), pluralf(len(last.Errors), "%d error", "%d errors"), where, feature, feature)
	}
	scenario := filepath.Join(j.specDir, "scenario.yaml")
	if _, err := os.Stat(scenario); err != nil {
		scenario = ""
	} else {
		scenario = j.rel(scenario)
	}
	printDesign(a, feature, res, wrote, scenario)
	return nil
}

// printDesign shows the valid graph: its levels and who owns which files.
// scenario is the feature's scripted model, "" when it has none: a
// rehearsal is suggested only when there is one to rehearse with.
func printDesign(a *app, feature string, res journey.DesignResult, wrote []string, scenario string) {
	w := a.stdout
	g := res.Report.Graph
	an := spec.Analyze(g, 1)
	var cost float64
	for _, r := range res.Rounds {
		cost += r.CostUSD
	}
	fmt.Fprintf(w, "%s: valid task graph after %s (%s): %s in %s\n", feature,
		pluralf(len(res.Rounds), "%d round", "%d rounds"), fmtUSD(cost), pluralf(an.Tasks, "%d task", "%d tasks"), pluralf(len(an.Levels), "%d level", "%d levels"))
	for _, p := range wrote {
		fmt.Fprintf(w, "  wrote %s\n", p)
	}
	fmt.Fprintln(w)
	for _, li := range an.Levels {
		fmt.Fprintf(w, "level %d: %s\n", li.Level, strings.Join(li.Tasks, ", "))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nLEVEL\tTASK\tOWNS\tVERIFICATION\tESTIMATE")
	for _, li := range an.Levels {
		for _, id := range li.Tasks {
			t := g.Task(id)
			v := "-"
			if t.Verification != nil && t.Verification.Command != "" {
				v = textx.Truncate(t.Verification.Command, 40)
			}
			est := "-"
			if t.HasEstimate {
				est = fmtMinutes(t.EstimateMinutes)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", li.Level, id, listOrDash(t.Files.Owned(), 4), v, est)
		}
	}
	tw.Flush()
	for _, warn := range res.Report.Warnings {
		fmt.Fprintf(a.stderr, "zerg: warning: %s\n", warn)
	}
	if scenario != "" {
		fmt.Fprintf(w, "\nnext: zerg check %s, then zerg rush %s (or rehearse it with %s: zerg rush %s --rehearse)\n", feature, feature, scenario, feature)
		return
	}
	// A rehearsal needs a scenario, which design does not write.
	fmt.Fprintf(w, "\nnext: zerg check %s, then zerg rush %s\n", feature, feature)
}
