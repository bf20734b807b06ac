package claude

import (
	"os"
	"strings"
)

// Secret is a credential. Every fmt verb prints it redacted, so a Spec, an
// APISettings or an error can be logged whole; use string(s) to get the value.
type Secret string

const redacted = "[redacted]"

// String redacts the secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString redacts the secret for %#v.
func (s Secret) GoString() string { return `claude.Secret("` + s.String() + `")` }

// MarshalText redacts the secret when encoded as JSON or text.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// API environment variable names, as the CLI honours them (claude-cli.md §10).
const (
	EnvBaseURL   = "ANTHROPIC_BASE_URL"
	EnvAPIKey    = "ANTHROPIC_API_KEY"
	EnvAuthToken = "ANTHROPIC_AUTH_TOKEN"
	// EnvOAuthToken is a subscription's (Pro/Max) sign-in, as `claude
	// setup-token` prints it. With it the CLI 2.1.197 sends
	// "Authorization: Bearer <token>", no x-api-key, and adds the beta
	// OAuthBeta to anthropic-beta (measured: docs/configuration.md).
	EnvOAuthToken = "CLAUDE_CODE_OAUTH_TOKEN"
	// OAuthBeta is the anthropic-beta value the CLI sends with an OAuth
	// token.
	OAuthBeta = "oauth-2025-04-20"
)

// APISettings is how a worker reaches the Messages API. The key and token
// reach the worker only through its environment, never its argv.
type APISettings struct {
	BaseURL   string // ANTHROPIC_BASE_URL; empty = the CLI's default endpoint
	APIKey    Secret // ANTHROPIC_API_KEY, sent as x-api-key
	AuthToken Secret // ANTHROPIC_AUTH_TOKEN, sent as Authorization: Bearer
	// OAuthToken is a subscription token (CLAUDE_CODE_OAUTH_TOKEN), sent as
	// Authorization: Bearer with the beta OAuthBeta. The CLI ignores it
	// when an API key is set.
	OAuthToken Secret
}

// CredentialVars names the variables APIFromGetenv reads a credential
// from besides the CLI's own: the config's claude.api_key_env and
// claude.oauth_token_env. Empty fields are the CLI's names.
type CredentialVars struct {
	APIKey     string // read after ANTHROPIC_API_KEY, and wins when set
	OAuthToken string // read instead of CLAUDE_CODE_OAUTH_TOKEN
}

// APIFromEnv reads the API settings from the process environment under
// the CLI's own variable names (see APIFromGetenv).
func APIFromEnv() APISettings { return APIFromGetenv(os.Getenv, CredentialVars{}) }

// APIFromGetenv is the one reader of the credentials in an environment. The
// precedence is the claude CLI's own: ANTHROPIC_AUTH_TOKEN and
// ANTHROPIC_API_KEY (the key from vars.APIKey when that is set) come before
// the subscription token, which the CLI ignores when either is set. The
// token is then not read at all, so no session or gateway holds a secret
// the CLI would not use, and the credential zerg reports is the one the
// requests carry. A key and an auth token are both kept: the CLI sends
// the auth token as Authorization: Bearer and the key as x-api-key, and
// which one counts is the endpoint's business (a gateway in
// ANTHROPIC_BASE_URL may want the bearer token).
func APIFromGetenv(getenv func(string) string, vars CredentialVars) APISettings {
	a := APISettings{
		BaseURL:   getenv(EnvBaseURL),
		APIKey:    Secret(getenv(EnvAPIKey)),
		AuthToken: Secret(getenv(EnvAuthToken)),
	}
	if vars.APIKey != "" {
		if k := getenv(vars.APIKey); k != "" {
			a.APIKey = Secret(k)
		}
	}
	if a.APIKey == "" && a.AuthToken == "" {
		name := vars.OAuthToken
		if name == "" {
			name = EnvOAuthToken
		}
		a.OAuthToken = Secret(getenv(name))
	}
	return a
}

// String describes the settings without the credentials' values.
func (a APISettings) String() string {
	var b strings.Builder
	b.WriteString("base_url=")
	if a.BaseURL == "" {
		b.WriteString("(default)")
	} else {
		b.WriteString(a.BaseURL)
	}
	b.WriteString(" api_key=")
	b.WriteString(present(a.APIKey))
	b.WriteString(" auth_token=")
	b.WriteString(present(a.AuthToken))
	b.WriteString(" oauth_token=")
	b.WriteString(present(a.OAuthToken))
	return b.String()
}

// GoString is String, so %#v cannot leak either.
func (a APISettings) GoString() string { return "claude.APISettings{" + a.String() + "}" }

// Secrets are the credentials' values that are set.
func (a APISettings) Secrets() []string {
	var out []string
	for _, s := range []Secret{a.APIKey, a.AuthToken, a.OAuthToken} {
		if s != "" {
			out = append(out, string(s))
		}
	}
	return out
}

// HasCredential reports whether any credential is set.
func (a APISettings) HasCredential() bool { return len(a.Secrets()) > 0 }

// Subscription reports whether the session signs in with a subscription
// token alone: the one the CLI uses when no API key is set.
func (a APISettings) Subscription() bool {
	return a.OAuthToken != "" && a.APIKey == "" && a.AuthToken == ""
}

func present(s Secret) string {
	if s == "" {
		return "unset"
	}
	return redacted
}

// redact replaces every occurrence of the settings' secrets in text.
func (a APISettings) redact(text string) string {
	for _, s := range []Secret{a.APIKey, a.AuthToken, a.OAuthToken} {
		// Very short values would redact ordinary words; they are not real keys.
		if len(s) >= 8 {
			text = strings.ReplaceAll(text, string(s), redacted)
		}
	}
	return text
}
