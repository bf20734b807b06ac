package cli

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/journey"
	"github.com/zergrush/zerg/internal/mockapi"
	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/run"
)

func init() { register(newMockapiCmd) }

func newMockapiCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mockapi",
		Short: "Run the scripted Anthropic Messages API (tests, offline demo, rehearsals)",
		Long: `The scripted Messages API that the real Claude Code CLI talks to in tests, in
the offline demo and in rehearsal runs. A scenario file scripts each task's
turns (tool calls, text, token usage) and injects faults; see docs/mockapi.md.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return usageErrorf("missing subcommand: use 'zerg mockapi serve' or 'zerg mockapi check' (see 'zerg mockapi --help')")
		},
	}
	cmd.AddCommand(newMockapiServeCmd(a), newMockapiCheckCmd(a))
	return cmd
}

func newMockapiServeCmd(a *app) *cobra.Command {
	var (
		scenario, addr, logPath string
		port                    int
		seed                    int64
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the scripted API; prints the base URL on stdout",
		Long: `Serve the scripted API until interrupted (SIGINT/SIGTERM). The base URL is
printed as the only line on stdout, so scripts can capture it:

  url=$(zerg mockapi serve --scenario demo.yaml &)  # or read the first line
  ANTHROPIC_BASE_URL=$url ANTHROPIC_API_KEY=test claude -p ...

Without --scenario every prompt is answered with the text "done".`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if port < 0 || port > 65535 {
				return usageErrorf("--port %d is out of range; use 0 (any free port) to 65535", port)
			}
			if net.ParseIP(addr) == nil && addr != "localhost" {
				return usageErrorf("--addr %q is not an IP address; use e.g. 127.0.0.1", addr)
			}
			var sc *mockapi.Scenario
			if scenario != "" {
				var err error
				if sc, err = mockapi.LoadScenario(scenario); err != nil {
					return badInput(err)
				}
			}
			var opts []mockapi.Option
			if logPath != "" {
				opts = append(opts, mockapi.WithLogFile(logPath))
			}
			if c.Flags().Changed("seed") {
				opts = append(opts, mockapi.WithSeed(seed))
			}
			srv := mockapi.NewServer(sc, opts...)
			url, err := srv.Start(net.JoinHostPort(addr, strconv.Itoa(port)))
			if err != nil {
				_ = srv.Close()
				return fmt.Errorf("serve mock API: %w", err)
			}
			fmt.Fprintln(a.stdout, url)
			<-c.Context().Done()
			if err := srv.Close(); err != nil {
				return fmt.Errorf("stop mock API: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&scenario, "scenario", "", "scenario `FILE` (YAML or JSON, see docs/mockapi.md)")
	f.StringVar(&addr, "addr", "127.0.0.1", "IP address to bind (loopback by default)")
	f.IntVar(&port, "port", 0, "TCP port (0: any free port)")
	f.StringVar(&logPath, "log", "", "append every request as one JSON line to `FILE`")
	f.Int64Var(&seed, "seed", 0, "seed for rate-based faults (overrides the scenario's)")
	return cmd
}

func newMockapiCheckCmd(a *app) *cobra.Command {
	var scenario, graph string
	cmd := &cobra.Command{
		Use:   "check [FEATURE]",
		Short: "Validate a scenario file, and check its tasks against a feature's graph",
		Long: `Validate a scenario file (exit 2 with the first problem, naming the task and
field). With FEATURE, the scenario defaults to .zerg/specs/FEATURE/scenario.yaml
and its tasks are checked against the prompts the run will send: each task's
match (or match_regexp) must match the prompt of some task of the feature's
graph (.zerg/specs/FEATURE/task-graph.json, or --graph), first attempt or
retry, or of its plan, design or review sessions. A scenario task that matches
none is never used, usually for a typo in a task id: one warning line each, on
stderr, and the check still passes. --graph FILE without FEATURE checks against
that graph. See docs/mockapi.md.`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(c *cobra.Command, args []string, s string) ([]string, cobra.ShellCompDirective) {
			fs, _ := a.completeFeatures(c, args, s)
			return fs, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			feature := firstArg(args)
			var paths *run.Paths
			if feature != "" {
				cwd, err := a.getwd()
				if err != nil {
					return err
				}
				root, err := zergRepoRoot(c.Context(), cwd)
				if err != nil {
					return err
				}
				p, err := run.PathsFor(c.Context(), root, feature)
				if err != nil {
					return err
				}
				paths = &p
				if scenario == "" {
					scenario = pathx.Short(cwd, filepath.Join(p.SpecDir, "scenario.yaml"))
				}
				if graph == "" {
					graph = p.Graph
				}
			}
			if scenario == "" {
				return usageErrorf("--scenario FILE is required without a FEATURE")
			}
			sc, err := mockapi.LoadScenario(scenario)
			if err != nil {
				return badInput(err)
			}
			turns := 0
			for _, t := range sc.Tasks {
				turns += len(t.Turns)
			}
			var unmatched []*mockapi.Task
			against := ""
			if graph != "" {
				cfg, err := graphConfig(graph)
				if err != nil {
					return err
				}
				r, err := run.LoadGraph(graph, run.GraphLoadFor(run.RepoRootOf(graph), cfg, nil))
				if err != nil {
					return badInput(err)
				}
				if !r.Valid() {
					return usageErrorf("%s: invalid task graph (%s); zerg graph validate %s lists them", graph, pluralf(len(r.Errors), "%d error", "%d errors"), graph)
				}
				if feature == "" {
					feature = r.Graph.Feature
				}
				specDir := ""
				if paths != nil {
					specDir = paths.SpecDir
				}
				unmatched = journey.UnmatchedScenarioTasks(sc, feature, r.Graph, specDir)
				warnUnmatched(a, scenario, feature, unmatched)
				against = fmt.Sprintf("; %d of %d match the prompts of %s", len(sc.Tasks)-len(unmatched), len(sc.Tasks), feature)
			}
			fmt.Fprintf(a.stdout, "%s: ok (%d tasks, %d turns, %d global faults%s)\n", scenario, len(sc.Tasks), turns, len(sc.Faults), against)
			return nil
		},
	}
	cmd.Flags().StringVar(&scenario, "scenario", "", "scenario `FILE` to validate (default with FEATURE: .zerg/specs/FEATURE/scenario.yaml)")
	cmd.Flags().StringVar(&graph, "graph", "", "task graph `FILE` to check the scenario's tasks against (default with FEATURE: its task-graph.json)")
	return cmd
}

// warnUnmatched says, one line each on stderr, which scenario tasks no
// prompt of the feature's run matches: a warning, not an error, as a
// scenario may hold tasks for other graphs.
func warnUnmatched(a *app, scenario, feature string, unmatched []*mockapi.Task) {
	for _, t := range unmatched {
		fmt.Fprintf(a.stderr, "zerg: warning: %s: task %s matches no task of %s's graph (\"Task <id>: …\") nor its plan, design or review; it will never answer\n",
			scenario, t.Describe(), feature)
	}
}
