package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/journey"
	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/security"
)

// journeyFlags are the flags plan, design and review share with rush.
type journeyFlags struct {
	rehearse bool
	scenario string
}

// journeyCtx is what plan, design and review share: the repository, the
// config, the feature's spec dir, and (after connect) the model.
type journeyCtx struct {
	a       *app
	cwd     string
	root    string
	feature string
	specDir string
	cfg     config.Config
	repo    *gitx.Repo

	scratch *journey.Scratch // the clone and the sessions' state, outside the repository
}

// openJourney checks the repository, the feature name, the flags and the
// config (journey.Open); it writes nothing.
func openJourney(ctx context.Context, a *app, feature string, f journeyFlags) (*journeyCtx, error) {
	cwd, err := a.getwd()
	if err != nil {
		return nil, err
	}
	p, err := journey.Open(ctx, cwd, feature, f.rehearse, f.scenario, loadProjectConfig)
	if err != nil {
		return nil, err
	}
	return &journeyCtx{a: a, cwd: cwd, root: p.Root, feature: p.Feature, cfg: p.Config, repo: p.Repo,
		specDir: p.SpecDir, scratch: journey.NewScratch(feature)}, nil
}

// rel names a path for messages: relative to the working directory.
func (j *journeyCtx) rel(p string) string { return pathx.Short(j.cwd, p) }

// close removes the scratch directory and stops the scripted model.
func (j *journeyCtx) close() { j.scratch.Close() }

// connect returns the model sessions run with (journey.Scratch.Connect).
// Without needKey (an interactive session) a CLI logged in on its own is
// enough.
func (j *journeyCtx) connect(ctx context.Context, f journeyFlags, needKey bool) (*journey.Claude, error) {
	zerg, err := claude.ZergBinary()
	if err != nil {
		return nil, err
	}
	return j.scratch.Connect(j.cfg, journey.Connection{ZergBinary: zerg, Rehearse: f.rehearse, Scenario: f.scenario, SpecDir: j.specDir,
		API:   func() (claude.APISettings, error) { return apiFromConfig(j.cfg, needKey) },
		RunAs: func() (*security.WorkerUser, error) { return workerUserForRoot(ctx, j.cfg) }})
}

// clone makes a private clone of commit for the sessions (journey.Scratch.Clone).
func (j *journeyCtx) clone(ctx context.Context, commit string) (string, error) {
	return j.scratch.Clone(ctx, j.repo, commit)
}

// head is the user's HEAD commit; a repository without one is bad input.
func (j *journeyCtx) head(ctx context.Context) (string, error) {
	return journey.Head(ctx, j.repo, j.root)
}

// copyIn puts an existing file of the spec dir into the clone's draft dir.
func copyIn(src, workdir, name string) error { return journey.CopyIn(src, workdir, name) }

// sessionFailed is a model session that did not finish: exit 1, or 3 when
// zerg was interrupted.
func sessionFailed(what string, err error) error {
	if errors.Is(err, context.Canceled) {
		return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("%s: interrupted; nothing written", what)}
	}
	return failedf("%s: %v; nothing written", what, err)
}

// fmtUSD prints a cost.
func fmtUSD(v float64) string { return fmt.Sprintf("$%.2f", v) }
