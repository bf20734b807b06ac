package run

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zergrush/zerg/internal/cgroup"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cluster"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/container"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/sandbox"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/toolchain"
)

// newDriver is the driver of the config's mode, with slots workspaces in
// use at once: the one place that chooses by mode. caches are the
// toolchains' caches its commands get (for zerg check's report). meter is
// budget.run_usd as the run's gateways enforce it (nil: none).
func newDriver(ctx context.Context, opts Options, paths Paths, worker claude.Spec, slots int, meter *gateway.Meter) (d driver.Driver, caches []toolchain.Cache, err error) {
	local, caches, err := newLocalDriver(ctx, opts, paths, worker, slots, meter)
	if err != nil || opts.Config.Cluster.URL == "" {
		return local, caches, err
	}
	return newClusterDriver(opts, paths, worker, local, meter), caches, nil
}

// newLocalDriver is the driver of the config's mode on this machine.
func newLocalDriver(ctx context.Context, opts Options, paths Paths, worker claude.Spec, slots int, meter *gateway.Meter) (d driver.Driver, caches []toolchain.Cache, err error) {
	// Every driver makes its workspaces and lanes in these: zerg's own
	// before the first one.
	if err := paths.MakeWorkspaceDirs(); err != nil {
		return nil, nil, &Error{Kind: Setup, Feature: opts.Feature, Err: err}
	}
	repo := opts.repo()
	switch opts.Config.Mode {
	case config.ModeSandbox, config.ModeContainer:
		sb, caches, err := newSandbox(ctx, opts, repo, paths, worker, slots, meter)
		if err != nil {
			return nil, nil, err
		}
		return sb, caches, nil
	case config.ModeSubprocess:
		runAs := worker.RunAs
		if runAs == nil {
			runAs = opts.RunAs
		}
		return &driver.Subprocess{Repo: repo, RunAs: runAs, Lanes: paths.Workspaces}, nil, nil
	case config.ModeTasks:
		// The session's subagents are the workers, with the session's own
		// rights: zerg's commands run as zerg does (docs/modes.md).
		return &driver.Tasks{Repo: repo, Board: paths.Board, Lanes: paths.State, Lease: opts.Config.Tasks.Lease}, nil, nil
	default:
		return nil, nil, &Error{Kind: BadInput, Feature: opts.Feature, Err: fmt.Errorf("mode %q has no driver in this version", opts.Config.Mode)}
	}
}

// IsolationBoundsCommands reports whether the mode's driver runs the
// worker in an isolation that bounds its commands (sandbox, container), so
// that its hook refuses only what reaches outside, as the driver tells the
// hook when it launches (zerg hook check shows that policy without a
// launch).
func IsolationBoundsCommands(mode string) bool {
	return mode == config.ModeSandbox || mode == config.ModeContainer
}

// driverReady checks, before anything is written, that the config's mode
// can run here, and gives subprocess mode its worker user when zerg runs as
// root. It fails closed: no sandbox, no run (and no check that would pass
// for want of one); never a silent fall back to another mode.
func driverReady(ctx context.Context, opts *Options) error {
	switch opts.Config.Mode {
	case config.ModeSandbox:
		if err := sandboxSupported(); err != nil {
			// Another OS: one line naming the modes that run there.
			return &Error{Kind: Setup, Feature: opts.Feature, Err: err}
		}
		if err := sandboxReady(ctx, *opts); err != nil {
			return &Error{Kind: Setup, Feature: opts.Feature, Err: fmt.Errorf(
				"sandbox mode cannot run on this machine: %w; fix that (zerg doctor says more) or set mode: subprocess in .zerg/config.yaml, which is weaker (docs/security.md)", err)}
		}
		return nil
	case config.ModeContainer:
		if err := containerSupported(); err != nil {
			// Another OS: one line naming the modes that run there.
			return &Error{Kind: Setup, Feature: opts.Feature, Err: err}
		}
		box, err := containerReady(ctx, *opts)
		if err != nil {
			return &Error{Kind: Setup, Feature: opts.Feature, Err: fmt.Errorf(
				"container mode cannot run here: %w; fix that (zerg doctor says more) or set another mode in .zerg/config.yaml (docs/container.md)", err)}
		}
		opts.box = box
		return nil
	case config.ModeTasks:
		return nil
	default:
		if opts.RunAs == nil && os.Geteuid() == 0 {
			u, err := security.EnsureWorkerUser(ctx, opts.Config.Security.WorkerUser)
			if err != nil {
				return &Error{Kind: BadInput, Feature: opts.Feature, Err: fmt.Errorf(
					"running as root needs the unprivileged worker user %q: %v (set security.worker_user in .zerg/config.yaml, or run zerg as a normal user)", opts.Config.Security.WorkerUser, err)}
			}
			opts.RunAs = u
		}
		if err := checkSetup(opts.RunAs); err != nil {
			return &Error{Kind: Setup, Feature: opts.Feature, Err: err}
		}
		return nil
	}
}

