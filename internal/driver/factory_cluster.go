package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/cluster"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/gitx"
)

// Cluster mode is not a mode of its own: cluster.url sends the attempts of
// the modes zerg starts workers in to the cluster's agents (New).

// newClusterDriver sends the run's attempts to the cluster's agents
// (cluster.url): local runs zerg's own commands, the gateway on this side
// holds the key. It connects at the first attempt.
func newClusterDriver(env Env, local Driver) *Cluster {
	cl := env.Config.Cluster
	worker := env.Worker
	upstream := worker.API.BaseURL
	if upstream == "" {
		upstream = "https://api.anthropic.com"
	}
	verify := map[string]*ClusterVerify{}
	if g := env.Graph; g != nil {
		for _, t := range g.Tasks {
			if t.Verification == nil || strings.TrimSpace(t.Verification.Command) == "" {
				continue
			}
			verify[t.ID] = &ClusterVerify{Command: t.Verification.Command, Timeout: t.Verification.Timeout(env.Config.Verification.Timeout)}
		}
	}
	return &Cluster{
		Repo: &gitx.Repo{Runner: gitx.New(env.Root)}, Local: local, Mode: env.Config.Mode,
		Connect:  func(ctx context.Context) (*nats.Conn, func(), error) { return ConnectCluster(ctx, env.ClusterDir, cl) },
		Streams:  cluster.StreamsConfig{AckWait: cl.AckWait, MaxDeliver: cl.MaxDeliver},
		Verify:   func(task string) *ClusterVerify { return verify[task] },
		Upstream: upstream, APIKey: string(worker.API.APIKey), AuthToken: string(worker.API.AuthToken), OAuthToken: string(worker.API.OAuthToken),
		Gateway:  env.Gateway,
		AgentKey: cl.AgentKey,
		State:    env.State,
		Journal:  filepath.Join(env.RunDir, "cluster.jsonl"),
		Progress: func(line string) { env.say("%s", line) },
	}
}

// GatewayPolicy is the template of every attempt's gateway policy: the
// config's settings, what the launch probe learnt (probe; nil when the
// rush skipped it) and the run's meter.
func GatewayPolicy(cfg config.Config, probe *cliprobe.Report, meter *gateway.Meter) gateway.Policy {
	p := gateway.Policy{MaxTokens: int64(cfg.Gateway.MaxTokens), Betas: cfg.Gateway.Betas, Strict: cfg.Gateway.Strict,
		ServerTools: cfg.Gateway.ServerTools, Run: meter}
	if p.MaxTokens == 0 {
		// What the CLI asks for, and never less than a release of the
		// tested range does (a later request of a session may ask more
		// than the probe's turn did).
		p.MaxTokens = gateway.DefaultMaxTokens
		if probe != nil {
			p.MaxTokens = max(p.MaxTokens, probe.MaxTokens)
		}
	}
	if probe != nil {
		p.Resolved = probe.Resolved()
	}
	return p
}

// ConnectCluster reaches the cluster's server as the coordinator: the
// embedded one (started here from its state in dir, with the agents'
// result buckets) or the one cluster.creds names. done closes the
// connection and the server.
func ConnectCluster(ctx context.Context, dir string, cl config.Cluster) (*nats.Conn, func(), error) {
	if !cl.Embed {
		creds, err := cluster.ReadCreds(cl.Creds)
		if err != nil {
			return nil, nil, err
		}
		nc, err := cluster.Connect(ctx, creds)
		if err != nil {
			return nil, nil, err
		}
		return nc, nc.Close, nil
	}
	srv, err := StartClusterServer(dir, cl)
	if err != nil {
		return nil, nil, err
	}
	nc, err := cluster.Connect(ctx, srv.CoordinatorCreds())
	if err == nil {
		err = ensureAgentStores(ctx, nc, srv.Agents(), cl)
	}
	if err != nil {
		if nc != nil {
			nc.Close()
		}
		srv.Shutdown()
		return nil, nil, err
	}
	return nc, func() { nc.Close(); srv.Shutdown() }, nil
}

func ensureAgentStores(ctx context.Context, nc *nats.Conn, agents []string, cl config.Cluster) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	if err := cluster.EnsureStreams(ctx, js, cluster.StreamsConfig{AckWait: cl.AckWait, MaxDeliver: cl.MaxDeliver}); err != nil {
		return err
	}
	for _, a := range agents {
		if err := cluster.EnsureAgentStore(ctx, js, a); err != nil {
			return err
		}
	}
	return nil
}

// StartClusterServer starts the embedded server whose store, CA and
// agents' password hashes are in dir (run.ClusterDir): TLS, listening on
// cluster.listen.
func StartClusterServer(dir string, cl config.Cluster) (*cluster.Server, error) {
	host, port, err := net.SplitHostPort(cl.Listen)
	if err != nil {
		return nil, fmt.Errorf("cluster.listen %q: %w", cl.Listen, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("cluster.listen %q: the port is not a number", cl.Listen)
	}
	var names []string
	if u, err := url.Parse(cl.URL); err == nil && u.Hostname() != "" {
		names = append(names, u.Hostname())
	}
	return cluster.StartServer(cluster.ServerOptions{Dir: dir, Host: host, Port: p, TLS: true, TLSNames: names})
}

// IssueAgentCreds makes (or rotates) agent's credentials on the embedded
// server whose state is in dir, with the address agents dial. The server
// must not be running: its store is one process's.
func IssueAgentCreds(ctx context.Context, dir string, cl config.Cluster, agent string) (cluster.Creds, error) {
	srv, err := StartClusterServer(dir, cl)
	if err != nil {
		return cluster.Creds{}, err
	}
	defer srv.Shutdown()
	creds, err := srv.AddAgent(agent)
	if err != nil {
		return cluster.Creds{}, err
	}
	nc, err := cluster.Connect(ctx, srv.CoordinatorCreds())
	if err != nil {
		return cluster.Creds{}, err
	}
	defer nc.Close()
	if err := ensureAgentStores(ctx, nc, []string{agent}, cl); err != nil {
		return cluster.Creds{}, err
	}
	creds.URL = cl.URL
	return creds, nil
}

// ClusterHold is who holds an attempt of a cluster run, as its
// cluster.jsonl last records it.
type ClusterHold struct {
	// Agent holds the attempt now ("": nobody, it waits for one).
	Agent string
	// TakenBack says from which agent the coordinator last took the
	// attempt back, and why ("": never).
	TakenBack string
}

// ClusterAgents reads which agent holds each attempt of a cluster run
// ("task/number" to its hold), from the leases and take-backs the run's
// cluster.jsonl records: nil for a run that sent nothing to a cluster.
func ClusterAgents(runDir string) map[string]ClusterHold {
	b, err := os.ReadFile(filepath.Join(runDir, "cluster.jsonl"))
	if err != nil {
		return nil
	}
	out := map[string]ClusterHold{}
	for _, line := range strings.Split(string(b), "\n") {
		var rec struct {
			Kind   string `json:"kind"`
			Task   string `json:"task"`
			Number int    `json:"number"`
			Agent  string `json:"agent"`
			Why    string `json:"why"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Task == "" {
			continue
		}
		key := fmt.Sprintf("%s/%d", rec.Task, rec.Number)
		h := out[key]
		switch rec.Kind {
		case "lease":
			h.Agent = rec.Agent
		case "lease_taken_back":
			h.Agent, h.TakenBack = "", fmt.Sprintf("taken back from agent %s: %s", rec.Agent, rec.Why)
		default:
			continue
		}
		out[key] = h
	}
	return out
}
