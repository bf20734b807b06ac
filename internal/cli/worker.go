package cli

import (
	"context"
	"os"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/security"
)

// applyModeFlag sets cfg's mode from a --mode flag that was given.
func applyModeFlag(cfg *config.Config, mode string) error { return badInput(cfg.SetModeFlag(mode)) }

// graphFlag is the task graph a command of feature works on (run.Paths.GraphFile).
func graphFlag(cwd, graph string, paths run.Paths, feature string) (string, error) {
	return paths.GraphFile(cwd, graph, feature)
}

// workerUserForRoot is the user model sessions run as when zerg runs as
// root (security.WorkerUserForRoot); failing to have one is bad input.
func workerUserForRoot(ctx context.Context, cfg config.Config) (*security.WorkerUser, error) {
	return inputOf(security.WorkerUserForRoot(ctx, cfg.Security.WorkerUser))
}

// inputOf passes on what a lower package's check of the user's input
// returns, its error as bad input (exit 2).
func inputOf[T any](v T, err error) (T, error) { return v, badInput(err) }

// apiFromConfig is the real API a session talks to: the environment's
// settings, the config's base URL, the key from the variable the config
// names and the subscription token from the one it names for that, in the
// CLI's precedence (attempt.ConfiguredAPI).
// needKey: having no credential is bad input.
func apiFromConfig(cfg config.Config, needKey bool) (claude.APISettings, error) {
	return apiFromGetenv(cfg, needKey, os.Getenv)
}

// apiFromGetenv is apiFromConfig reading the environment with getenv.
func apiFromGetenv(cfg config.Config, needKey bool, getenv func(string) string) (claude.APISettings, error) {
	return inputOf(attempt.ConfiguredAPI(cfg, needKey, getenv))
}

// credentialNote says which credential a session uses and where it came
// from, never its value (claude.CredentialNote).
func credentialNote(cfg config.Config, api claude.APISettings, getenv func(string) string) string {
	return claude.CredentialNote(attempt.CredentialVars(cfg), api, getenv)
}
