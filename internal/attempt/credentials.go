package attempt

import (
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
)

// CredentialVars are the environment variables cfg names for a worker's
// credentials (claude.api_key_env, claude.oauth_token_env): a launch, the
// launch check and zerg doctor read the key and the subscription token
// from them, and the notes about the credential name them.
func CredentialVars(cfg config.Config) claude.CredentialVars {
	return claude.CredentialVars{APIKey: cfg.Claude.APIKeyEnv, OAuthToken: cfg.Claude.OAuthTokenEnv}
}

// ConfiguredAPI is the real API a worker launched under cfg talks to:
// claude.ConfiguredAPI of getenv with cfg's CredentialVars and
// claude.base_url. needKey: having no credential is an error naming the
// variables to set (the caller's bad input).
func ConfiguredAPI(cfg config.Config, needKey bool, getenv func(string) string) (claude.APISettings, error) {
	return claude.ConfiguredAPI(getenv, CredentialVars(cfg), cfg.Claude.BaseURL, needKey)
}
