package claude

import "fmt"

// OAuthVar is the variable the subscription token is read from.
func (v CredentialVars) OAuthVar() string {
	if v.OAuthToken == "" {
		return EnvOAuthToken
	}
	return v.OAuthToken
}

// ConfiguredAPI is the real API a session talks to: the environment's
// settings with the credentials from vars (APIFromGetenv) and baseURL,
// the config's claude.base_url, over ANTHROPIC_BASE_URL when it is set.
// needKey: having no credential is an error naming the variables to set
// (the caller's bad input).
func ConfiguredAPI(getenv func(string) string, vars CredentialVars, baseURL string, needKey bool) (APISettings, error) {
	api := APIFromGetenv(getenv, vars)
	if baseURL != "" {
		api.BaseURL = baseURL
	}
	if needKey && !api.HasCredential() {
		return api, fmt.Errorf("no API key or subscription token: set %s (or %s, from claude setup-token), or rehearse offline with --rehearse",
			vars.APIKey, vars.OAuthVar())
	}
	return api, nil
}

// CredentialSource is the kind of credential a session with api uses and
// the variable it came from, in the order APIFromGetenv prefers them; a
// key is from the CLI's own variable when vars.APIKey's is unset.
func CredentialSource(vars CredentialVars, api APISettings, getenv func(string) string) (kind, name string) {
	switch {
	case api.APIKey != "" && getenv(vars.APIKey) == "":
		return "API key", EnvAPIKey
	case api.APIKey != "":
		return "API key", vars.APIKey
	case api.AuthToken != "":
		return "auth token", EnvAuthToken
	case api.OAuthToken != "":
		return "subscription token", vars.OAuthVar()
	}
	return "no credential", ""
}

// CredentialNote says which credential a session uses and where it came
// from, never its value ("API key from ANTHROPIC_API_KEY", "subscription
// token from CLAUDE_CODE_OAUTH_TOKEN"), and the subscription token a key or
// an auth token overrides when both are set.
func CredentialNote(vars CredentialVars, api APISettings, getenv func(string) string) string {
	line, name := CredentialSource(vars, api, getenv)
	if name != "" {
		line += " from " + name
	}
	if !api.Subscription() && api.HasCredential() && getenv(vars.OAuthVar()) != "" {
		line += " (it wins over the subscription token in " + vars.OAuthVar() + ")"
	}
	return line
}
