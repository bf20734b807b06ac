package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/container"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
	"github.com/zergrush/zerg/internal/toolchain"
)

// A Factory is one execution mode (config's mode): what it can, whether it
// can run here, and how its driver is built. Lookup is the one place that
// chooses by the mode's name; everything else reads a Factory or its
// Capabilities (docs/drivers.md).
type Factory struct {
	// Mode is the name .zerg/config.yaml gives it (config.Modes).
	Mode string
	// Capabilities are what the mode's driver can, for the callers that
	// decide by them instead of by the mode's name.
	Capabilities Capabilities
	// Ready checks, before anything is written, that the mode can run on
	// this machine, and finds what New needs (a worker user, a container
	// engine and image). It fails closed: never a silent fall back to
	// another mode. An *InputError is the user's to fix; any other error is
	// the machine's.
	Ready func(ctx context.Context, env Env) (Prepared, error)
	// New builds the mode's driver for env.Slots workspaces in use at once.
	// caches are the toolchains' caches its commands get (zerg check's
	// report).
	New func(ctx context.Context, env Env) (d Driver, caches []toolchain.Cache, err error)
	// Reap removes what a dead coordinator of the run whose directory is
	// runDir left outside the processes its log records (containers, by the
	// run's label), and counts it; nil: a mode that leaves nothing else.
	Reap func(ctx context.Context, runDir string) int
	// Probe is what zerg doctor checks for the mode beyond the CLI and git
	// (ProbeNone: nothing); ProbeRequired makes doctor fail, not note, when
	// the configured mode's probe does not pass.
	Probe         Probe
	ProbeRequired bool
	// Agent is the isolation a zerg agent of this mode gives the attempts
	// it takes (docs/cluster.md); nil: no agent runs this mode.
	Agent func(ctx context.Context, env AgentEnv) (AgentIsolation, error)
}

// Capabilities are what a mode's driver can. The run records them in its
// first event (runstate.RunStarted), so that what reads the run later (the
// resume check, the run view, the cost) reads what the run ran with.
type Capabilities struct {
	// StartsWorker: zerg starts the worker. False in tasks mode, where the
	// user's Claude Code session runs it with its own binary and
	// credentials, and the workspaces are in the repository, where the
	// session reaches them.
	StartsWorker bool `json:"starts_worker"`
	// BoundsCommands: an isolation of the operating system bounds the
	// worker's commands, so its hook refuses only what reaches outside it.
	BoundsCommands bool `json:"bounds_commands"`
	// ToolsFromImage: the worker's tools and modules are the image's (a
	// container), not the host's.
	ToolsFromImage bool `json:"tools_from_image"`
	// Gateway: the worker reaches the model API through zerg's gateway,
	// which alone holds the key and enforces the request policy.
	Gateway bool `json:"gateway"`
	// MeasuresUsage: zerg sees the worker's usage (the CLI's report or the
	// gateway's record), so the run can count tokens and dollars.
	MeasuresUsage bool `json:"measures_usage"`
	// Remote: the worker runs on another machine (cluster.url).
	Remote bool `json:"remote"`
	// PreparesWorkers: an attempt's worker can be started before the
	// attempt may run, waiting for its prompt, and its workspace laid again
	// under it (attempt.Prepare); the driver has a worker slot for each.
	PreparesWorkers bool `json:"prepares_workers,omitempty"`
	// Workspace is the kind of workspace an attempt gets.
	Workspace WorkspaceKind `json:"workspace"`
}

// WorkspaceKind is what an attempt's workspace is, which decides what zerg's
// own git may do in it.
type WorkspaceKind string

const (
	// WorktreeWorkspace is a worktree of the user's repository (subprocess
	// mode): zerg's git commits in it.
	WorktreeWorkspace WorkspaceKind = "worktree"
	// CloneWorkspace is a private clone whose git is the worker's
	// (sandbox, container, tasks mode): zerg runs no git in it.
	CloneWorkspace WorkspaceKind = "clone"
	// ResultWorkspace is a directory that holds what another machine
	// handed back (cluster mode): there is no git in it.
	ResultWorkspace WorkspaceKind = "result"
)

