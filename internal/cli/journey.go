package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/journey"
	"github.com/zergrush/zerg/internal/mockapi"
	"github.com/zergrush/zerg/internal/run"
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

	tmp     string // private scratch: the clone and the sessions' state
	closers []func()
}

// openJourney checks the feature name, the flags and the config; it writes
// nothing.
func openJourney(ctx context.Context, a *app, feature string, f journeyFlags) (*journeyCtx, error) {
	cwd, err := a.getwd()
	if err != nil {
		return nil, err
	}
	root, err := zergRepoRoot(ctx, cwd)
	if err != nil {
		return nil, err
	}
	if err := journey.CheckFeature(feature); err != nil {
		return nil, usageErrorf("%v", err)
	}
	if !f.rehearse && f.scenario != "" {
		return nil, usageErrorf("--scenario needs --rehearse")
	}
	cfg, err := loadProjectConfig(root)
	if err != nil {
		return nil, err
	}
	repo, err := gitx.OpenRepo(ctx, root)
	if err != nil {
		return nil, err
	}
	return &journeyCtx{a: a, cwd: cwd, root: root, feature: feature, cfg: cfg, repo: repo,
		specDir: run.SpecDir(root, feature)}, nil
}

// rel names a path for messages: relative to the working directory.
func (j *journeyCtx) rel(p string) string { return rel(j.cwd, p) }

// close removes the scratch directory and stops the scripted model.
func (j *journeyCtx) close() {
	for i := len(j.closers) - 1; i >= 0; i-- {
		j.closers[i]()
	}
}

// connect finds the claude binary and the API (the scripted one under
// --rehearse) and returns the model sessions run with. Everything it
// checks is input: a failure is exit 2 and nothing is written. Without
// needKey (an interactive session) a CLI logged in on its own is enough.
func (j *journeyCtx) connect(ctx context.Context, f journeyFlags, needKey bool) (*journey.Claude, error) {
	loc, err := claude.Locate(j.cfg.Claude.Path)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	base := claude.Spec{Binary: loc.Path, Hook: claude.HookSpec{ZergBinary: hookBinary(self)}}
	if f.rehearse {
		scenario := f.scenario
		if scenario == "" {
			scenario = filepath.Join(j.specDir, "scenario.yaml")
		}
		sc, err := mockapi.LoadScenario(scenario)
		if err != nil {
			return nil, badInput(err)
		}
		srv := mockapi.NewServer(sc)
		url, err := srv.Start("127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		j.closers = append(j.closers, func() { _ = srv.Close() })
		base.API = claude.APISettings{BaseURL: url, APIKey: "zerg-rehearsal"}
		base.MaxRetries = 2
		base.APITimeout = sc.RehearsalTimeout()
	} else {
		if base.API, err = apiFromConfig(j.cfg, needKey); err != nil {
			return nil, err
		}
	}
	// A model session never runs as root, even with file tools only: as the
	// worker user it cannot read what root's permissions guard, whatever the
	// hook's path checks miss.
	if base.RunAs, err = workerUserForRoot(ctx, j.cfg); err != nil {
		return nil, err
	}
	if err := j.scratch(); err != nil {
		return nil, err
	}
	return &journey.Claude{Base: base, StateDir: filepath.Join(j.tmp, "state"),
		MaxTurns: j.cfg.Budget.MaxTurns, MaxBudgetUSD: j.cfg.Budget.TaskUSD}, nil
}

// scratch makes the private scratch directory, outside the repository.
func (j *journeyCtx) scratch() error {
	if j.tmp != "" {
		return nil
	}
	tmp, err := fsx.MkdirTemp("zerg-" + j.feature + "-")
	if err != nil {
		return err
	}
	j.tmp = tmp
	j.closers = append(j.closers, func() { os.RemoveAll(tmp) })
	// The worker user (review's gates, as root) must pass through to the
	// clone; nothing here becomes listable to it.
	return os.Chmod(tmp, 0o711)
}

// clone makes a private clone of commit (the user's HEAD for plan and
// design, the integration head for review): sessions never run in the
// user's checkout.
func (j *journeyCtx) clone(ctx context.Context, commit string) (string, error) {
	if err := j.scratch(); err != nil {
		return "", err
	}
	dst := filepath.Join(j.tmp, "repo")
	if err := j.repo.CloneCommit(ctx, dst, commit); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dst, journey.DraftDir), 0o755); err != nil {
		return "", err
	}
	return dst, nil
}

// head is the user's HEAD commit; a repository without one is bad input.
func (j *journeyCtx) head(ctx context.Context) (string, error) {
	h, err := j.repo.RevParse(ctx, "HEAD")
	if err != nil {
		return "", usageErrorf("%s has no commit yet; commit something first (plan and design read the repository at HEAD)", j.root)
	}
	return h, nil
}

// copyIn puts an existing file of the spec dir into the clone's draft dir.
func copyIn(src, workdir, name string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(journey.DraftPath(workdir, name), data, 0o644)
}

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
