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
	// tools is what the repository's toolchains give each worker user's
	// commands, by uid: the same shared directories for all, a build cache
	// of its own each.
	tools map[int]toolchain.Env
}

// newSandboxKit prepares sandbox mode for workers concurrent attempts. As
// root, each worker slot gets its own system user (created when missing);
// otherwise every sandbox runs as zerg's own user, and the namespaces keep
// them apart.
func newSandboxKit(ctx context.Context, opts Options, paths Paths, worker claude.Spec, workers int, meter *gateway.Meter) (*sandboxKit, error) {
	k := &sandboxKit{users: make(chan *security.WorkerUser, workers), tools: map[int]toolchain.Env{}}
	host := toolchain.LocalHost()
	host.GoEnv = onceGoEnv(host.GoEnv)
	detected := toolchain.Detect(opts.Root)
	for i := 1; i <= workers; i++ {
		u, err := slotUser(ctx, opts.Config.Security.WorkerUser, i)
		if err != nil {
			return nil, &Error{Kind: Setup, Feature: opts.Feature, Err: err}
		}
		k.users <- u
		if _, done := k.tools[u.UID]; done {
			continue
		}
		env, err := toolsFor(host, detected, opts, paths, u)
		if err != nil {
			return nil, &Error{Kind: Setup, Feature: opts.Feature, Err: err}
		}
		k.tools[u.UID] = env
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
	}
	return k, nil
}

// toolsFor plans the toolchains for u's commands and creates u's build
// cache: <paths.Caches>/<user>, u's own, inside a directory every worker
// user may pass through but not list.
func toolsFor(host toolchain.Host, detected []toolchain.Toolchain, opts Options, paths Paths, u *security.WorkerUser) (toolchain.Env, error) {
	c := opts.Config
	dir := filepath.Join(paths.Caches, u.Name)
	if err := os.MkdirAll(paths.Caches, 0o711); err != nil {
		return toolchain.Env{}, fmt.Errorf("create the build caches: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return toolchain.Env{}, fmt.Errorf("create the build cache of %s: %w", u.Name, err)
	}
	if err := os.Chown(dir, u.UID, u.GID); err != nil {
		return toolchain.Env{}, fmt.Errorf("hand the build cache to %s: %w", u.Name, err)
	}
	env := toolchain.Plan(host, detected, toolchain.Options{
		Off: c.Toolchains.Off, CachesOff: c.Caches.Off, ExtraPaths: c.Toolchains.Paths, ExtraReadOnly: c.Caches.ReadOnly,
		BuildCache: dir, Zerg: sandbox.InsideExecutable,
	})
	if len(env.Path) > 0 {
		env.Vars = append(env.Vars, "PATH="+env.PathValue(os.Getenv("PATH")))
	}
	return env, nil
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

// forAttempt is the isolation of one attempt run as u.
func (k *sandboxKit) forAttempt(u *security.WorkerUser) *attempt.Sandboxed {
	s := k.template
	s.User = u
	t := k.tools[u.UID]
	s.Shared, s.Writable, s.Env = t.Shared, t.Writable, t.Vars
	return &s
}
