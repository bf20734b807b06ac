package run

import (
	"context"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/spec"
	"github.com/zergrush/zerg/internal/toolchain"
)

// The modes are internal/driver's factories (driver.Lookup): the run gives
// them its config, paths and services (driverEnv) and reads their
// Capabilities; it never chooses by the mode's name.

// driverEnv is what the config's mode's factory reads of the run.
func driverEnv(opts Options, paths Paths, g *spec.Graph) driver.Env {
	p := newProgress(opts.Progress)
	return driver.Env{
		Root: opts.Root, Feature: opts.Feature, Config: opts.Config, Repo: opts.repo(), RunAs: opts.RunAs,
		Workspaces: paths.Workspaces, State: paths.State, Board: paths.Board, RunDir: RunDirOf(opts.Root, opts.Feature),
		WorkspaceRoot: WorkspaceRoot, ClusterDir: ClusterDir(opts.Root), Graph: g,
		Progress: opts.Progress, Say: func(line string) { p.printf("%s", line) },
		Prepared: opts.prepared,
	}
}

// driverError is a factory's refusal as the run's error: the user's to fix
// (driver.InputError) or the machine's.
func driverError(opts Options, err error) error {
	if err == nil {
		return nil
	}
	if driver.IsInputError(err) {
		return &Error{Kind: BadInput, Feature: opts.Feature, Err: err}
	}
	return &Error{Kind: Setup, Feature: opts.Feature, Err: err}
}

// newDriver is the driver of the config's mode (driver.New), with slots
// workspaces in use at once. caches are the toolchains' caches its
// commands get (for zerg check's report). meter is budget.run_usd as the
// run's gateways enforce it (nil: none). g is the run's graph (nil: none).
func newDriver(ctx context.Context, opts Options, paths Paths, g *spec.Graph, worker claude.Spec, slots int, meter *gateway.Meter) (driver.Driver, []toolchain.Cache, error) {
	// Every driver makes its workspaces and lanes in these: zerg's own
	// before the first one.
	if err := paths.MakeWorkspaceDirs(); err != nil {
		return nil, nil, &Error{Kind: Setup, Feature: opts.Feature, Err: err}
	}
	env := driverEnv(opts, paths, g)
	env.Worker, env.Slots = worker, slots
	env.Gateway = driver.GatewayPolicy(opts.Config, opts.CLI, meter)
	d, caches, err := driver.New(ctx, env)
	if err != nil {
		return nil, nil, driverError(opts, err)
	}
	return d, caches, nil
}

// driverReady checks, before anything is written, that the config's mode
// can run here (driver.Ready), and keeps what it found for newDriver: the
// worker user it chose, the container boundary it found working.
func driverReady(ctx context.Context, opts *Options, paths Paths) error {
	p, err := driver.Ready(ctx, driverEnv(*opts, paths, nil))
	if err != nil {
		return driverError(*opts, err)
	}
	opts.prepared = p
	if p.RunAs != nil {
		opts.RunAs = p.RunAs
	}
	return nil
}
