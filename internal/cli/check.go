package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/gitx"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/preflight"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/term"
)

func init() { register(newCheckCmd) }

type checkFlags struct {
	mode, graph    string
	asJSON, strict bool
}

func newCheckCmd(a *app) *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check FEATURE",
		Short: "Run the feature's verification commands and gates once on the base, before any model is called",
		Long: `Runs each distinct verification command of the feature's task graph and each
quality gate once on the base (the integration branch when a run exists, else
the checked-out commit), in the isolation workers get (sandbox mode: a private
clone, a worker user, no network, the toolchains' caches; container mode: the
same in a container of the project's image), and says for each:

  pass         it already passes
  expected     it fails, as it should before the feature is written
  environment  it fails because the environment lacks something: a module
               not in the cache, a tool not on PATH, a network fetch the
               sandbox refuses; one line names each

No model is called and nothing of the repository changes. zerg rush runs the
same check at its start and stops on an environment problem.

It also warns, naming the task, when a task's verification passes on the base
although the task creates files: a check that cannot fail (--strict makes that
a problem too).

Exit status: 0 no environment problem, 1 at least one, 2 bad input.`,
		Args: cobra.ExactArgs(1),
		ValidArgsFunction: func(c *cobra.Command, args []string, s string) ([]string, cobra.ShellCompDirective) {
			fs, _ := a.completeFeatures(c, args, s)
			return fs, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd.Context(), a, args[0], f, cmd.Flags().Changed)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.mode, "mode", "", "isolation: sandbox, container, subprocess or tasks (default from config)")
	fl.StringVar(&f.graph, "graph", "", "task graph file (default .zerg/specs/FEATURE/task-graph.json)")
	fl.BoolVar(&f.asJSON, "json", false, "print the report as JSON (docs/json.md)")
	fl.BoolVar(&f.strict, "strict", false, "a verification that cannot fail is a problem too (exit 1)")
	return cmd
}

func runCheck(ctx context.Context, a *app, feature string, f checkFlags, set func(string) bool) error {
	cwd, err := a.getwd()
	if err != nil {
		return err
	}
	root, err := zergRepoRoot(ctx, cwd)
	if err != nil {
		return err
	}
	cfg, err := loadProjectConfig(root)
	if err != nil {
		return err
	}
	if set("mode") {
		if err := applyModeFlag(&cfg, f.mode); err != nil {
			return err
		}
	}
	paths, err := run.PathsFor(ctx, root, feature)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if f.graph, err = graphFlag(cwd, f.graph, paths, feature); err != nil {
		return err
	}
	opts := run.Options{Root: root, Feature: feature, GraphFile: f.graph, Config: cfg, Progress: a.stderr}
	rep, err := run.Check(ctx, opts, checkWorker(&opts), func(s string) { fmt.Fprintln(a.stderr, s) })
	if err != nil {
		return err
	}
	if f.asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printCheck(a.stdout, rep)
	}
	if rep.Problems > 0 || f.strict && len(rep.Warnings) > 0 {
		return silent(ExitFailed)
	}
	return nil
}

// checkWorker is run.CheckWorker with the config's CLI and this zerg as
// the hooks call it.
func checkWorker(opts *run.Options) claude.Spec {
	zerg, _ := claude.ZergBinary() // none: the check runs without the hook's binary, as before
	return run.CheckWorker(opts.Config.Claude.Path, zerg)
}

