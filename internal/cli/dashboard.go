package cli

import (
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/dashboard"
	"github.com/zergrush/zerg/internal/run"
)

func init() { register(newDashboardCmd) }

func newDashboardCmd(a *app) *cobra.Command {
	var addr string
	var open, remote bool
	cmd := &cobra.Command{
		Use:   "dashboard [FEATURE]",
		Short: "Serve a live web page of the repository's runs (local, token-protected)",
		Long: `Serve a web page of this repository's runs on 127.0.0.1: the task graph drawn
(levels as columns, dependencies as edges, status as colour, the critical path
marked), the workers, each task's attempts (tool calls, diff, verification output,
diagnosis) and the cost with its charts. It follows a run live from its event log
and shows finished runs as they ended. Its only source is what zerg status reads;
it never locks the log, so a rush does not wait on it.

The URL it prints carries a random token in its fragment (#t=…), which the page
exchanges for a session of its own; a request of the run's data without a
session is refused (403). The browser is opened with a file only you can read,
holding a code that works once, so that no secret is in any process's command
line. Everything is served by zerg itself: no network, no CDN. FEATURE opens
that run's page (it may start later). --addr chooses the address; one that is
not loopback needs --allow-remote, as anyone who can reach it and learns the
token sees the run. Ctrl-C stops it.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			loopback, err := dashboard.Loopback(addr)
			if err != nil {
				return usageErrorf("--addr %s: give host:port, like 127.0.0.1:0 (0 picks a free port)", addr)
			}
			if !loopback && !remote {
				return usageErrorf("--addr %s is not a loopback address: add --allow-remote to serve the dashboard beyond this machine", addr)
			}
			cwd, err := a.getwd()
			if err != nil {
				return err
			}
			root, err := zergRepoRoot(ctx, cwd)
			if err != nil {
				return err
			}
			feature := firstArg(args)
			if feature != "" {
				if _, err := run.PathsFor(ctx, root, feature); err != nil {
					return err
				}
			}
			token, err := dashboard.NewToken()
			if err != nil {
				return err
			}
			srv, err := dashboard.New(dashboard.Options{Root: root, Token: token, Loopback: loopback})
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usageErrorf("--addr %s: %v", addr, err)
			}
			if !loopback {
				fmt.Fprintf(a.stderr, "zerg: warning: the dashboard listens on %s, beyond this machine; anyone with the URL sees the run's code and logs\n", ln.Addr())
			}
			fmt.Fprintf(a.stdout, "zerg dashboard: %s\n", dashboard.URL(ln.Addr().String(), token, feature))
			if open {
				file, done, err := srv.Launcher(ln.Addr().String(), feature)
				if err != nil {
					return err
				}
				defer done()
				dashboard.OpenBrowser(file)
			}
			return srv.Serve(ctx, ln)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "address to listen on (port 0: a free one)")
	cmd.Flags().BoolVar(&open, "open", true, "open the URL in the default browser")
	cmd.Flags().BoolVar(&remote, "allow-remote", false, "allow an --addr that is not loopback")
	return cmd
}
