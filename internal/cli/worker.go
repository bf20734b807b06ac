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
		return usageErrorf("--mode %s: use --mode sandbox, --mode container, --mode subprocess or --mode tasks", mode)
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
// settings, the config's base URL, the key from the variable the config
// names and the subscription token from the one it names for that, in the
// CLI's precedence (claude.APIFromGetenv).
// needKey: having no credential is bad input.
func apiFromConfig(cfg config.Config, needKey bool) (claude.APISettings, error) {
	return apiFromGetenv(cfg, needKey, os.Getenv)
}

func apiFromGetenv(cfg config.Config, needKey bool, getenv func(string) string) (claude.APISettings, error) {
	api := claude.APIFromGetenv(getenv, claude.CredentialVars{APIKey: cfg.Claude.APIKeyEnv, OAuthToken: oauthTokenEnv(cfg)})
	if cfg.Claude.BaseURL != "" {
		api.BaseURL = cfg.Claude.BaseURL
	}
	if needKey && !api.HasCredential() {
		return api, usageErrorf("no API key or subscription token: set %s (or %s, from claude setup-token), or rehearse offline with --rehearse",
			cfg.Claude.APIKeyEnv, oauthTokenEnv(cfg))
	}
	return api, nil
}

// oauthTokenEnv is the variable the subscription token is read from.
func oauthTokenEnv(cfg config.Config) string {
	if cfg.Claude.OAuthTokenEnv == "" {
		return claude.EnvOAuthToken
	}
	return cfg.Claude.OAuthTokenEnv
}

// credentialLine says which credential a session uses and where it came
// from, never its value: "API key from ANTHROPIC_API_KEY", "subscription
// token from CLAUDE_CODE_OAUTH_TOKEN".
func credentialLine(cfg config.Config, api claude.APISettings, getenv func(string) string) string {
	kind, name := credentialSource(cfg, api, getenv)
	if name == "" {
		return kind
	}
	return kind + " from " + name
}

// credentialSource is the kind of credential a session uses and the
// variable it came from (in the order apiFromConfig prefers them).
func credentialSource(cfg config.Config, api claude.APISettings, getenv func(string) string) (kind, name string) {
	switch {
	case api.APIKey != "" && getenv(cfg.Claude.APIKeyEnv) == "":
		return "API key", claude.EnvAPIKey
	case api.APIKey != "":
		return "API key", cfg.Claude.APIKeyEnv
	case api.AuthToken != "":
		return "auth token", claude.EnvAuthToken
	case api.OAuthToken != "":
		return "subscription token", oauthTokenEnv(cfg)
	}
	return "no credential", ""
}

// credentialNote is credentialLine, plus the subscription token an API key
// overrides when both are set.
func credentialNote(cfg config.Config, api claude.APISettings, getenv func(string) string) string {
	line := credentialLine(cfg, api, getenv)
	if !api.Subscription() && api.HasCredential() && getenv(oauthTokenEnv(cfg)) != "" {
		line += " (it wins over the subscription token in " + oauthTokenEnv(cfg) + ")"
	}
	return line
}
