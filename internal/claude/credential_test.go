package claude

import (
	"strings"
	"testing"
)

const testOAuth = "sk-ant-oat01-SECRET-subscription-token"

func TestCredentialNote(t *testing.T) {
	std := CredentialVars{APIKey: EnvAPIKey}
	custom := CredentialVars{APIKey: "MY_KEY", OAuthToken: "MY_TOKEN"}
	for _, c := range []struct {
		name string
		vars CredentialVars
		env  map[string]string
		want string
	}{
		{"key only", std, map[string]string{"ANTHROPIC_API_KEY": "k"}, "API key from ANTHROPIC_API_KEY"},
		{"token only", std, map[string]string{"CLAUDE_CODE_OAUTH_TOKEN": testOAuth}, "subscription token from CLAUDE_CODE_OAUTH_TOKEN"},
		{"both: the key wins", std, map[string]string{"ANTHROPIC_API_KEY": "k", "CLAUDE_CODE_OAUTH_TOKEN": testOAuth},
			"API key from ANTHROPIC_API_KEY (it wins over the subscription token in CLAUDE_CODE_OAUTH_TOKEN)"},
		{"auth token", std, map[string]string{"ANTHROPIC_AUTH_TOKEN": "t"}, "auth token from ANTHROPIC_AUTH_TOKEN"},
		{"configured token", custom, map[string]string{"MY_TOKEN": testOAuth, "CLAUDE_CODE_OAUTH_TOKEN": "not-this-one"}, "subscription token from MY_TOKEN"},
		{"configured key", custom, map[string]string{"MY_KEY": "k"}, "API key from MY_KEY"},
		{"the CLI's key under a configured name", custom, map[string]string{"ANTHROPIC_API_KEY": "k"}, "API key from ANTHROPIC_API_KEY"},
		{"none", std, nil, "no credential"},
	} {
		getenv := func(k string) string { return c.env[k] }
		api, err := ConfiguredAPI(getenv, c.vars, "", false)
		if err != nil {
			t.Fatal(err)
		}
		if got := CredentialNote(c.vars, api, getenv); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestConfiguredAPI(t *testing.T) {
	env := map[string]string{"ANTHROPIC_BASE_URL": "http://env", "ANTHROPIC_API_KEY": "k"}
	getenv := func(k string) string { return env[k] }
	if api, _ := ConfiguredAPI(getenv, CredentialVars{}, "", true); api.BaseURL != "http://env" {
		t.Errorf("base url %q", api.BaseURL)
	}
	if api, _ := ConfiguredAPI(getenv, CredentialVars{}, "http://config", true); api.BaseURL != "http://config" {
		t.Errorf("the config's base url: %q", api.BaseURL)
	}
	_, err := ConfiguredAPI(func(string) string { return "" }, CredentialVars{APIKey: "MY_KEY"}, "", true)
	if err == nil || !strings.Contains(err.Error(), "set MY_KEY (or CLAUDE_CODE_OAUTH_TOKEN") {
		t.Errorf("no credential: %v", err)
	}
	if _, err := ConfiguredAPI(func(string) string { return "" }, CredentialVars{}, "", false); err != nil {
		t.Errorf("no credential, none needed: %v", err)
	}
}
