package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/picture"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/spec"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/textx"
)

func init() { register(newGraphCmd) }

func newGraphCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Validate, show and re-level task graphs",
		Long: `Work with task graphs (task-graph.json; ZERG's format is accepted as it is).

A graph is named by a file path or by a feature (.zerg/specs/<feature>/task-graph.json).
With no argument, the only feature in .zerg/specs is used.`,
	}
	cmd.AddCommand(newGraphValidateCmd(a), newGraphShowCmd(a), newGraphRelevelCmd(a))
	return cmd
}

func newGraphValidateCmd(a *app) *cobra.Command {
	var asJSON, strict bool
	cmd := &cobra.Command{
		Use:   "validate [FILE|FEATURE]",
		Short: "Check a task graph and list every problem",
		Long: `Check a task graph: JSON, ids, titles, levels, dependencies, cycles, same-level
file ownership and path safety. Every error is listed (not only the first), one per
line, naming the task and field. Exit status 2 when the graph is invalid.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeFeatures,
		RunE: func(cmd *cobra.Command, args []string) error {
			file, err := a.resolveGraph(args)
			if err != nil {
				return err
			}
			cfg, err := graphConfig(file)
			if err != nil {
				return err
			}
			r, err := run.LoadGraph(file, run.GraphLoadFor(run.RepoRootOf(file), cfg, nil))
			if err != nil {
				return badInput(err)
			}
			invalid := !r.Valid() || (strict && len(r.Warnings) > 0)
			if asJSON {
				out := struct {
					File     string             `json:"file"`
					Valid    bool               `json:"valid"`
					Problems []spec.ProblemJSON `json:"problems"`
					Summary  *spec.AnalysisJSON `json:"summary,omitempty"`
				}{File: file, Valid: !invalid, Problems: r.Problems(file)}
				if r.Valid() {
					an := spec.Analyze(r.Graph, cfg.Workers).JSON()
					out.Summary = &an
				}
				if err := printJSON(a.stdout, out); err != nil {
					return err
				}
			} else {
				a.printIssues(file, r)
				if r.Valid() {
					an := spec.Analyze(r.Graph, cfg.Workers)
					fmt.Fprintf(a.stdout, "%s: %s: %s in %s, critical path %s%s%s\n",
						file, a.paint(ansiGreen, "valid"), pluralf(an.Tasks, "%d task", "%d tasks"), pluralf(len(an.Levels), "%d level", "%d levels"),
						pluralf(len(an.CriticalPath), "%d task", "%d tasks"),
						minutes(an.CriticalMinutes, an.HasEstimates || an.CriticalMinutes > 0, " (%s)"),
						pluralf(len(r.Warnings), "; %d warning", "; %d warnings"))
				} else {
					fmt.Fprintf(a.stderr, "%s: %s: %s%s\n", file, a.paint(ansiRed, "invalid"),
						pluralf(len(r.Errors), "%d error", "%d errors"), pluralf(len(r.Warnings), ", %d warning", ", %d warnings"))
				}
			}
			if invalid {
				return silent(ExitUsage)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().BoolVar(&strict, "strict", false, "treat warnings as errors")
	return cmd
}

func newGraphShowCmd(a *app) *cobra.Command {
	var asJSON bool
	var workers int
	var format, output string
	cmd := &cobra.Command{
		Use:   "show [FILE|FEATURE]",
		Short: "Show levels, tasks, owned files, dependencies and the critical path",
		Long: `Show a valid task graph as a table per level: each task's estimate, dependencies
and owned files (create/modify), with the critical path marked (*) and the
theoretical lower bound of the makespan for the config's workers (or
--workers), as zerg rush would run it.

--format dot, svg or png draws the graph instead, as zerg dashboard does
(levels as columns, dependencies as edges, the critical path marked), for docs
and PRs: no browser or graphviz needed. It goes to stdout or to --output.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeFeatures,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("workers") && (workers < 1 || workers > 1024) {
				return usageErrorf("--workers %d: give a number of workers from 1 to 1024", workers)
			}
			pf, err := pictureFormat(format, "dot", "svg", "png")
			if err != nil {
				return err
			}
			if pf != "" && asJSON {
				return usageErrorf("--json and --format %s: choose one", format)
			}
			if output != "" && pf == "" {
				return usageErrorf("--output is for a picture: add --format dot, svg or png")
			}
			file, err := a.resolveGraph(args)
			if err != nil {
				return err
			}
			cfg, err := graphConfig(file)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("workers") {
				workers = cfg.Workers
			}
			r, err := run.LoadGraph(file, run.GraphLoadFor(run.RepoRootOf(file), cfg, nil))
			if err != nil {
				return badInput(err)
			}
			if !r.Valid() {
				a.printIssues(file, r)
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s: invalid task graph (%d errors); fix it, or run 'zerg graph relevel' for level problems", file, len(r.Errors))}
			}
			if pf != "" {
				b, err := picture.DrawGraph(r.Graph, pf)
				if err != nil {
					return err
				}
				return a.writePicture(output, pf, b)
			}
			an := spec.Analyze(r.Graph, workers)
			if asJSON {
				return printJSON(a.stdout, spec.NewGraphJSON(file, r.Graph, an))
			}
			a.printGraph(r.Graph, an)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print levels, tasks and the analysis as JSON")
	cmd.Flags().IntVarP(&workers, "workers", "w", 0, "number of workers for the makespan lower bound (default: workers in .zerg/config.yaml)")
	cmd.Flags().StringVar(&format, "format", "text", "text (the table), or a picture: dot, svg or png")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the picture to this file instead of stdout")
	return cmd
}

