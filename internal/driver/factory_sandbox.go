package driver

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/zergrush/zerg/internal/cgroup"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/container"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/sandbox"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/toolchain"
)

// sandboxFactory is sandbox mode: a private clone, bubblewrap on the
// host's root, a control group and a gateway (docs/sandbox.md).
var sandboxFactory = Factory{
	Mode: config.ModeSandbox,
	Capabilities: Capabilities{StartsWorker: true, BoundsCommands: true, Gateway: true, MeasuresUsage: true,
		Workspace: CloneWorkspace, PreparesWorkers: true},
	Ready: func(ctx context.Context, env Env) (Prepared, error) {
		if err := sandboxSupported(); err != nil {
			// Another OS: one line naming the modes that run there.
			return Prepared{}, err
		}
		if err := sandboxReady(ctx, env); err != nil {
			return Prepared{}, fmt.Errorf(
				"sandbox mode cannot run on this machine: %w; fix that (zerg doctor says more) or set mode: subprocess in .zerg/config.yaml, which is weaker (docs/security.md)", err)
		}
		return Prepared{}, nil
	},
	New: func(ctx context.Context, env Env) (Driver, []toolchain.Cache, error) {
		sb, caches, err := newSandbox(ctx, env, false)
		if err != nil {
			return nil, nil, err
		}
		return sb, caches, nil
	},
	Probe: ProbeSandbox,
	Agent: func(ctx context.Context, env AgentEnv) (AgentIsolation, error) {
		repo, err := env.Repo(ctx)
		if err != nil {
			return AgentIsolation{}, err
		}
		sb, err := agentSandbox(ctx, env, repo)
		if err != nil {
			return AgentIsolation{}, err
		}
		return AgentIsolation{Sandbox: sb}, nil
	},
}

// containerFactory is container mode: the sandbox driver whose boundary is
// a podman or docker container of the project's image (docs/container.md).
var containerFactory = Factory{
	Mode: config.ModeContainer,
	Capabilities: Capabilities{StartsWorker: true, BoundsCommands: true, ToolsFromImage: true, Gateway: true,
		MeasuresUsage: true, Workspace: CloneWorkspace},
	Ready: func(ctx context.Context, env Env) (Prepared, error) {
		if err := containerSupported(); err != nil {
			// Another OS: one line naming the modes that run there.
			return Prepared{}, err
		}
		box, err := containerReady(ctx, env)
		if err != nil {
			return Prepared{}, fmt.Errorf(
				"container mode cannot run here: %w; fix that (zerg doctor says more) or set another mode in .zerg/config.yaml (docs/container.md)", err)
		}
		return Prepared{box: box}, nil
	},
	New: func(ctx context.Context, env Env) (Driver, []toolchain.Cache, error) {
		sb, caches, err := newSandbox(ctx, env, true)
		if err != nil {
			return nil, nil, err
		}
		return sb, caches, nil
	},
	// Containers are not in the log's process records: they carry the
	// run's label.
	Reap:          container.ReapAll,
	Probe:         ProbeContainer,
	ProbeRequired: true,
}

// sandboxSupported and containerSupported are the packages' Supported;
// the tests play another OS.
var (
	sandboxSupported   = sandbox.Supported
	containerSupported = container.Supported
)

// sandboxReady starts a sandbox as the first worker slot's user.
func sandboxReady(ctx context.Context, env Env) error {
	u, err := slotUser(ctx, env.Config.Security.WorkerUser, 1)
	if err != nil {
		return err
	}
	if u.UID != os.Geteuid() {
		// The slot users create and own the workspaces' contents.
		if err := checkSetup(env.WorkspaceRoot, u); err != nil {
			return err
		}
	}
	return sandbox.Check(ctx, u.UID, u.GID)
}

