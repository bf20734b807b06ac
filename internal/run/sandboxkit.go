package run

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/cgroup"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/sandbox"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/toolchain"
)

// sandboxKit is what every sandboxed attempt of a run shares: the pool of
// worker users (one per concurrent worker, so no two sandboxes ever run as
// the same uid), what is hidden and what is visible inside, the limits and
// the real API the gateways forward to.
type sandboxKit struct {
	users    chan *security.WorkerUser
	template attempt.Sandboxed
	// tools is what the repository's toolchains give a sandboxed command
	// whose writable build cache is the given directory: the same shared
	// directories for every command, a build cache of its own for each
	// (no worker ever writes to a cache another command reads).
	tools func(buildCache string) toolchain.Env
}

// newSandboxKit prepares sandbox mode for workers concurrent attempts. As
// root, each worker slot gets its own system user (created when missing);
// otherwise every sandbox runs as zerg's own user, and the namespaces keep
// them apart.
func newSandboxKit(ctx context.Context, opts Options, paths Paths, worker claude.Spec, workers int, meter *gateway.Meter) (*sandboxKit, error) {
	k := &sandboxKit{users: make(chan *security.WorkerUser, workers)}
	host := toolchain.LocalHost()
	host.GoEnv = onceGoEnv(host.GoEnv)
	detected := toolchain.Detect(opts.Root)
	for i := 1; i <= workers; i++ {
		u, err := slotUser(ctx, opts.Config.Security.WorkerUser, i)
		if err != nil {
			return nil, &Error{Kind: Setup, Feature: opts.Feature, Err: err}
		}
		k.users <- u
	}
	k.tools = func(buildCache string) toolchain.Env { return toolsFor(host, detected, opts, buildCache) }
	// Memory and processes as totals per attempt where the machine has
	// cgroups zerg may create; the per-process limits hold anyway.
	groups, err := cgroup.Detect()
	if err != nil {
		groups = nil
	}
	root, err := WorkspaceRoot()
	if err != nil {
		return nil, &Error{Kind: Setup, Feature: opts.Feature, Err: err}
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
	k.template = attempt.Sandboxed{
		Hide:     hide,
		ReadOnly: ro,
		Limits: sandbox.Limits{MemoryBytes: int64(sb.MemoryMB) << 20, Processes: sb.Processes, CPUSeconds: sb.CPUSeconds,
			FileSizeBytes: int64(sb.FileSizeMB) << 20, OpenFiles: sb.OpenFiles},
		Upstream: upstream, APIKey: string(worker.API.APIKey), AuthToken: string(worker.API.AuthToken),
		Allow:        opts.Config.Egress.Allow,
		MaxFileBytes: int64(sb.MaxCommitFileMB) << 20,
		Gateway: gateway.Policy{MaxTokens: int64(opts.Config.Gateway.MaxTokens), Betas: opts.Config.Gateway.Betas,
			ServerTools: opts.Config.Gateway.ServerTools, Run: meter},
		Cgroups: groups,
	}
	return k, nil
}

// toolsFor plans the toolchains for commands whose writable build cache
// is buildCache.
func toolsFor(host toolchain.Host, detected []toolchain.Toolchain, opts Options, buildCache string) toolchain.Env {
	c := opts.Config
	env := toolchain.Plan(host, detected, toolchain.Options{
		Off: c.Toolchains.Off, CachesOff: c.Caches.Off, ExtraPaths: c.Toolchains.Paths, ExtraReadOnly: c.Caches.ReadOnly,
		BuildCache: buildCache, Zerg: sandbox.InsideExecutable,
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

// acquire takes a worker user for one sandboxed command; release gives it back.
func (k *sandboxKit) acquire(ctx context.Context) (*security.WorkerUser, error) {
	select {
	case u := <-k.users:
		return u, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

func (k *sandboxKit) release(u *security.WorkerUser) { k.users <- u }

// forCommand is the isolation of one attempt, or one command of zerg's
// own, run as u with buildCache (a directory of its own, created empty for
// it and removed after it: attempt.Sandboxed.Private) as its writable
// build cache.
func (k *sandboxKit) forCommand(u *security.WorkerUser, buildCache string) *attempt.Sandboxed {
	s := k.template
	s.User = u
	t := k.tools(buildCache)
	s.Shared, s.Private, s.Env = t.Shared, t.Writable, t.Vars
	return &s
}