// ZergCommitsIn reports whether zerg's own git may commit what an abandoned
// attempt left in a workspace of this kind. A kind the log did not record
// (a run from before it did) is judged from the workspace at dir: a private
// clone has a .git directory of its own.
func (k WorkspaceKind) ZergCommitsIn(dir string) bool {
	if k == "" {
		return !hasGitDir(dir)
	}
	return k == WorktreeWorkspace
}

// Probe names a check of zerg doctor.
type Probe string

const (
	ProbeNone      Probe = ""
	ProbeSandbox   Probe = "sandbox"   // a sandbox starts (ProbeSandboxAs)
	ProbeContainer Probe = "container" // a container of the image starts (ProbeContainerOf)
)

// Prepared is what a factory's Ready found for its New.
type Prepared struct {
	// RunAs is the worker user Ready chose (subprocess mode as root), nil
	// when it chose none.
	RunAs *security.WorkerUser
	// box is container mode's boundary as Ready found it working.
	box *container.Box
}

// Env is what a factory reads to check and build its driver: the run's
// config and paths, and the services of the coordinator's package, which
// internal/driver must not import.
type Env struct {
	Root    string // the repository's top level
	Feature string
	Config  config.Config
	Repo    *gitx.Repo
	// Worker is the template of every worker's launch spec.
	Worker claude.Spec
	// Slots is how many workspaces are in use at once.
	Slots int
	// Gateway is the template of every attempt's gateway policy.
	Gateway gateway.Policy
	// RunAs is the unprivileged user workers run as (nil: zerg's own).
	RunAs *security.WorkerUser
	// Workspaces, State and Board are the feature's workspace directory,
	// its worker state and tasks mode's board; RunDir is its run's
	// directory (.zerg/runs/FEATURE).
	Workspaces, State, Board, RunDir string
	// WorkspaceRoot is the directory of every workspace (ZERG_WORKSPACES),
	// or why it cannot be used.
	WorkspaceRoot func() (string, error)
	// ClusterDir is the embedded cluster server's state.
	ClusterDir string
	// Graph is the run's task graph (the cluster driver's verifications);
	// nil: none.
	Graph *spec.Graph
	// Progress receives what a step prints at length (an image's build);
	// Say one notable line. Either may be nil.
	Progress io.Writer
	Say      func(line string)
	// Prepared is what Ready found.
	Prepared Prepared
}

func (e Env) say(format string, a ...any) {
	if e.Say != nil {
		e.Say(fmt.Sprintf(format, a...))
	}
}

// InputError is a mode that cannot run for a reason the user fixes in the
// config or the invocation, not on the machine.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// IsInputError reports whether err is an *InputError.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

// AgentEnv is what an agent's isolation is built from.
type AgentEnv struct {
	// Dir is the agent's state (lanes, state).
	Dir string
	// Repo makes the agent's repository of the bases.
	Repo   func(ctx context.Context) (*gitx.Repo, error)
	Worker claude.Spec
	Slots  int
	// HideFiles are covered in every sandbox (the agent's credentials).
	HideFiles []string
	// WorkspaceRoot is the directory of every workspace (ZERG_WORKSPACES),
	// or why it cannot be used.
	WorkspaceRoot func() (string, error)
}

// AgentIsolation is what an agent gives its attempts: a sandbox, or the
// worker user its subprocesses run as (both nil: zerg's own user).
type AgentIsolation struct {
	Sandbox *Sandbox
	RunAs   *security.WorkerUser
}

// factories are the modes, in the order zerg doctor and the docs list them.
// A new mode is its factory file and one line here.
var factories = []Factory{
	sandboxFactory,
	subprocessFactory,
	containerFactory,
	tasksFactory,
}

