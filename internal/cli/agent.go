package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cluster"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/run"
)

func init() { register(newAgentCmd) }

func newAgentCmd(a *app) *cobra.Command {
	var (
		join, credsFile, mode, dir, claudePath string
		workers                                int
	)
	cmd := &cobra.Command{
		Use:   "agent --join URL --creds FILE",
		Short: "Run attempts of a coordinator's cluster on this machine (cluster mode)",
		Long: `Join a zerg cluster and run the attempts its coordinator queues: each one's
worker and verification run here with this machine's driver, and the result
goes back as a git bundle. The coordinator checks and merges it; this machine
never gets the repository (only the bundle of each attempt's base) and never
the coordinator's API key: workers reach the model API through the
coordinator. For a run with cluster.agent_key: local they use this host's
own key instead: ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL, if set) as this
command found them at start, held by a gateway of the agent and never given
to a worker; without it, such attempts are refused.

The agent tells the coordinator what it runs (--mode, a key of its own) and
gets only attempts it can run; a run none of the joined agents can run ends
within cluster.ack_wait, saying which --mode to start agents with. This
version's agents run subprocess or sandbox mode (a sandbox agent runs
subprocess runs too); container runs have no agent, and tasks mode has no
cluster (its workers are your own session). While it runs an attempt the
agent names it in its heartbeat every second and reports its progress: an
attempt it names in no heartbeat for cluster.ack_wait, or makes no progress
with for heartbeat.stall_timeout, is taken back and given to another agent.

The agent outlives the coordinator, by design: it serves every run on that
server, one after another, and waits (saying so) while no run uses it or a
coordinator restarts. It ends only when you stop it: the first Ctrl-C (or
SIGTERM) drains (running attempts finish, no new one is taken); a second
abandons them to other agents. A script that starts an agent must stop it.
--creds is the file zerg cluster creds wrote (docs/cluster.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if join == "" || credsFile == "" {
				return usageErrorf("zerg agent needs --join URL and --creds FILE (from zerg cluster creds NAME on the coordinator)")
			}
			if why := config.ClusterURLProblem(join); why != "" {
				return usageErrorf("--join: %s", why)
			}
			if workers < 1 || workers > 64 {
				return usageErrorf("--workers %d: give a number from 1 to 64", workers)
			}
			factory, ok := driver.Lookup(mode)
			if !ok || factory.Agent == nil {
				return usageErrorf("--mode %s: this version's agents run subprocess or sandbox mode (docs/cluster.md)", mode)
			}
			creds, err := cluster.ReadCreds(credsFile)
			if err != nil {
				return badInput(err)
			}
			// This host's own key, for local runs: kept in memory and out of
			// every process this agent starts (workers, verifications, git).
			own := claude.APIFromEnv()
			_ = os.Unsetenv(claude.EnvAPIKey)
			// --join says where the server is from here (the creds name the
			// address the coordinator advertised).
			creds.URL = join
			bin, err := claude.Find(claudePath)
			if err != nil {
				return usageErrorf("%v", err)
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			if dir == "" {
				dir = defaultAgentDir()
			}
			if dir, err = filepath.Abs(dir); err != nil {
				return err
			}
			// The agent keeps its workspaces, base bundles and streams
			// there, in /var/tmp by default as root: a directory another
			// account made first would be theirs to read and swap.
			if err := fsx.OwnDir(dir, driver.AgentDirMode); err != nil {
				return badInput(fmt.Errorf("the agent's directory %s is not zerg's own: %w; remove it if you did not make it, or give --dir a directory only you can write", dir, err))
			}
			// The credentials file is the agent's alone (mode 0600);
			// wherever it is, a sandbox finds only a cover there.
			abs, err := filepath.Abs(credsFile)
			if err != nil {
				return err
			}
			iso, err := factory.Agent(cmd.Context(), driver.AgentEnv{Dir: dir,
				Repo:   func(ctx context.Context) (*gitx.Repo, error) { return gitx.OpenBare(ctx, filepath.Join(dir, "repo")) },
				Worker: claude.Spec{Binary: bin, Hook: claude.HookSpec{ZergBinary: self}}, Slots: workers,
				HideFiles: []string{abs}, WorkspaceRoot: run.WorkspaceRoot})
			if err != nil {
				return &ExitError{Code: ExitFailed, Err: err}
			}
			runAs, sb := iso.RunAs, iso.Sandbox
			// The first signal (the command's context) stops taking
			// attempts; a second abandons the running ones.
			run, abandon := context.WithCancel(context.WithoutCancel(cmd.Context()))
			defer abandon()
			second := make(chan os.Signal, 2)
			signal.Notify(second, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(second)
			go func() {
				<-cmd.Context().Done()
				fmt.Fprintf(a.stderr, "zerg agent %s: draining: running attempts finish, no new one is taken (again to abandon them)\n", creds.User)
				select {
				case <-second: // the signal that ended the command's context
				case <-run.Done():
					return
				}
				select {
				case <-second:
					abandon()
				case <-run.Done():
				}
			}()
			nc, err := joinCluster(cmd.Context(), creds, a.stderr)
			if err != nil {
				return err
			}
			defer nc.Close()
			host, _ := os.Hostname()
			ag := &driver.Agent{Name: creds.User, NC: nc, Mode: mode, Workers: workers, Dir: dir, Claude: bin,
				Zerg: self, RunAs: runAs, Sandbox: sb, Host: host, Out: a.stdout,
				LocalKey: own.APIKey, LocalUpstream: own.BaseURL}
			if err := ag.Run(cmd.Context(), run); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "zerg agent %s: left the cluster\n", creds.User)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&join, "join", "", "the coordinator's server, tls://HOST:PORT")
	fl.StringVar(&credsFile, "creds", "", "this agent's credentials file (zerg cluster creds)")
	fl.IntVarP(&workers, "workers", "w", 2, "attempts at once")
	fl.StringVar(&mode, "mode", config.ModeSubprocess, "the isolation this agent gives: subprocess or sandbox (bubblewrap; runs subprocess runs' attempts too)")
	fl.StringVar(&dir, "dir", "", "the agent's state: base bundles, workspaces, streams (default: /var/tmp/zerg-agent as root, else the user's cache)")
	fl.StringVar(&claudePath, "claude", "", "the claude CLI (default: as zerg finds it)")
	return cmd
}

// defaultAgentDir is where an agent keeps its state: a place the worker
// user can reach when the agent runs as root.
func defaultAgentDir() string {
	if os.Geteuid() == 0 {
		return "/var/tmp/zerg-agent"
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "zerg", "agent")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("zerg-agent-%d", os.Getuid()))
}

// joinCluster connects, waiting for a server that is not up yet (an
// embedded one starts with its run's first attempt); refused credentials
// end it at once.
func joinCluster(ctx context.Context, creds cluster.Creds, log io.Writer) (*nats.Conn, error) {
	said, refusals := false, 0
	for {
		nc, err := cluster.Connect(ctx, creds)
		if err == nil {
			return nc, nil
		}
		refused := errors.Is(err, nats.ErrAuthorization) || strings.Contains(strings.ToLower(err.Error()), "authorization")
		if refused {
			refusals++
		} else {
			refusals = 0
		}
		// Twice in a row: a server reloading its users (zerg cluster creds
		// issuing another agent's) may refuse a connection in passing.
		if refusals >= 2 {
			return nil, badInput(fmt.Errorf("the server at %s refused the credentials of %s: issue them again with zerg cluster creds %s on the coordinator", creds.URL, creds.User, creds.User))
		}
		if strings.Contains(err.Error(), "x509") {
			return nil, fmt.Errorf("join %s: %w", creds.URL, err)
		}
		if !said {
			fmt.Fprintf(log, "zerg agent %s: waiting for the server at %s (%v)\n", creds.User, creds.URL, err)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
