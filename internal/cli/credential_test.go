package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/config"
)

const fakeOAuth = "sk-ant-oat01-SECRET-subscription-token"

func TestCredentialChoice(t *testing.T) {
	custom := config.Default()
	custom.Claude.APIKeyEnv, custom.Claude.OAuthTokenEnv = "MY_KEY", "MY_TOKEN"
	cases := []struct {
		name  string
		cfg   config.Config
		env   map[string]string
		line  string
		key   bool
		oauth bool
	}{
		{"key only", config.Default(), map[string]string{"ANTHROPIC_API_KEY": "k"}, "API key from ANTHROPIC_API_KEY", true, false},
		{"token only", config.Default(), map[string]string{"CLAUDE_CODE_OAUTH_TOKEN": fakeOAuth}, "subscription token from CLAUDE_CODE_OAUTH_TOKEN", false, true},
		{"both: the key wins", config.Default(), map[string]string{"ANTHROPIC_API_KEY": "k", "CLAUDE_CODE_OAUTH_TOKEN": fakeOAuth},
			"API key from ANTHROPIC_API_KEY (it wins over the subscription token in CLAUDE_CODE_OAUTH_TOKEN)", true, false},
		{"auth token wins too", config.Default(), map[string]string{"ANTHROPIC_AUTH_TOKEN": "t", "CLAUDE_CODE_OAUTH_TOKEN": fakeOAuth},
			"auth token from ANTHROPIC_AUTH_TOKEN (it wins over the subscription token in CLAUDE_CODE_OAUTH_TOKEN)", false, false},
		{"configured names", custom, map[string]string{"MY_TOKEN": fakeOAuth, "CLAUDE_CODE_OAUTH_TOKEN": "not-this-one"},
			"subscription token from MY_TOKEN", false, true},
		{"configured key name", custom, map[string]string{"MY_KEY": "k"}, "API key from MY_KEY", true, false},
		{"default key name under a custom one", custom, map[string]string{"ANTHROPIC_API_KEY": "k"}, "API key from ANTHROPIC_API_KEY", true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			getenv := func(k string) string { return c.env[k] }
			api, err := apiFromGetenv(c.cfg, true, getenv)
			if err != nil {
				t.Fatal(err)
			}
			if (api.APIKey != "") != c.key || (api.OAuthToken != "") != c.oauth {
				t.Errorf("api %s: want key %v, token %v", api, c.key, c.oauth)
			}
			if c.oauth && string(api.OAuthToken) != fakeOAuth {
				t.Errorf("the token came from the wrong variable")
			}
			if got := credentialNote(c.cfg, api, getenv); got != c.line {
				t.Errorf("line %q, want %q", got, c.line)
			}
		})
	}
	_, err := apiFromGetenv(config.Default(), true, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "CLAUDE_CODE_OAUTH_TOKEN") || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("no credential: %v", err)
	}
}

// doctor names the credential, never its value.
func TestDoctorCredential(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"CLAUDE_CODE_OAUTH_TOKEN": fakeOAuth}, "subscription token from CLAUDE_CODE_OAUTH_TOKEN"},
		{map[string]string{"ANTHROPIC_API_KEY": "sk-ant-api03-SECRET", "CLAUDE_CODE_OAUTH_TOKEN": fakeOAuth}, "API key from ANTHROPIC_API_KEY (it wins over"},
		{nil, "none: set ANTHROPIC_API_KEY, or CLAUDE_CODE_OAUTH_TOKEN"},
	} {
		d := fakeDoctorDeps(root, false, false, "2.1.197")
		d.getenv = func(k string) string { return c.env[k] }
		var out bytes.Buffer
		a := newApp(&out, &out)
		a.getwd = func() (string, error) { return root, nil }
		_ = runDoctor(context.Background(), a, d, "", false)
		if !strings.Contains(out.String(), c.want) || strings.Contains(out.String(), "SECRET") {
			t.Errorf("doctor with %v:\n%s", c.env, out.String())
		}
		out.Reset()
		_ = runDoctor(context.Background(), a, d, "", true)
		var rep doctorReport
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.String(), "SECRET") || (c.env != nil && !strings.HasPrefix(c.want, rep.Credential[:10])) {
			t.Errorf("json credential %q", rep.Credential)
		}
	}
}