// registry guards factories against a Register while a run looks up.
var registry sync.RWMutex

// Lookup is the mode's factory: the one switch on the mode's name.
func Lookup(mode string) (Factory, bool) {
	registry.RLock()
	defer registry.RUnlock()
	i := slices.IndexFunc(factories, func(f Factory) bool { return f.Mode == mode })
	if i < 0 {
		return Factory{}, false
	}
	return factories[i], true
}

// Factories are the registered modes, in order.
func Factories() []Factory {
	registry.RLock()
	defer registry.RUnlock()
	return slices.Clone(factories)
}

// Register adds a mode (a test's fake one); the returned func removes it.
func Register(f Factory) (unregister func()) {
	registry.Lock()
	defer registry.Unlock()
	factories = append(factories, f)
	return func() {
		registry.Lock()
		defer registry.Unlock()
		factories = slices.DeleteFunc(factories, func(g Factory) bool { return g.Mode == f.Mode })
	}
}

// CapabilitiesOf are the capabilities of cfg's mode, with cluster.url
// sending its workers to another machine, whose model requests come
// through the gateway on this side (the zero value for a mode that has no
// factory).
func CapabilitiesOf(cfg config.Config) Capabilities {
	f, _ := Lookup(cfg.Mode)
	c := f.Capabilities
	if cfg.Cluster.URL != "" && c.StartsWorker {
		c.Remote, c.Gateway, c.MeasuresUsage = true, true, true
		c.Workspace = ResultWorkspace
	}
	return c
}

// ModeCapabilities are the capabilities a run recorded, or, for a log from
// before runs recorded them, those of the mode it recorded. A log from
// before runs recorded their mode is one whose workers zerg started (tasks
// mode came later), in a workspace of a kind it did not record.
func ModeCapabilities(mode string, recorded *Capabilities) Capabilities {
	if recorded != nil {
		return *recorded
	}
	if f, ok := Lookup(mode); ok {
		return f.Capabilities
	}
	return Capabilities{StartsWorker: true, MeasuresUsage: true}
}

// Ready checks that env.Config's mode can run here (Factory.Ready).
func Ready(ctx context.Context, env Env) (Prepared, error) {
	f, ok := Lookup(env.Config.Mode)
	if !ok {
		return Prepared{}, noDriver(env.Config.Mode)
	}
	if f.Ready == nil {
		return Prepared{}, nil
	}
	return f.Ready(ctx, env)
}

// New is the driver of env.Config's mode, sent to the cluster's agents when
// cluster.url is set: the one place that builds a driver.
func New(ctx context.Context, env Env) (Driver, []toolchain.Cache, error) {
	f, ok := Lookup(env.Config.Mode)
	if !ok {
		return nil, nil, noDriver(env.Config.Mode)
	}
	local, caches, err := f.New(ctx, env)
	if err != nil || env.Config.Cluster.URL == "" {
		return local, caches, err
	}
	return newClusterDriver(env, local), caches, nil
}

func noDriver(mode string) error {
	return &InputError{fmt.Errorf("mode %q has no driver in this version", mode)}
}

// Leftover is what a dead coordinator's log recorded of an open attempt's
// worker.
type Leftover struct {
	Marker    string
	PIDs      []claude.Proc
	Workspace string
}

// ReapRun removes what a dead coordinator of the run at runDir left: the
// worker processes its log recorded (only those: processes zerg did not
// start are never touched), and what each mode finds by the run's label
// (containers), whatever mode the run was in.
func ReapRun(ctx context.Context, runDir string, recorded []Leftover) (killed, removed int) {
	for _, o := range recorded {
		if len(o.PIDs) > 0 || o.Marker != "" || o.Workspace != "" {
			killed += len(claude.KillRecorded(o.Marker, o.PIDs, reapGrace, o.Workspace))
		}
	}
	for _, f := range Factories() {
		if f.Reap != nil {
			removed += f.Reap(ctx, runDir)
		}
	}
	return killed, removed
}
