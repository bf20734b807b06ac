package journey

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
	"github.com/zergrush/zerg/internal/mockapi"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/security"
)

// Scratch is what plan, design and review keep outside the repository: a
// private scratch directory (the clone sessions run in and their state)
// made on first use, and what was started for the sessions (a rehearsal's
// scripted model). Close removes and stops it all.
type Scratch struct {
	feature string
	dir     string
	closers []func()
}

// NewScratch is the scratch of a journey command of feature; it makes
// nothing yet.
func NewScratch(feature string) *Scratch { return &Scratch{feature: feature} }

// Dir is the scratch directory, made on first use.
func (s *Scratch) Dir() (string, error) {
	if s.dir != "" {
		return s.dir, nil
	}
	tmp, err := fsx.MkdirTemp("zerg-" + s.feature + "-")
	if err != nil {
		return "", err
	}
	s.dir = tmp
	s.closers = append(s.closers, func() { os.RemoveAll(tmp) })
	// The worker user (review's gates, as root) must pass through to the
	// clone; nothing here becomes listable to it.
	return tmp, os.Chmod(tmp, 0o711)
}

// Close removes the scratch directory and stops the scripted model, the
// last started first.
func (s *Scratch) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// Clone makes a private clone of commit of repo in the scratch directory
// (the user's HEAD for plan and design, the integration head for review),
// with the draft dir the sessions write to: sessions never run in the
// user's checkout.
func (s *Scratch) Clone(ctx context.Context, repo *gitx.Repo, commit string) (string, error) {
	dir, err := s.Dir()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(dir, "repo")
	if err := repo.CloneCommit(ctx, dst, commit); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dst, DraftDir), 0o755); err != nil {
		return "", err
	}
	return dst, nil
}

// Head is the user's HEAD commit in repo (at root); a repository without
// one is bad input.
func Head(ctx context.Context, repo *gitx.Repo, root string) (string, error) {
	h, err := repo.RevParse(ctx, "HEAD")
	if err != nil {
		return "", &run.Error{Kind: run.BadInput,
			Err: fmt.Errorf("%s has no commit yet; commit something first (plan and design read the repository at HEAD)", root)}
	}
	return h, nil
}

// CopyIn puts an existing file of the spec dir into the clone's draft dir.
func CopyIn(src, workdir, name string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(DraftPath(workdir, name), data, 0o644)
}

// Connection is what the sessions of a journey command connect with.
type Connection struct {
	// ZergBinary is the zerg binary the sessions' hook runs.
	ZergBinary string
	// Rehearse: a scripted model serves Scenario (""; the spec dir's
	// scenario.yaml) instead of the real API.
	Rehearse bool
	Scenario string
	SpecDir  string
	// API is the real API (not called under a rehearsal); RunAs the user
	// sessions run as (nil: zerg's own). Their errors are passed on as
	// they are.
	API   func() (claude.APISettings, error)
	RunAs func() (*security.WorkerUser, error)
}

// Connect finds the claude binary cfg names and the API (the scripted one
// under a rehearsal) and returns the model sessions run with. Everything it
// checks is input: a binary or scenario that is not there is bad input,
// and nothing is written but the scratch directory.
func (s *Scratch) Connect(cfg config.Config, c Connection) (*Claude, error) {
	loc, err := claude.Locate(cfg.Claude.Path)
	if err != nil {
		return nil, &run.Error{Kind: run.BadInput, Err: err}
	}
	base := claude.Spec{Binary: loc.Path, Hook: claude.HookSpec{ZergBinary: c.ZergBinary}}
	if c.Rehearse {
		scenario := c.Scenario
		if scenario == "" {
			scenario = filepath.Join(c.SpecDir, "scenario.yaml")
		}
		sc, err := mockapi.LoadScenario(scenario)
		if err != nil {
			return nil, &run.Error{Kind: run.BadInput, Err: err}
		}
		srv := mockapi.NewServer(sc)
		url, err := srv.Start("127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, func() { _ = srv.Close() })
		base.API = claude.APISettings{BaseURL: url, APIKey: "zerg-rehearsal"}
		base.MaxRetries = 2
		base.APITimeout = sc.RehearsalTimeout()
	} else if base.API, err = c.API(); err != nil {
		return nil, err
	}
	// A model session never runs as root, even with file tools only: as the
	// worker user it cannot read what root's permissions guard, whatever the
	// hook's path checks miss.
	if base.RunAs, err = c.RunAs(); err != nil {
		return nil, err
	}
	dir, err := s.Dir()
	if err != nil {
		return nil, err
	}
	return &Claude{Base: base, StateDir: filepath.Join(dir, "state"),
		MaxTurns: cfg.Budget.MaxTurns, MaxBudgetUSD: cfg.Budget.TaskUSD}, nil
}

// Project is what plan, design and review work on: the repository at Root,
// its config, and the feature's spec dir.
type Project struct {
	Root, Feature, SpecDir string
	Config                 config.Config
	Repo                   *gitx.Repo
}

// Open finds the repository holding cwd, checks the feature's name and the
// rehearsal flags (a scenario needs a rehearsal), then loads the
// repository's config with loadConfig (its errors passed on as they are)
// and opens the repository; it writes nothing. No repository, a bad name
// or a bad flag is bad input.
func Open(ctx context.Context, cwd, feature string, rehearse bool, scenario string, loadConfig func(root string) (config.Config, error)) (*Project, error) {
	root, err := gitx.WorkTreeRoot(ctx, cwd)
	if err != nil {
		return nil, &run.Error{Kind: run.BadInput, Err: err}
	}
	if err := CheckFeature(feature); err != nil {
		return nil, &run.Error{Kind: run.BadInput, Err: err}
	}
	if !rehearse && scenario != "" {
		return nil, &run.Error{Kind: run.BadInput, Err: errors.New("--scenario needs --rehearse")}
	}
	cfg, err := loadConfig(root)
	if err != nil {
		return nil, err
	}
	repo, err := gitx.OpenRepo(ctx, root)
	if err != nil {
		return nil, err
	}
	return &Project{Root: root, Feature: feature, SpecDir: run.SpecDir(root, feature), Config: cfg, Repo: repo}, nil
}