// containerReady finds the engine and the image of container mode and
// starts one container of it as the first worker slot's user.
func containerReady(ctx context.Context, env Env) (*container.Box, error) {
	u, err := slotUser(ctx, env.Config.Security.WorkerUser, 1)
	if err != nil {
		return nil, err
	}
	if u.UID != os.Geteuid() {
		if err := checkSetup(env.WorkspaceRoot, u); err != nil {
			return nil, err
		}
	}
	box, err := containerBox(ctx, env)
	if err != nil {
		return nil, err
	}
	if err := container.Check(ctx, *box, u.UID, u.GID, sandboxLimits(env.Config.Sandbox)); err != nil {
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
func containerBox(ctx context.Context, env Env) (*container.Box, error) {
	rt, err := container.Detect(ctx, env.Config.Container.Runtime)
	if err != nil {
		return nil, err
	}
	img, err := container.ResolveImage(ctx, rt, env.Root, env.Config.Container.Image, env.Progress)
	if err != nil {
		return nil, err
	}
	how := "rootful"
	if rt.Rootless {
		how = "rootless"
	}
	// A rush finds the boundary twice (its check, then the run): what it
	// says of the image is said once.
	say := func(format string, a ...any) {
		if line := fmt.Sprintf(format, a...); saidOnce(line) {
			env.say("%s", line)
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
	return &container.Box{Runtime: rt, Image: img.Ref, Run: env.RunDir, Path: path}, nil
}

// sandboxLimits are the sandbox.* limits of each sandboxed command.
func sandboxLimits(sb config.Sandbox) sandbox.Limits {
	return sandbox.Limits{MemoryBytes: int64(sb.MemoryMB) << 20, Processes: sb.Processes, CPUSeconds: sb.CPUSeconds,
		FileSizeBytes: int64(sb.FileSizeMB) << 20, OpenFiles: sb.OpenFiles}
}

// stateDirMode is the mode of the worker state directory (the run's
// workspace directories' mode): worker users pass through it.
const stateDirMode os.FileMode = 0o711

// newSandbox prepares sandbox mode (inImage: container mode) for
// env.Slots concurrent workspaces. As root, each slot gets its own system
// user (created when missing); otherwise every sandbox runs as zerg's own
// user, and the namespaces keep them apart.
func newSandbox(ctx context.Context, env Env, inImage bool) (*Sandbox, []toolchain.Cache, error) {
	slots, worker := env.Slots, env.Worker
	users := make(chan *security.WorkerUser, slots)
	host := toolchain.LocalHost()
	host.GoEnv = onceGoEnv(host.GoEnv)
	detected := toolchain.Detect(env.Root)
	for i := 1; i <= slots; i++ {
		u, err := slotUser(ctx, env.Config.Security.WorkerUser, i)
		if err != nil {
			return nil, nil, err
		}
		users <- u
	}
	// Memory and processes as totals per attempt where the machine has
	// cgroups zerg may create; the per-process limits hold anyway. A
	// container has the engine's cgroup instead.
	var box Boundary
	groups, err := cgroup.Detect()
	if err != nil && !inImage && env.Config.Sandbox.MemoryMB > 0 {
		// The docs promise a total only where there is a group: say so
		// when there is none, rather than let the limit mean less unsaid.
		env.say("zerg: no cgroup here (%s): sandbox.memory_mb (%d MiB) bounds each process's data segment, not the attempt's processes together (zerg doctor, docs/sandbox.md)",
			strings.TrimPrefix(err.Error(), cgroup.ErrUnavailable.Error()+": "), env.Config.Sandbox.MemoryMB)
	}
	if err != nil || inImage {
		groups = nil
	}
	if inImage {
		b := env.Prepared.box
		if b == nil {
			if b, err = containerBox(ctx, env); err != nil {
				return nil, nil, err
			}
		}
		// The containers end with this coordinator, as sandboxes do.
		if err := os.MkdirAll(env.State, stateDirMode); err != nil {
			return nil, nil, err
		}
		lifeline := filepath.Join(env.State, fmt.Sprintf("lifeline-%d", os.Getpid()))
		if err := container.NewLifeline(lifeline); err != nil {
			return nil, nil, err
		}
		withLife := *b
		withLife.Lifeline = lifeline
		box = withLife
	}
	root, err := env.WorkspaceRoot()
	if err != nil {
		return nil, nil, err
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
	sb := env.Config.Sandbox
	upstream := worker.API.BaseURL
	if upstream == "" {
		upstream = "https://api.anthropic.com"
	}
	// The user's repository (its other branches, stashes, .zerg), every
	// workspace and worker state, and the home of the user running zerg
	// (keys, cloud credentials), wherever it is: none of it is visible
	// inside. /home, /root and /tmp are covered anyway.
	hide := []string{env.Root, root}
	if home, err := os.UserHomeDir(); err == nil && home != "/" {
		if fi, err := os.Stat(home); err == nil && fi.IsDir() {
			hide = appendDir(hide, home)
		}
	}
	d := &Sandbox{
		Repo:     env.Repo,
		Users:    users,
		Hide:     hide,
		ReadOnly: ro,
		// A build cache of each workspace's own (no worker ever writes to
		// a cache another command reads), the same shared directories for
		// every one.
		Tools: func(buildCache string) ([]string, []string, []string) {
			t := toolsFor(host, detected, env.Config, inImage, buildCache)
			return t.Shared, t.Writable, t.Vars
		},
		Boundary: box,
		Limits:   sandboxLimits(sb),
		Upstream: upstream, APIKey: string(worker.API.APIKey), AuthToken: string(worker.API.AuthToken), OAuthToken: string(worker.API.OAuthToken),
		Allow:        env.Config.Egress.Allow,
		MaxFileBytes: int64(sb.MaxCommitFileMB) << 20,
		Gateway:      env.Gateway,
		Cgroups:      groups,
		Lanes:        env.Workspaces,
	}
	return d, toolsFor(host, detected, env.Config, inImage, "").Caches, nil
}

// toolsFor plans the toolchains for commands whose writable build cache
// is buildCache.
func toolsFor(host toolchain.Host, detected []toolchain.Toolchain, c config.Config, inImage bool, buildCache string) toolchain.Env {
	env := toolchain.Plan(host, detected, toolchain.Options{
		Off: c.Toolchains.Off, CachesOff: c.Caches.Off, ExtraPaths: c.Toolchains.Paths, ExtraReadOnly: c.Caches.ReadOnly,
		BuildCache: buildCache, Zerg: sandbox.InsideExecutable, InImage: inImage,
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

// agentSandbox is sandbox mode for a zerg agent (docs/cluster.md):
// env.Slots worker users, workspaces and lanes under env.Dir, bubblewrap
// checked here first (fail closed), env.HideFiles (its credentials)
// covered in every sandbox. Its Upstream is a placeholder: each attempt's
// copy points at that attempt's end of the tunnel, and the key its gateway
// sends is the placeholder the coordinator's gateway replaces.
func agentSandbox(ctx context.Context, a AgentEnv, repo *gitx.Repo) (*Sandbox, error) {
	cfg := config.Default()
	cfg.Mode = config.ModeSandbox
	env := Env{Root: a.Dir, Config: cfg, Repo: repo, Slots: a.Slots, Gateway: GatewayPolicy(cfg, nil, nil),
		Workspaces: filepath.Join(a.Dir, "lanes"), State: filepath.Join(a.Dir, "state"), WorkspaceRoot: a.WorkspaceRoot}
	if err := sandboxReady(ctx, env); err != nil {
		return nil, fmt.Errorf("sandbox mode cannot run on this machine: %w (zerg doctor says more)", err)
	}
	env.Worker = a.Worker
	env.Worker.API = claude.APISettings{BaseURL: "http://127.0.0.1:9", APIKey: ClusterPlaceholderKey}
	sb, _, err := newSandbox(ctx, env, false)
	if sb != nil {
		sb.HideFiles = a.HideFiles
	}
	return sb, err
}