// sandboxSupported and containerSupported are the packages' Supported;
// the tests play another OS.
var (
	sandboxSupported   = sandbox.Supported
	containerSupported = container.Supported
)

// sandboxReady starts a sandbox as the first worker slot's user.
func sandboxReady(ctx context.Context, opts Options) error {
	u, err := slotUser(ctx, opts.Config.Security.WorkerUser, 1)
	if err != nil {
		return err
	}
	if u.UID != os.Geteuid() {
		// The slot users create and own the workspaces' contents.
		if err := checkSetup(u); err != nil {
			return err
		}
	}
	return sandbox.Check(ctx, u.UID, u.GID)
}

// containerReady finds the engine and the image of container mode and
// starts one container of it as the first worker slot's user.
func containerReady(ctx context.Context, opts Options) (*container.Box, error) {
	u, err := slotUser(ctx, opts.Config.Security.WorkerUser, 1)
	if err != nil {
		return nil, err
	}
	if u.UID != os.Geteuid() {
		if err := checkSetup(u); err != nil {
			return nil, err
		}
	}
	box, err := containerBox(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := container.Check(ctx, *box, u.UID, u.GID, sandboxLimits(opts.Config.Sandbox)); err != nil {
		return nil, err
	}
	return box, nil
}

// said holds the notes this process printed once (saidOnce).
var said sync.Map

// saidOnce reports whether line is said for the first time in this
// process, and remembers it.
func saidOnce(line string) bool {
	_, again := said.LoadOrStore(line, true)
	return !again
}

// containerBox is the boundary of the run's containers: the engine
// container.runtime names and the image (container.image, or the
// repository's devcontainer's).
func containerBox(ctx context.Context, opts Options) (*container.Box, error) {
	rt, err := container.Detect(ctx, opts.Config.Container.Runtime)
	if err != nil {
		return nil, err
	}
	img, err := container.ResolveImage(ctx, rt, opts.Root, opts.Config.Container.Image, opts.Progress)
	if err != nil {
		return nil, err
	}
	p := newProgress(opts.Progress)
	how := "rootful"
	if rt.Rootless {
		how = "rootless"
	}
	// A rush finds the boundary twice (its check, then the run): what it
	// says of the image is said once.
	say := func(format string, a ...any) {
		if line := fmt.Sprintf(format, a...); saidOnce(line) {
			p.printf("%s", line)
		}
	}
	say("zerg: container mode: %s (%s) runs %s (from %s)", rt.Name, how, img.Ref, img.Source)
	if len(img.Ignored) > 0 {
		say("zerg: %s: zerg does not honour %s; workers run in the image as built", img.Source, strings.Join(img.Ignored, ", "))
	}
	path, err := rt.ImagePath(ctx, img.Ref)
	if err != nil {
		return nil, err
	}
	return &container.Box{Runtime: rt, Image: img.Ref, Run: RunDirOf(opts.Root, opts.Feature), Path: path}, nil
}

// sandboxLimits are the sandbox.* limits of each sandboxed command.
func sandboxLimits(sb config.Sandbox) sandbox.Limits {
	return sandbox.Limits{MemoryBytes: int64(sb.MemoryMB) << 20, Processes: sb.Processes, CPUSeconds: sb.CPUSeconds,
		FileSizeBytes: int64(sb.FileSizeMB) << 20, OpenFiles: sb.OpenFiles}
}

// newSandbox prepares sandbox mode for slots concurrent workspaces. As
// root, each slot gets its own system user (created when missing);
// otherwise every sandbox runs as zerg's own user, and the namespaces keep
// them apart.
func newSandbox(ctx context.Context, opts Options, repo *gitx.Repo, paths Paths, worker claude.Spec, slots int, meter *gateway.Meter) (*driver.Sandbox, []toolchain.Cache, error) {
	users := make(chan *security.WorkerUser, slots)
	host := toolchain.LocalHost()
	host.GoEnv = onceGoEnv(host.GoEnv)
	detected := toolchain.Detect(opts.Root)
	for i := 1; i <= slots; i++ {
		u, err := slotUser(ctx, opts.Config.Security.WorkerUser, i)
		if err != nil {
			return nil, nil, &Error{Kind: Setup, Feature: opts.Feature, Err: err}
		}
		users <- u
	}
	// Memory and processes as totals per attempt where the machine has
	// cgroups zerg may create; the per-process limits hold anyway. A
	// container has the engine's cgroup instead.
	var box driver.Boundary
	inImage := opts.Config.Mode == config.ModeContainer
	groups, err := cgroup.Detect()
	if err != nil && !inImage && opts.Config.Sandbox.MemoryMB > 0 {
		// The docs promise a total only where there is a group: say so
		// when there is none, rather than let the limit mean less unsaid.
		newProgress(opts.Progress).printf("zerg: no cgroup here (%s): sandbox.memory_mb (%d MiB) bounds each process's data segment, not the attempt's processes together (zerg doctor, docs/sandbox.md)",
			strings.TrimPrefix(err.Error(), cgroup.ErrUnavailable.Error()+": "), opts.Config.Sandbox.MemoryMB)
	}
	if err != nil || inImage {
		groups = nil
	}
	if inImage {
		b := opts.box
		if b == nil {
			if b, err = containerBox(ctx, opts); err != nil {
				return nil, nil, &Error{Kind: Setup, Feature: opts.Feature, Err: err}
			}
		}
		// The containers end with this coordinator, as sandboxes do.
		if err := os.MkdirAll(paths.State, WorkspaceDirMode); err != nil {
			return nil, nil, &Error{Kind: Setup, Feature: opts.Feature, Err: err}
		}
		lifeline := filepath.Join(paths.State, fmt.Sprintf("lifeline-%d", os.Getpid()))
		if err := container.NewLifeline(lifeline); err != nil {
			return nil, nil, &Error{Kind: Setup, Feature: opts.Feature, Err: err}
		}
		withLife := *b
		withLife.Lifeline = lifeline
		box = withLife
	}
	root, err := WorkspaceRoot()
	if err != nil {
		return nil, nil, &Error{Kind: Setup, Feature: opts.Feature, Err: err}
	}
	var ro []string
	for _, p := range []string{worker.Binary, worker.Hook.ZergBinary} {
		if p == "" {
			continue
		}
		ro = appendDir(ro, filepath.Dir(p))
		if real, err := filepath.EvalSymlinks(p); err == nil {
			ro = appendDir(ro, filepath.Dir(real))
		}
	}
	sb := opts.Config.Sandbox
	upstream := worker.API.BaseURL
	if upstream == "" {
		upstream = "https://api.anthropic.com"
	}
	// The user's repository (its other branches, stashes, .zerg), every
	// workspace and worker state, and the home of the user running zerg
	// (keys, cloud credentials), wherever it is: none of it is visible
	// inside. /home, /root and /tmp are covered anyway.
	hide := []string{opts.Root, root}
	if home, err := os.UserHomeDir(); err == nil && home != "/" {
		if fi, err := os.Stat(home); err == nil && fi.IsDir() {
			hide = appendDir(hide, home)
		}
	}
	d := &driver.Sandbox{
		Repo:     repo,
		Users:    users,
		Hide:     hide,
		ReadOnly: ro,
		// A build cache of each workspace's own (no worker ever writes to
		// a cache another command reads), the same shared directories for
		// every one.
		Tools: func(buildCache string) ([]string, []string, []string) {
			t := toolsFor(host, detected, opts, buildCache)
			return t.Shared, t.Writable, t.Vars
		},
		Boundary: box,
		Limits:   sandboxLimits(sb),
		Upstream: upstream, APIKey: string(worker.API.APIKey), AuthToken: string(worker.API.AuthToken), OAuthToken: string(worker.API.OAuthToken),
		Allow:        opts.Config.Egress.Allow,
		MaxFileBytes: int64(sb.MaxCommitFileMB) << 20,
		Gateway:      gatewayPolicy(opts.Config, opts.CLI, meter),
		Cgroups:      groups,
		Lanes:        paths.Workspaces,
	}
	return d, toolsFor(host, detected, opts, "").Caches, nil
}

// toolsFor plans the toolchains for commands whose writable build cache
// is buildCache.
func toolsFor(host toolchain.Host, detected []toolchain.Toolchain, opts Options, buildCache string) toolchain.Env {
	c := opts.Config
	env := toolchain.Plan(host, detected, toolchain.Options{
		Off: c.Toolchains.Off, CachesOff: c.Caches.Off, ExtraPaths: c.Toolchains.Paths, ExtraReadOnly: c.Caches.ReadOnly,
		BuildCache: buildCache, Zerg: sandbox.InsideExecutable, InImage: c.Mode == config.ModeContainer,
	})
	if len(env.Path) > 0 {
		env.Vars = append(env.Vars, "PATH="+env.PathValue(os.Getenv("PATH")))
	}
	return env
}

// onceGoEnv runs the user's `go env` once for all the worker users.
func onceGoEnv(f func() (map[string]string, error)) func() (map[string]string, error) {
	var (
		once sync.Once
		m    map[string]string
		err  error
	)
	return func() (map[string]string, error) {
		once.Do(func() { m, err = f() })
		return m, err
	}
}

func appendDir(list []string, d string) []string {
	if slices.Contains(list, d) {
		return list
	}
	return append(list, d)
}

// slotUser is the worker user of slot i.
func slotUser(ctx context.Context, base string, i int) (*security.WorkerUser, error) {
	if os.Geteuid() != 0 {
		u, err := user.Current()
		if err != nil {
			return nil, err
		}
		gid, _ := strconv.Atoi(u.Gid)
		return &security.WorkerUser{Name: u.Username, UID: os.Geteuid(), GID: gid, Home: u.HomeDir}, nil
	}
	name := fmt.Sprintf("%s-%d", base, i)
	if len(name) > 31 {
		return nil, fmt.Errorf("worker user name %s is too long; shorten security.worker_user", name)
	}
	return security.EnsureWorkerUser(ctx, name)
}

// newClusterDriver sends the run's attempts to the cluster's agents
// (cluster.url): local runs zerg's own commands, the gateway on this side
// holds the key. It connects at the first attempt.
func newClusterDriver(opts Options, paths Paths, worker claude.Spec, local driver.Driver, meter *gateway.Meter) *driver.Cluster {
	cl := opts.Config.Cluster
	upstream := worker.API.BaseURL
	if upstream == "" {
		upstream = "https://api.anthropic.com"
	}
	verify := map[string]*driver.ClusterVerify{}
	if g, err := loadGraph(paths.Graph, opts.Root); err == nil {
		for _, t := range g.Tasks {
			if t.Verification == nil || strings.TrimSpace(t.Verification.Command) == "" {
				continue
			}
			verify[t.ID] = &driver.ClusterVerify{Command: t.Verification.Command, Timeout: t.Verification.Timeout(opts.Config.Verification.Timeout)}
		}
	}
	p := newProgress(opts.Progress)
	return &driver.Cluster{
		Repo: &gitx.Repo{Runner: gitx.New(opts.Root)}, Local: local, Mode: opts.Config.Mode,
		Connect:  func(ctx context.Context) (*nats.Conn, func(), error) { return ConnectCluster(ctx, opts.Root, cl) },
		Streams:  cluster.StreamsConfig{AckWait: cl.AckWait, MaxDeliver: cl.MaxDeliver},
		Verify:   func(task string) *driver.ClusterVerify { return verify[task] },
		Upstream: upstream, APIKey: string(worker.API.APIKey), AuthToken: string(worker.API.AuthToken), OAuthToken: string(worker.API.OAuthToken),
		Gateway:  gatewayPolicy(opts.Config, opts.CLI, meter),
		AgentKey: cl.AgentKey,
		State:    paths.State,
		Journal:  filepath.Join(paths.RunDir, "cluster.jsonl"),
		Progress: func(line string) { p.printf("%s", line) },
	}
}

// ConnectCluster reaches the cluster's server as the coordinator: the
// embedded one (started here, with the agents' result buckets) or the
// one cluster.creds names. done closes the connection and the server.
func ConnectCluster(ctx context.Context, root string, cl config.Cluster) (*nats.Conn, func(), error) {
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
	srv, err := StartClusterServer(root, cl)
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

// StartClusterServer starts the embedded server of the repository at
// root: TLS, listening on cluster.listen, its store, CA and the agents'
// password hashes in ClusterDir(root).
func StartClusterServer(root string, cl config.Cluster) (*cluster.Server, error) {
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
	return cluster.StartServer(cluster.ServerOptions{Dir: ClusterDir(root), Host: host, Port: p, TLS: true, TLSNames: names})
}

// IssueAgentCreds makes (or rotates) agent's credentials on the embedded
// server of the repository at root, with the address agents dial. The
// server must not be running: its store is one process's.
func IssueAgentCreds(ctx context.Context, root string, cl config.Cluster, agent string) (cluster.Creds, error) {
	srv, err := StartClusterServer(root, cl)
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

// AgentSandbox is sandbox mode for a zerg agent (docs/cluster.md): slots
// worker users, workspaces and lanes under dir, bubblewrap checked here
// first (fail closed), hideFiles (its credentials) covered in every sandbox. Its Upstream is a placeholder: each attempt's copy
// points at that attempt's end of the tunnel, and the key its gateway
// sends is the placeholder the coordinator's gateway replaces.
func AgentSandbox(ctx context.Context, dir string, repo *gitx.Repo, worker claude.Spec, slots int, hideFiles []string) (*driver.Sandbox, error) {
	cfg := config.Default()
	cfg.Mode = config.ModeSandbox
	opts := Options{Root: dir, Config: cfg}
	if err := sandboxReady(ctx, opts); err != nil {
		return nil, fmt.Errorf("sandbox mode cannot run on this machine: %w (zerg doctor says more)", err)
	}
	worker.API = claude.APISettings{BaseURL: "http://127.0.0.1:9", APIKey: driver.ClusterPlaceholderKey}
	paths := Paths{Workspaces: filepath.Join(dir, "lanes"), State: filepath.Join(dir, "state")}
	sb, _, err := newSandbox(ctx, opts, repo, paths, worker, slots, nil)
	if sb != nil {
		sb.HideFiles = hideFiles
	}
	return sb, err
}
