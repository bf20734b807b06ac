package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/security"
)

// applyModeFlag sets cfg's mode from a --mode flag that was given. The
// config's own mode was checked when it loaded.
func applyModeFlag(cfg *config.Config, mode string) error {
	if !slices.Contains(config.Modes, mode) {
		return usageErrorf("--mode %s: use --mode sandbox, --mode container or --mode subprocess", mode)
	}
	cfg.Mode = mode
	return nil
}

// graphFlag is the task graph a command of feature works on: --graph
// (absolute, so a run records where it is) or the feature's own; one that
// is not there is bad input.
func graphFlag(cwd, graph string, paths run.Paths, feature string) (string, error) {
	if graph == "" {
		graph = paths.Graph
	} else if !filepath.IsAbs(graph) {
		graph = filepath.Join(cwd, graph)
	}
	if _, err := os.Stat(graph); err != nil {
		return "", usageErrorf("%s: no task graph for feature %q; write one (see docs/task-graph.md) or pass --graph FILE", rel(cwd, graph), feature)
	}
	return graph, nil
}

// workerUserForRoot is the unprivileged user zerg runs model sessions and
// the code they write as when it runs as root (nil otherwise): never root,
// which would read every secret on the machine and whose files could later
// run as root. A missing user is created; failing that is bad input.
func workerUserForRoot(ctx context.Context, cfg config.Config) (*security.WorkerUser, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := security.EnsureWorkerUser(ctx, cfg.Security.WorkerUser)
	if err != nil {
		return nil, usageErrorf("running as root needs the unprivileged worker user %q: %v (set security.worker_user in .zerg/config.yaml, or run zerg as a normal user)", cfg.Security.WorkerUser, err)
	}
	return u, nil
}

// apiFromConfig is the real API a session talks to: the environment's
// settings, the config's base URL, and the key from the variable the config
// names. needKey: having neither a key nor a token is bad input.
func apiFromConfig(cfg config.Config, needKey bool) (claude.APISettings, error) {
	api := claude.APIFromEnv()
	if cfg.Claude.BaseURL != "" {
		api.BaseURL = cfg.Claude.BaseURL
	}
	if k := os.Getenv(cfg.Claude.APIKeyEnv); k != "" {
		api.APIKey = claude.Secret(k)
	}
	if needKey && api.APIKey == "" && api.AuthToken == "" {
		return api, usageErrorf("no API key: set %s (or ANTHROPIC_AUTH_TOKEN), or rehearse offline with --rehearse", cfg.Claude.APIKeyEnv)
	}
	return api, nil
}