// printCheck writes one line per command and one per environment problem.
func printCheck(w io.Writer, rep *run.CheckReport) {
	fmt.Fprintf(w, "check %s on %s (%s mode), %.1fs\n", rep.Feature, gitx.ShortHash(rep.Base), rep.Mode, rep.Seconds)
	if len(rep.Toolchains) > 0 {
		fmt.Fprintf(w, "  toolchains: %s\n", strings.Join(rep.Toolchains, ", "))
	}
	for _, c := range rep.Caches {
		fmt.Fprintf(w, "  %-9s %s (%s)\n", c.Name, c.Dir, c.Kind)
	}
	if cli := rep.CLI; cli != nil {
		var models []string
		for _, m := range cli.Models {
			models = append(models, m.Model+" → "+strings.Join(m.Resolved, ", "))
		}
		fmt.Fprintf(w, "  ok        the launch check: claude %s through the gateway with the run's policy (%s)\n", cli.Version, strings.Join(models, "; "))
		if note := launchNote(cli); note != "" {
			fmt.Fprintf(w, "  note      %s\n", note)
		}
	}
	for _, r := range rep.Results {
		what := r.What + " " + strings.Join(r.Names, ", ")
		switch r.Verdict {
		case preflight.Pass:
			fmt.Fprintf(w, "  ok        %s: %s passes already (%.1fs)\n", what, r.Command, r.Seconds)
		case preflight.Expected:
			diag := ""
			if h := r.Diagnosis; h != nil {
				diag = fmt.Sprintf(", %s %.0f%%", h.Pattern, 100*h.Confidence)
			}
			fmt.Fprintf(w, "  expected  %s: %s fails (exit %d%s) before the feature is written (%.1fs)\n", what, r.Command, r.Exit, diag, r.Seconds)
		default:
			for _, p := range r.Problems {
				fmt.Fprintf(w, "  PROBLEM   %s: %s\n", what, problemLine(p, rep.Mode))
			}
		}
	}
	for _, wn := range rep.Warnings {
		fmt.Fprintf(w, "  WARNING   task %s: %s\n", wn.Task, wn.Message)
	}
	if rep.Problems == 0 {
		fmt.Fprintf(w, "no environment problem: %s\n", pluralf(len(rep.Results), "%d command checked", "%d commands checked"))
	} else {
		fmt.Fprintf(w, "%s: workers would fail on them whatever the model writes\n", pluralf(rep.Problems, "%d environment problem", "%d environment problems"))
	}
}

// problemLine says what is missing and what to do, in one line; in
// container mode the image, not the host, has the tools and modules.
func problemLine(p preflight.Problem, mode string) string {
	inImage := driver.CapabilitiesOf(config.Config{Mode: mode}).ToolsFromImage
	if p.Why != "" {
		// A rule knows what lacks it, in the user's terms.
		what := "tool"
		if p.Kind == preflight.MissingModule {
			what = "module"
		}
		where := ""
		if inImage {
			where = " (in the container's image)"
		}
		return fmt.Sprintf("missing %s %s%s: %s — %s", what, p.Name, where, term.Clean(p.Why), term.Clean(p.Detail))
	}
	switch {
	case p.Kind == preflight.MissingTool && inImage:
		return fmt.Sprintf("missing tool %s (not in the container's image; add it to the image: its devcontainer's Dockerfile, or container.image) — %s", p.Name, p.Detail)
	case p.Kind == preflight.MissingModule && inImage:
		return fmt.Sprintf("missing module %s (neither in the image nor in the caches workers get; add it to the image, or fetch it on this machine into the Go or npm cache) — %s", p.Name, p.Detail)
	}
	switch p.Kind {
	case preflight.MissingModule:
		return fmt.Sprintf("missing module %s (not in the caches workers get; fetch it on this machine, e.g. go mod download, npm ci, pip install; then check again) — %s", p.Name, p.Detail)
	case preflight.MissingTool:
		return fmt.Sprintf("missing tool %s (not on the workers' PATH; install it, or add its directory to toolchains.paths) — %s", p.Name, p.Detail)
	case preflight.Network:
		return fmt.Sprintf("network fetch refused (%s): workers have no network; put what it fetches in a cache, or allow the host in egress.allow — %s", p.Name, p.Detail)
	}
	// A pattern of the diagnostics engine: its fix says what to do.
	fix := ""
	if pat, ok := diagnose.ByID(p.Kind); ok {
		fix = " (" + pat.Fix + ")"
	}
	return fmt.Sprintf("%s%s — %s", p.Kind, fix, term.Clean(p.Detail))
}
