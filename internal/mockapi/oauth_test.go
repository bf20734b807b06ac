package mockapi

import (
	"net/http"
	"strings"
	"testing"
)

// oauth_token: the scripted API takes a subscription token only in the
// shape the CLI sends it, and records that it did.
func TestOAuthToken(t *testing.T) {
	const tok = "sk-ant-oat01-the-token"
	srv := NewServer(&Scenario{OAuthToken: tok})
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cli := "claude-code-20250219,oauth-2025-04-20,effort-2025-11-24"
	for _, c := range []struct {
		name          string
		auth, key, bt string
		want          int
	}{
		{"the CLI's shape", "Bearer " + tok, "", cli, 200},
		{"wrong token", "Bearer sk-ant-oat01-other", "", cli, 401},
		{"no oauth beta", "Bearer " + tok, "", "claude-code-20250219", 401},
		{"as x-api-key", "", tok, cli, 401},
		{"an x-api-key too", "Bearer " + tok, "sk-ant-placeholder", cli, 401},
	} {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/messages/count_tokens", strings.NewReader(`{"model":"m","messages":[]}`))
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		if c.key != "" {
			req.Header.Set("X-Api-Key", c.key)
		}
		req.Header.Set("Anthropic-Beta", c.bt)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 5 || !reqs[0].OAuth || reqs[1].OAuth || reqs[2].OAuth {
		t.Errorf("recorded oauth: %+v", reqs)
	}
}
