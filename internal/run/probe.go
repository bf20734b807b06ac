package run

import (
	"context"
	"fmt"
	"slices"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

// A Claude Code release that sends something the run's gateway refuses
// (a beta under gateway.strict, a max_tokens above gateway.max_tokens, a
// model outside the policy) would fail every attempt's first request.
// The launch check finds it before any worker: one real turn of the CLI
// per model of the run, through a gateway with the run's policy, against
// a local stub (internal/cliprobe). What it learns (the model ids the
// aliases resolve to, the max_tokens the CLI asks for) goes into every
// attempt's policy.

// GatewayModes reports whether a config's workers reach the model API
// through zerg's gateway (driver.Capabilities.Gateway).
func GatewayModes(cfg config.Config) bool { return driver.CapabilitiesOf(cfg).Gateway }

// RunModels are the models a run's workers use: each task's (ModelFor)
// and the fallback, each once.
func RunModels(cfg config.Config, g *spec.Graph) []string {
	var models []string
	add := func(m string) {
		if m != "" && !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	if g != nil {
		for _, t := range g.Tasks {
			m, _ := runstate.ModelFor(cfg.Models, t)
			add(m)
		}
	} else {
		add(cfg.Models.Implement)
		add(cfg.Models.Simple)
	}
	add(cfg.Models.Fallback)
	return models
}

// ProbeCLI runs the launch probe of a config (and a graph, nil for the
// config's models alone): one turn of the worker template's CLI per model,
// launched as the workers are, through a gateway with the config's policy.
func ProbeCLI(ctx context.Context, cfg config.Config, g *spec.Graph, worker claude.Spec) (*cliprobe.Report, error) {
	policy := driver.GatewayPolicy(cfg, nil, nil)
	if cfg.Gateway.MaxTokens == 0 {
		policy.MaxTokens = 0 // learn what the CLI asks for, however much
	}
	return cliprobe.Run(ctx, cliprobe.Config{Worker: attempt.WorkerTemplate(cfg, worker), Models: RunModels(cfg, g), Policy: policy})
}

// LaunchCheck is the launch check of a run whose workers go through the
// gateway (nil, nil otherwise): the release must be one zerg supports,
// and one turn of it per model of the run must pass the run's gateway.
// A refusal is bad input naming the setting and the fix; a turn that did
// not run is a setup problem. It writes nothing outside a temporary
// directory it removes.
func LaunchCheck(ctx context.Context, opts Options, g *spec.Graph, worker claude.Spec) (*cliprobe.Report, error) {
	cfg := opts.Config
	if !GatewayModes(cfg) {
		return nil, nil
	}
	rep, err := ProbeCLI(ctx, cfg, g, worker)
	if err != nil {
		return nil, &Error{Kind: Setup, Feature: opts.Feature, Err: err}
	}
	if err := claude.CheckSupported(worker.Binary, rep.Version); err != nil {
		return rep, &Error{Kind: BadInput, Feature: opts.Feature, Err: err}
	}
	release := "claude " + rep.Version
	if rep.Version == "" {
		release = "claude"
	}
	if m, r := rep.Refusal(); r != nil {
		fix := r.Fix
		if fix == "" {
			fix = "zerg doctor says more"
		}
		return rep, &Error{Kind: BadInput, Feature: opts.Feature, Err: fmt.Errorf(
			"%s (%s) with model %s: zerg's gateway would refuse the CLI's own request with this run's settings: %s; %s",
			release, worker.Binary, m.Model, r.Reason, fix)}
	}
	if m, why := rep.Problem(); why != "" {
		return rep, &Error{Kind: Setup, Feature: opts.Feature, Err: fmt.Errorf(
			"%s (%s) with model %s: zerg's launch check could not run one turn of it: %s; zerg doctor says more", release, worker.Binary, m.Model, why)}
	}
	return rep, nil
}
