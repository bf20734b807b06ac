package attempt

import (
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/config"
)

// The config's variable names and base URL decide the credential and the
// endpoint; without a credential, needKey names the config's variables.
func TestConfiguredAPI(t *testing.T) {
	cfg := config.Default()
	cfg.Claude.APIKeyEnv, cfg.Claude.OAuthTokenEnv, cfg.Claude.BaseURL = "MY_KEY", "MY_TOKEN", "http://127.0.0.1:9"
	if v := CredentialVars(cfg); v.APIKey != "MY_KEY" || v.OAuthToken != "MY_TOKEN" {
		t.Errorf("CredentialVars = %+v", v)
	}
	env := map[string]string{"MY_TOKEN": "tok", "ANTHROPIC_BASE_URL": "http://elsewhere"}
	api, err := ConfiguredAPI(cfg, true, func(k string) string { return env[k] })
	if err != nil || string(api.OAuthToken) != "tok" || api.APIKey != "" || api.BaseURL != "http://127.0.0.1:9" {
		t.Errorf("api %s, %v; want MY_TOKEN's token and claude.base_url", api, err)
	}
	_, err = ConfiguredAPI(cfg, true, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "MY_KEY") || !strings.Contains(err.Error(), "MY_TOKEN") {
		t.Errorf("no credential: %v, want an error naming MY_KEY and MY_TOKEN", err)
	}
	if _, err := ConfiguredAPI(cfg, false, func(string) string { return "" }); err != nil {
		t.Errorf("no credential, none needed: %v", err)
	}
}
