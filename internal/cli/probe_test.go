package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
)

func TestProbeEndpoint(t *testing.T) {
	cfg := config.Default()
	cfg.Claude.BaseURL = "set"
	key := claude.APISettings{APIKey: "sk-ant-api03-wrong-key-of-the-test"}
	answer := func(status int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/messages/count_tokens" || r.Header.Get("X-Api-Key") == "" {
				t.Errorf("probe sent %s %s without the key", r.Method, r.URL.Path)
			}
			w.WriteHeader(status)
			w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	for _, c := range []struct {
		name, base, want string
	}{
		{"counted", answer(200, `{"input_tokens":3}`), ""},
		{"a proxy without count_tokens", answer(404, `not here`), ""},
		{"a model it does not know", answer(400, `{"type":"error","error":{"type":"invalid_request_error","message":"model"}}`), ""},
		{"a refused key", answer(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`), "refused the key in ANTHROPIC_API_KEY (401 authentication_error: invalid x-api-key)"},
		{"nothing listening", dead.URL, "cannot be reached"},
	} {
		api := key
		api.BaseURL = c.base
		err := probeEndpoint(context.Background(), api, cfg)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "claude.base_url") && c.name == "nothing listening"):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		case c.want != "" && exitCode(err) != ExitUsage:
			t.Errorf("%s: exit %d, want %d", c.name, exitCode(err), ExitUsage)
		}
		if err != nil && strings.Contains(err.Error(), string(key.APIKey)) {
			t.Errorf("%s: the key is in the message: %v", c.name, err)
		}
	}
}

func TestProbeBinary(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "claude")
	os.WriteFile(good, []byte("#!/bin/sh\necho '2.1.197 (Claude Code)'\n"), 0o755)
	cfg := config.Default()
	if err := probeBinary(context.Background(), claude.Location{Path: good, Source: claude.SourceEnv}, cfg); err != nil {
		t.Errorf("a binary that answers: %v", err)
	}
	cfg.Claude.Path = "/bin/true"
	err := probeBinary(context.Background(), claude.Location{Path: "/bin/true", Source: claude.SourceConfig}, cfg)
	if err == nil || !strings.Contains(err.Error(), "claude.path") || exitCode(err) != ExitUsage {
		t.Errorf("/bin/true: %v, want exit 2 naming claude.path", err)
	}
}
