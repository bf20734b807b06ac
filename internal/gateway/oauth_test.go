package gateway

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

const realOAuth = "sk-ant-oat01-the-real-subscription-token"

// cliOAuthHeaders is what the pinned CLI 2.1.197 sent to a local server
// for `claude -p hi` with CLAUDE_CODE_OAUTH_TOKEN=token and no API key
// (measured; the credential and beta headers, and two the gateway must
// keep): a bearer, no x-api-key, and oauth-2025-04-20 second among the
// betas. With ANTHROPIC_API_KEY set too, the same CLI sent x-api-key and
// no bearer: the key wins.
func cliOAuthHeaders(token string) http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	h.Set("Anthropic-Beta", "claude-code-20250219,oauth-2025-04-20,interleaved-thinking-2025-05-14,thinking-token-count-2026-05-13,"+
		"context-management-2025-06-27,prompt-caching-scope-2026-01-05,mid-conversation-system-2026-04-07,effort-2025-11-24,extended-cache-ttl-2025-04-11")
	h.Set("Anthropic-Version", "2023-06-01")
	h.Set("X-App", "cli")
	return h
}

// authHeaders are the headers compared between what the CLI sends with
// the real token and what the gateway sends upstream.
var authHeaders = []string{"Authorization", "X-Api-Key", "Anthropic-Beta", "Anthropic-Version", "X-App"}

// headerDiff lists the authHeaders where got differs from want.
func headerDiff(want, got http.Header) []string {
	var out []string
	for _, k := range authHeaders {
		if w, g := want.Values(k), got.Values(k); !slices.Equal(w, g) {
			out = append(out, fmt.Sprintf("%s: got %q, want %q", k, g, w))
		}
	}
	return out
}

func headerUpstream(t *testing.T) (*httptest.Server, func() []http.Header) {
	var mu sync.Mutex
	var got []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"input_tokens":12}`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []http.Header {
		mu.Lock()
		defer mu.Unlock()
		return append([]http.Header(nil), got...)
	}
}

func sendHeaders(t *testing.T, sock string, h http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, baseURL+"/v1/messages?beta=true", strings.NewReader(messagesBody(false)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, err := apiClient(sock).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, resp); resp.StatusCode != http.StatusOK {
		t.Fatalf("gateway answered %d: %s", resp.StatusCode, body)
	}
}

// TestOAuthInjectedAsTheCLISendsIt: a sandboxed CLI holding the placeholder
// as its subscription token sends the CLI's OAuth headers with the
// placeholder; what reaches the API is exactly what the CLI sends with the
// real token outside a sandbox.
func TestOAuthInjectedAsTheCLISendsIt(t *testing.T) {
	up, got := headerUpstream(t)
	g, sock := startGW(t, Config{Upstream: up.URL, OAuthToken: realOAuth}, nil)
	sendHeaders(t, sock, cliOAuthHeaders(placeholder))
	// A worker that holds a placeholder API key instead (the old shape):
	// the bearer and the beta are still what the CLI would send.
	old := cliOAuthHeaders("")
	old.Del("Authorization")
	old.Set("X-Api-Key", placeholder)
	old.Set("Anthropic-Beta", "claude-code-20250219,interleaved-thinking-2025-05-14,thinking-token-count-2026-05-13,"+
		"context-management-2025-06-27,prompt-caching-scope-2026-01-05,mid-conversation-system-2026-04-07,effort-2025-11-24,extended-cache-ttl-2025-04-11")
	sendHeaders(t, sock, old)
	s := got()
	if len(s) != 2 {
		t.Fatalf("upstream saw %d requests, want 2", len(s))
	}
	want := cliOAuthHeaders(realOAuth)
	for i, h := range s {
		if d := headerDiff(want, h); len(d) > 0 {
			t.Errorf("request %d: the upstream's headers differ from the CLI's with the real token:\n%s", i, strings.Join(d, "\n"))
		}
	}
	if st := g.Stats(); st.ForeignKeys != 0 {
		t.Errorf("%d foreign keys: the placeholder bearer was not recognised", st.ForeignKeys)
	}
	// Control: the comparison sees a missing beta, a placeholder bearer and
	// an x-api-key next to the bearer.
	for _, mutate := range []func(http.Header){
		func(h http.Header) { h.Set("Anthropic-Beta", "claude-code-20250219") },
		func(h http.Header) { h.Set("Authorization", "Bearer "+placeholder) },
		func(h http.Header) { h.Set("X-Api-Key", realOAuth) },
	} {
		h := s[0].Clone()
		mutate(h)
		if len(headerDiff(want, h)) == 0 {
			t.Errorf("control: headerDiff misses a change: %v", h)
		}
	}
}

// TestOAuthKeyWins: with an API key as well, the key is sent and the
// subscription token never leaves the gateway, as the CLI does.
func TestOAuthKeyWins(t *testing.T) {
	up, got := headerUpstream(t)
	_, sock := startGW(t, Config{Upstream: up.URL, APIKey: realKey, OAuthToken: realOAuth}, nil)
	sendHeaders(t, sock, cliOAuthHeaders(placeholder))
	s := got()
	if len(s) != 1 || s[0].Get("X-Api-Key") != realKey || s[0].Get("Authorization") != "" {
		t.Fatalf("upstream saw %v; want the key alone", s)
	}
	for k, v := range s[0] {
		if strings.Contains(strings.Join(v, " "), realOAuth) {
			t.Errorf("the subscription token reached the upstream in %s", k)
		}
	}
}

// TestOAuthTokenScrubbed: the token is one of the secrets the gateway
// scrubs from answers.
func TestOAuthTokenScrubbed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"input_tokens":1,"echo":%q}`, r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)
	_, sock := startGW(t, Config{Upstream: srv.URL, OAuthToken: realOAuth}, nil)
	body := readBody(t, post(t, apiClient(sock), baseURL+"/v1/messages/count_tokens", placeholder, countBody))
	if strings.Contains(body, realOAuth) || !strings.Contains(body, "Bearer ") {
		t.Errorf("answer %q: want the echo with the token scrubbed", body)
	}
}

func TestInjectOAuthBetaPlacement(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", OAuthBeta},
		{"claude-code-20250219", "claude-code-20250219," + OAuthBeta},
		{"claude-code-20250219,effort-2025-11-24", "claude-code-20250219," + OAuthBeta + ",effort-2025-11-24"},
		{"a," + OAuthBeta + ",b", "a," + OAuthBeta + ",b"},
	} {
		h := http.Header{}
		if c.in != "" {
			h.Set("Anthropic-Beta", c.in)
		}
		injectOAuth(h, "t")
		if got := strings.Join(h.Values("Anthropic-Beta"), "|"); got != c.want {
			t.Errorf("betas %q: got %q, want %q", c.in, got, c.want)
		}
	}
}
