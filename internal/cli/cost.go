package cli

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/picture"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/textx"
)

func init() { register(newCostCmd) }

func newCostCmd(a *app) *cobra.Command {
	var asJSON bool
	var format, output, chart string
	cmd := &cobra.Command{
		Use:   "cost [FEATURE]",
		Short: "Show what a run spent, per task, level and model, against its projection",
		Long: `Show a run's spending from its log: per task, level and model the attempts,
the input, output, cache-read and cache-write tokens and the dollars, next to the
projection the run recorded when it started (low, expected, high). The total is
the sum of the attempts in the log. FEATURE may be left out when the repository
has one run. docs/cost.md explains the projection.

--format svg or png draws the cost as charts instead, without a browser: per
task, level and model (actual next to projected) and the spending over time
against the projection, tiled in one image, or only the one --chart names
(tasks, levels, models, time). It goes to stdout or to --output.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			pf, err := pictureFormat(format, "svg", "png")
			if err != nil {
				return err
			}
			if pf != "" && asJSON {
				return usageErrorf("--json and --format %s: choose one", format)
			}
			if (output != "" || chart != "") && pf == "" {
				return usageErrorf("--output and --chart are for a chart: add --format svg or png")
			}
			if chart != "" && !slices.Contains(picture.Charts(), chart) {
				return usageErrorf("--chart %s: give one of %s", chart, textx.JoinOr(picture.Charts()))
			}
			feature := ""
			if len(args) == 1 {
				feature = args[0]
			}
			t, err := a.resolveRun(cmd.Context(), feature)
			if err != nil {
				return err
			}
			evs, err := eventlog.Read(t.paths.Events)
			if err != nil {
				return usageErrorf("no run of %s (%v); start one with zerg rush %s", t.feature, err, t.feature)
			}
			r := runstate.Cost(t.feature, evs)
			if pf != "" {
				b, err := costPicture(r, picture.SpendOf(evs), chart, pf)
				if err != nil {
					return err
				}
				return a.writePicture(output, pf, b)
			}
			if asJSON {
				return printJSON(a.stdout, r)
			}
			printCost(a.stdout, r)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (docs/json.md)")
	cmd.Flags().StringVar(&format, "format", "text", "text (the table), or a chart: svg or png")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the chart to this file instead of stdout")
	cmd.Flags().StringVar(&chart, "chart", "", "draw only this chart: tasks, levels, models or time")
	return cmd
}

func printCost(w io.Writer, r runstate.CostReport) {
	fmt.Fprintf(w, "Cost of %s\n", r.Feature)
	if r.NotMeasured != "" {
		fmt.Fprintf(w, "not measured: %s; the zeros below are not the run's cost\n", r.NotMeasured)
	}
	if r.Subscription {
		fmt.Fprintln(w, "subscription: usage, not dollars (the workers used a subscription token; COST is the usage at API prices)")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(l runstate.CostLine, first, second string) {
		proj := "-\t-"
		if l.Projected != nil {
			proj = fmt.Sprintf("$%.2f\t$%.2f–$%.2f", l.Projected.Expected, l.Projected.Low, l.Projected.High)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t$%.4f\t%s\t\n", first, second, l.Attempts,
			fmtTokens(l.Tokens.Input), fmtTokens(l.Tokens.Output), fmtTokens(l.Tokens.CacheRead), fmtTokens(l.Tokens.CacheWrite), l.CostUSD, proj)
	}
	fmt.Fprintln(tw, "TASK\tMODEL\tATTEMPTS\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tCOST\tPROJECTED\tRANGE\t")
	for _, l := range r.Tasks {
		row(l, l.Name, l.Model)
	}
	fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t\t\t")
	for _, l := range r.Levels {
		row(l, l.Name, "")
	}
	for _, l := range r.Models {
		row(l, "model", l.Name)
	}
	row(r.Total, "total", "")
	tw.Flush()
	if r.Total.Projected != nil && r.Total.Projected.Expected > 0 {
		fmt.Fprintf(w, "\nactual $%.4f against $%.2f expected (×%.2f; range $%.2f–$%.2f, projection from %s)\n",
			r.Total.CostUSD, r.Total.Projected.Expected, r.Total.CostUSD/r.Total.Projected.Expected,
			r.Total.Projected.Low, r.Total.Projected.High, r.Basis)
	} else {
		fmt.Fprintln(w, "\nthe run recorded no projection (it started before zerg made one)")
	}
	if r.Untracked > 0 {
		fmt.Fprintf(w, "%d attempt(s) were recorded without a token split; their dollars are counted, their tokens are not\n", r.Untracked)
	}
}

// costPicture draws a run's cost: the four charts tiled, or the one named.
func costPicture(r runstate.CostReport, s picture.Spend, chart string, f picture.Format) ([]byte, error) {
	var b bytes.Buffer
	if chart == "" {
		err := picture.WriteCostImage(&b, r, s, f)
		return b.Bytes(), err
	}
	p, err := picture.CostChart(chart, r, s)
	if err != nil {
		return nil, err
	}
	err = picture.WriteChart(&b, p, f)
	return b.Bytes(), err
}
