package cli

import (
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/zergrush/zerg/internal/mockapi"
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
	var scenario string
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Validate a scenario file",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if scenario == "" {
				return usageErrorf("--scenario FILE is required")
			}
			sc, err := mockapi.LoadScenario(scenario)
			if err != nil {
				return badInput(err)
			}
			turns := 0
			for _, t := range sc.Tasks {
				turns += len(t.Turns)
			}
			fmt.Fprintf(a.stdout, "%s: ok (%d tasks, %d turns, %d global faults)\n", scenario, len(sc.Tasks), turns, len(sc.Faults))
			return nil
		},
	}
	cmd.Flags().StringVar(&scenario, "scenario", "", "scenario `FILE` to validate")
	return cmd
}