func newGraphRelevelCmd(a *app) *cobra.Command {
	var write, asap, asJSON bool
	cmd := &cobra.Command{
		Use:   "relevel [FILE|FEATURE]",
		Short: "Recompute levels from dependencies and write the fixed graph",
		Long: `Recompute task levels so every dependency is in a strictly lower level and no two
tasks of one level own the same file. By default a task keeps its level unless it
must move up; --asap puts every task at the earliest level its dependencies allow.
Empty levels are closed up. Only level numbers change: every other byte of the file
stays as it was.

The fixed graph goes to stdout; --write replaces the file instead (atomically).
Graphs with problems levels cannot fix (unknown dependencies, cycles, bad ids,
unsafe paths) are reported and nothing is written.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeFeatures,
		RunE: func(cmd *cobra.Command, args []string) error {
			file, err := a.resolveGraph(args)
			if err != nil {
				return err
			}
			data, err := spec.ReadFile(file)
			if err != nil {
				return badInput(err)
			}
			mode := spec.KeepLevels
			if asap {
				mode = spec.ASAP
			}
			out, changes, r, err := spec.Relevel(data, mode, spec.Options{RepoRoot: run.RepoRootOf(file)})
			if errors.Is(err, spec.ErrCannotRelevel) {
				a.printIssues(file, r)
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s: cannot relevel: the graph has problems levels do not fix (listed above); nothing was written", file)}
			}
			if err != nil {
				return badInput(fmt.Errorf("%s: %w", file, err))
			}
			written := false
			if write && len(changes) > 0 {
				if err := fsx.WriteFileAtomic(file, out, 0o644); err != nil {
					return fmt.Errorf("write %s: %w", file, err)
				}
				written = true
			}
			if asJSON {
				return printJSON(a.stdout, struct {
					File    string             `json:"file"`
					Changes []spec.LevelChange `json:"changes"`
					Written bool               `json:"written"`
				}{file, spec.NonNil(changes), written})
			}
			report := a.stderr
			if write {
				report = a.stdout
			} else if _, err := a.stdout.Write(out); err != nil {
				return err
			}
			if len(changes) == 0 {
				fmt.Fprintf(report, "%s: levels already consistent; nothing to change\n", file)
				return nil
			}
			for _, c := range changes {
				from := fmt.Sprint(c.From)
				if c.From == 0 {
					from = "none"
				}
				fmt.Fprintf(report, "  %s: level %s → %d\n", c.Task, from, c.To)
			}
			verb := "would change"
			if written {
				verb = "changed"
			}
			fmt.Fprintf(report, "%s: %s the level of %s%s\n", file, verb, pluralf(len(changes), "%d task", "%d tasks"),
				map[bool]string{true: "", false: " (use --write to replace the file)"}[write])
			return nil
		},
	}
	cmd.Flags().BoolVarP(&write, "write", "w", false, "replace the file with the fixed graph")
	cmd.Flags().BoolVar(&asap, "asap", false, "put every task at the earliest level its dependencies allow")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the level changes as JSON instead of the graph")
	return cmd
}

// resolveGraph turns [FILE|FEATURE] into a task-graph path (run.ResolveGraph).
func (a *app) resolveGraph(args []string) (string, error) {
	cwd, err := a.getwd()
	if err != nil {
		return "", err
	}
	file, err := run.ResolveGraph(cwd, firstArg(args))
	return file, badInput(err)
}

// graphConfig is the config of the repository holding a graph file (zerg's
// defaults when it has none): the graph commands take its protected paths
// and its workers, so their makespan bounds are those of the run rush would
// start. A config that does not load is refused as zerg config check
// refuses it (exit 2): validating against a guess of it would be a verdict
// on a run that cannot start.
func graphConfig(file string) (config.Config, error) {
	root := run.RepoRootOf(file)
	if root == "" {
		return config.Default(), nil
	}
	return loadProjectConfig(root)
}

func (a *app) completeFeatures(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cwd, err := a.getwd()
	if err != nil {
		return nil, cobra.ShellCompDirectiveDefault
	}
	if root := run.FindZergRoot(cwd); root != "" {
		return run.Features(root), cobra.ShellCompDirectiveDefault
	}
	return nil, cobra.ShellCompDirectiveDefault
}

// printIssues writes errors and warnings compiler-style on stderr, one per line.
func (a *app) printIssues(file string, r *spec.Report) {
	for _, e := range r.Errors {
		fmt.Fprintf(a.stderr, "%s: %s: %s\n", file, a.paintErr(ansiRed, "error"), e)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(a.stderr, "%s: %s: %s\n", file, a.paintErr(ansiYel, "warning"), w)
	}
}

// paintErr colours text for stderr, which is checked on its own.
func (a *app) paintErr(style, s string) string { return term.Paint(colorEnabled(a.stderr), style, s) }

func (a *app) printGraph(g *spec.Graph, an spec.Analysis) {
	w := a.stdout
	critical := map[string]bool{}
	for _, id := range an.CriticalPath {
		critical[id] = true
	}
	fmt.Fprintf(w, "%s %s · %s · %s · at most %d at once\n", a.paint(ansiBold, "Feature"), g.Feature,
		pluralf(an.Tasks, "%d task", "%d tasks"), pluralf(len(an.Levels), "%d level", "%d levels"), an.MaxParallelism)
	fmt.Fprintf(w, "Critical path: %s%s\n", strings.Join(an.CriticalPath, " → "), minutes(an.CriticalMinutes, an.CriticalMinutes > 0, " (%s)"))
	if an.TotalMinutes > 0 {
		fmt.Fprintf(w, "Work: %s in all · lower bound with %d workers: %s with dependencies only, %s with level barriers\n",
			fmtMinutes(an.TotalMinutes), an.Workers, fmtMinutes(an.LowerBoundDAG), fmtMinutes(an.LowerBoundLevels))
		if !an.HasEstimates {
			fmt.Fprintln(w, a.paint(ansiDim, "(some tasks have no estimate_minutes; they count as 0)"))
		}
	} else {
		fmt.Fprintln(w, a.paint(ansiDim, "(no estimate_minutes in the graph: the critical path counts tasks)"))
	}
	byID := map[string]*spec.Task{}
	for _, t := range g.Tasks {
		byID[t.ID] = t
	}
	// One table for all levels so the columns line up.
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nLEVEL\t \tID\tTITLE\tEST\tDEPENDS ON\tOWNS")
	for _, li := range an.Levels {
		for _, id := range li.Tasks {
			t := byID[id]
			mark := " "
			if critical[id] {
				mark = "*"
			}
			est := "-"
			if t.HasEstimate {
				est = fmtMinutes(t.EstimateMinutes)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", li.Level, mark, id, textx.Truncate(textx.OneLine(t.Title), 40), est,
				listOrDash(t.Dependencies, 3), listOrDash(t.Files.Owned(), 3))
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, li := range an.Levels {
		fmt.Fprintf(w, "level %d: %s%s\n", li.Level, pluralf(len(li.Tasks), "%d task", "%d tasks"),
			minutes(li.WorkMinutes, li.WorkMinutes > 0, ", %s of work"))
	}
	fmt.Fprintln(w, a.paint(ansiDim, "* = on the critical path"))
}

func listOrDash(s []string, max int) string {
	if len(s) == 0 {
		return "-"
	}
	if len(s) > max {
		return strings.Join(s[:max], ", ") + fmt.Sprintf(" +%d more", len(s)-max)
	}
	return strings.Join(s, ", ")
}

func fmtMinutes(m float64) string {
	if m >= 90 {
		return fmt.Sprintf("%.1fh", m/60)
	}
	if m == float64(int(m)) {
		return fmt.Sprintf("%dm", int(m))
	}
	return fmt.Sprintf("%.1fm", m)
}

func minutes(m float64, show bool, format string) string {
	if !show {
		return ""
	}
	return fmt.Sprintf(format, fmtMinutes(m))
}

func pluralf(n int, one, many string) string {
	if n == 0 && strings.HasPrefix(one, ";") || n == 0 && strings.HasPrefix(one, ",") {
		return ""
	}
	if n == 1 {
		return fmt.Sprintf(one, n)
	}
	return fmt.Sprintf(many, n)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
