package gateway

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/mockapi"
)

// seen is what an upstream handler recorded about one request.
type seen struct {
	path, query, apiKey, auth, accept string
	authN                             int
}

func recordingUpstream(t *testing.T, prefix string) (*httptest.Server, func() []seen) {
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, seen{path: r.URL.Path, query: r.URL.RawQuery, apiKey: r.Header.Get("X-Api-Key"),
			auth: r.Header.Get("Authorization"), authN: len(r.Header.Values("Authorization")) + len(r.Header.Values("X-Api-Key")),
			accept: r.Header.Get("Accept-Encoding")})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"input_tokens":12}`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), got...)
	}
}

func TestUpstreamGetsRealKey(t *testing.T) {
	up, got := recordingUpstream(t, "")
	g, sock := startGW(t, Config{Upstream: up.URL + "/prefix/"}, nil)
	api, px := apiClient(sock), proxyClient(sock, nil)

	// Origin-form with the placeholder; absolute-form addressed to the
	// gateway itself (127.0.0.1:3128, localhost:3128) through the proxy
	// setting; and one request carrying another key and a bearer token.
	resp := post(t, api, baseURL+"/v1/messages?beta=true", placeholder, messagesBody(false))
	readBody(t, resp)
	readBody(t, post(t, px, baseURL+"/v1/messages/count_tokens?beta=true", placeholder, countBody))
	readBody(t, post(t, px, "http://LOCALHOST:3128/v1/messages", placeholder, messagesBody(false)))
	req, _ := http.NewRequest(http.MethodPost, baseURL+"/v1/messages", strings.NewReader(messagesBody(false)))
	req.Header.Set("X-Api-Key", "sk-ant-someone-elses-key")
	req.Header.Set("Authorization", "Bearer sk-ant-stolen")
	r4, err := api.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readBody(t, r4)

	s := got()
	if len(s) != 4 {
		t.Fatalf("upstream saw %d requests, want 4", len(s))
	}
	wantPaths := []string{"/prefix/v1/messages", "/prefix/v1/messages/count_tokens", "/prefix/v1/messages", "/prefix/v1/messages"}
	for i, r := range s {
		if r.apiKey != realKey || r.auth != "" || r.authN != 1 {
			t.Errorf("request %d: upstream saw x-api-key %q, Authorization %q (%d credential headers); want only the real key", i, r.apiKey, r.auth, r.authN)
		}
		if r.path != wantPaths[i] {
			t.Errorf("request %d: path %q, want %q", i, r.path, wantPaths[i])
		}
		if r.accept != "" {
			t.Errorf("request %d: Accept-Encoding %q reached the upstream; answers must come uncompressed", i, r.accept)
		}
	}
	if s[0].query != "beta=true" {
		t.Errorf("query %q, want beta=true", s[0].query)
	}
	st := g.Stats()
	if st.Requests != 3 || st.CountTokens != 1 || st.ForeignKeys != 1 || st.Statuses[200] != 4 || st.LastStatus != 200 {
		t.Errorf("stats: requests %d count_tokens %d foreign %d statuses %v last %d; want 3, 1, 1, {200:4}, 200", st.Requests, st.CountTokens, st.ForeignKeys, st.Statuses, st.LastStatus)
	}
	if len(st.Denied) != 0 {
		t.Errorf("denials for model-API requests: %v", st.Denied)
	}
}

func TestUpstreamGetsBearerToken(t *testing.T) {
	up, got := recordingUpstream(t, "")
	_, sock := startGW(t, Config{Upstream: up.URL, AuthToken: realToken}, nil)
	readBody(t, post(t, apiClient(sock), baseURL+"/v1/messages", placeholder, messagesBody(false)))
	s := got()
	if len(s) != 1 || s[0].auth != "Bearer "+realToken || s[0].apiKey != "" {
		t.Fatalf("upstream saw %+v; want only Authorization: Bearer <token>", s)
	}
}

// The upstream echoes the credentials in headers, a trailer and the body,
// split across flushes; the client must see none of it.
func TestKeyNeverReturned(t *testing.T) {
	for _, sse := range []bool{true, false} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				key := r.Header.Get("X-Api-Key")
				tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
				w.Header().Set("X-Echo-Key", "key="+key)
				w.Header().Set("X-Echo-"+key, "in a header name")
				w.Header().Set("Trailer", "X-Echo-Trailer")
				body := fmt.Sprintf(`{"type":"error","error":{"type":"authentication_error","message":"bad key %s / %s"}}`, key, tok)
				if !sse {
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Content-Length", fmt.Sprint(len(body)))
					w.Header().Del("Trailer")
					w.WriteHeader(http.StatusUnauthorized)
					io.WriteString(w, body)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				f := w.(http.Flusher)
				// Cut the key at every flush boundary we can think of.
				msg := "event: ping\ndata: {\"type\":\"ping\",\"echo\":\"" + key + "\"}\n\n"
				for i := 0; i < len(msg); i += 7 {
					io.WriteString(w, msg[i:min(i+7, len(msg))])
					f.Flush()
				}
				io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"+tok)
				w.Header().Set("X-Echo-Trailer", key)
			}))
			t.Cleanup(up.Close)
			g, sock := startGW(t, Config{Upstream: up.URL, APIKey: realKey, AuthToken: realToken}, nil)
			resp := post(t, apiClient(sock), baseURL+"/v1/messages", placeholder, messagesBody(false))
			body := readBody(t, resp)
			var all strings.Builder
			all.WriteString(body)
			for _, h := range []http.Header{resp.Header, resp.Trailer} {
				for k, vs := range h {
					all.WriteString(k + ": " + strings.Join(vs, ",") + "\n")
				}
			}
			for _, secret := range []string{realKey, realToken} {
				if strings.Contains(all.String(), secret) {
					t.Fatalf("the client saw a real credential:\n%s", all.String())
				}
			}
			if !strings.Contains(resp.Header.Get("X-Echo-Key"), "key=****") {
				t.Errorf("echoed header %q: want the key masked", resp.Header.Get("X-Echo-Key"))
			}
			if sse && resp.Trailer.Get("X-Echo-Trailer") == "" {
				t.Errorf("trailer lost: %v", resp.Trailer)
			}
			if !sse {
				if le := g.Stats().LastError; strings.Contains(le, realKey) || !strings.HasPrefix(le, "authentication_error: bad key ****") {
					t.Errorf("LastError %q: want the API's error with the key masked", le)
				}
			}
		})
	}
}

// An upstream that echoes the key where the gateway's own error message
// would quote it: the 502 the client gets must not carry it either.
func TestKeyNeverReturnedInGatewayErrors(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "x-"+r.Header.Get("X-Api-Key"))
		io.WriteString(w, "compressed?")
	}))
	t.Cleanup(up.Close)
	g, sock := startGW(t, Config{Upstream: up.URL}, nil)
	resp := post(t, apiClient(sock), baseURL+"/v1/messages", placeholder, messagesBody(false))
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "content encoding") {
		t.Fatalf("status %d body %s; want 502 naming the encoding", resp.StatusCode, body)
	}
	if le := g.Stats().LastError; strings.Contains(body, realKey) || strings.Contains(le, realKey) {
		t.Errorf("the key leaked: body %s, LastError %s", body, le)
	}
}

// An upstream that compresses although it was not asked to: gzip is
// decoded, so the stream is still parsed and scrubbed.
func TestGzipAnswerDecoded(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		fmt.Fprintf(zw, "event: message_start\ndata: {\"type\":\"message_start\",\"key\":%q,\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n", r.Header.Get("X-Api-Key"))
		io.WriteString(zw, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
		zw.Close()
	}))
	t.Cleanup(up.Close)
	g, sock := startGW(t, Config{Upstream: up.URL}, nil)
	c := &http.Client{Transport: &http.Transport{DialContext: dialSock(sock), DisableCompression: true}}
	resp := post(t, c, baseURL+"/v1/messages", placeholder, messagesBody(false))
	body := readBody(t, resp)
	if resp.Header.Get("Content-Encoding") != "" || !strings.Contains(body, "message_stop") || strings.Contains(body, realKey) {
		t.Errorf("encoding %q body %q", resp.Header.Get("Content-Encoding"), body)
	}
	if g.Stats().Usage.InputTokens != 3 {
		t.Errorf("usage %+v", g.Stats().Usage)
	}
}

// The first SSE event reaches the client while the upstream is still
// blocked, waiting for the client to confirm it.
func TestSSEStreamsUnbuffered(t *testing.T) {
	got := make(chan struct{})
	released := make(chan string, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-got:
			released <- "client"
		case <-time.After(5 * time.Second):
			released <- "timeout"
		}
		io.WriteString(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":9}}\n\n")
		io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	t.Cleanup(up.Close)
	g, sock := startGW(t, Config{Upstream: up.URL}, nil)
	resp := post(t, apiClient(sock), baseURL+"/v1/messages", placeholder, messagesBody(true))
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var first []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the first event: %v (got %q)", err, first)
		}
		if line == "\n" {
			break
		}
		first = append(first, strings.TrimSpace(line))
	}
	close(got)
	if len(first) != 2 || first[0] != "event: message_start" {
		t.Fatalf("first event %q", first)
	}
	rest, _ := io.ReadAll(br)
	if who := <-released; who != "client" {
		t.Fatalf("the upstream was released by %s: the gateway held the first event back", who)
	}
	if !strings.Contains(string(rest), "message_stop") {
		t.Errorf("rest of the stream: %q", rest)
	}
	if u := g.Stats().Usage; u.InputTokens != 5 || u.OutputTokens != 9 {
		t.Errorf("usage %+v, want input 5 output 9 (message_delta's count replaces message_start's)", u)
	}
}

const toolScenario = `
usage: {input_tokens: 1000, output_tokens: 50, cache_creation_input_tokens: 3, cache_read_input_tokens: 7}
default:
  turns:
    - text: "Writing it."
      tools:
        - {name: Write, input: {file_path: hello.txt, content: "hi there\n"}}
        - {name: Bash, input: {command: "go test ./..."}}
        - {name: Write, input: {file_path: big.txt, content: "%s"}}
`

func startMock(t *testing.T, yamlText string) (*mockapi.Server, string) {
	t.Helper()
	sc, err := mockapi.ParseScenario([]byte(yamlText))
	if err != nil {
		t.Fatalf("ParseScenario: %v", err)
	}
	srv := mockapi.NewServer(sc)
	u, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("start mock API: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, u
}

func TestUsageAndToolCallsFromScriptedAPI(t *testing.T) {
	big := strings.Repeat("x", 5000)
	mock, u := startMock(t, fmt.Sprintf(toolScenario, big))
	g, sock := startGW(t, Config{Upstream: u}, nil)
	c := apiClient(sock)

	// A streamed turn and its non-streaming fallback (a JSON Message).
	resp := post(t, c, baseURL+"/v1/messages?beta=true", placeholder, messagesBody(true))
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	sse := readBody(t, resp)
	if !strings.Contains(sse, "event: message_stop") || !strings.Contains(sse, "input_json_delta") {
		t.Fatalf("the stream did not pass through intact:\n%s", sse)
	}
	resp = post(t, c, baseURL+"/v1/messages?beta=true", placeholder, messagesBody(false))
	if resp.StatusCode != 200 {
		t.Fatalf("fallback status %d", resp.StatusCode)
	}
	readBody(t, resp)

	for _, r := range mock.Requests() {
		if !r.APIKey || r.Authorization {
			t.Errorf("scripted API saw api key %v, authorization %v", r.APIKey, r.Authorization)
		}
	}
	st := g.Stats()
	want := Usage{InputTokens: 2000, OutputTokens: 100, CacheReadTokens: 14, CacheWriteTokens: 6}
	if st.Usage != want {
		t.Errorf("usage %+v, want %+v", st.Usage, want)
	}
	if len(st.ToolCalls) != 6 {
		t.Fatalf("tool calls %d, want 6 (3 streamed, 3 in the JSON answer): %+v", len(st.ToolCalls), st.ToolCalls)
	}
	for i := 0; i < 6; i += 3 {
		tc := st.ToolCalls[i : i+3]
		if tc[0].Name != "Write" || string(tc[0].Input) != `{"content":"hi there\n","file_path":"hello.txt"}` {
			t.Errorf("call %d: %s %s", i, tc[0].Name, tc[0].Input)
		}
		if tc[1].Name != "Bash" || string(tc[1].Input) != `{"command":"go test ./..."}` {
			t.Errorf("call %d: %s %s", i+1, tc[1].Name, tc[1].Input)
		}
		var clipped string
		if err := json.Unmarshal(tc[2].Input, &clipped); err != nil {
			t.Fatalf("a clipped input must be a JSON string: %s", tc[2].Input)
		}
		if len(tc[2].Input) > MaxToolInput || !strings.HasPrefix(clipped, `{"content":"xxxx`) || !strings.HasSuffix(clipped, "…") {
			t.Errorf("call %d: clipped input is %d bytes: %.60s…%s", i+2, len(tc[2].Input), clipped, clipped[max(0, len(clipped)-10):])
		}
	}
	if st.Statuses[200] != 2 || st.Requests != 2 {
		t.Errorf("statuses %v requests %d", st.Statuses, st.Requests)
	}
}

func TestStatusesAndLastError(t *testing.T) {
	_, u := startMock(t, `
faults:
  - {http: 401, first: 1}
  - {http: 429, first: 1, retry_after: 2}
`)
	g, sock := startGW(t, Config{Upstream: u}, nil)
	c := apiClient(sock)
	wantLast := []string{"authentication_error: invalid x-api-key", "rate_limit_error: scripted rate limit", "rate_limit_error: scripted rate limit"}
	for i, want := range []int{401, 429, 200} {
		resp := post(t, c, baseURL+"/v1/messages", placeholder, messagesBody(true))
		body := readBody(t, resp)
		if resp.StatusCode != want {
			t.Fatalf("request %d: status %d, want %d: %s", i, resp.StatusCode, want, body)
		}
		if want == 429 && resp.Header.Get("Retry-After") != "2" {
			t.Errorf("retry-after not passed through: %v", resp.Header)
		}
		if le := g.Stats().LastError; le != wantLast[i] {
			t.Errorf("after request %d: LastError %q, want %q", i, le, wantLast[i])
		}
	}
	st := g.Stats()
	if st.Statuses[401] != 1 || st.Statuses[429] != 1 || st.Statuses[200] != 1 || len(st.Statuses) != 3 || st.LastStatus != 200 {
		t.Errorf("statuses %v last %d", st.Statuses, st.LastStatus)
	}
}

func TestMidStreamErrorAndUnreachableUpstream(t *testing.T) {
	_, u := startMock(t, `
faults:
  - {malformed: error_event, first: 1}
`)
	g, sock := startGW(t, Config{Upstream: u}, nil)
	readBody(t, post(t, apiClient(sock), baseURL+"/v1/messages", placeholder, messagesBody(true)))
	if le := g.Stats().LastError; le != "overloaded_error: Overloaded" {
		t.Errorf("LastError after a mid-stream error event: %q", le)
	}

	// Nothing listens upstream: 502 in the API's error shape, no status
	// recorded as the API's.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	g2, sock2 := startGW(t, Config{Upstream: dead.URL}, nil)
	resp := post(t, apiClient(sock2), baseURL+"/v1/messages", placeholder, messagesBody(false))
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, `"api_error"`) {
		t.Errorf("status %d body %s", resp.StatusCode, body)
	}
	st := g2.Stats()
	if len(st.Statuses) != 0 || st.Requests != 1 || !strings.Contains(st.LastError, "upstream request failed") {
		t.Errorf("stats %+v", st)
	}
}

func TestOnlyAPIPathsAreForwarded(t *testing.T) {
	up, got := recordingUpstream(t, "")
	g, sock := startGW(t, Config{Upstream: up.URL}, nil)
	for _, target := range []string{"/", "/v2/messages", "/v1", "/v1/files", "/v1/models", "/v1/messagesX", "/v1/../admin", "/v1/%2e%2e/admin", "/v1/messages/..", "/v1/a\\..\\b", "//v1/messages"} {
		resp, body := rawRequest(t, sock, "POST "+target+" HTTP/1.1\r\nHost: 127.0.0.1:3128\r\nContent-Length: 2\r\n\r\n{}")
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s: status %d, want 404 (%s)", target, resp.StatusCode, body)
		}
	}
	// The CLI's preconnect (2.1.266's is HEAD /api/hello) is answered
	// here, and not as a refusal.
	for _, target := range []string{"/", "/api/hello"} {
		resp, _ := rawRequest(t, sock, "HEAD "+target+" HTTP/1.1\r\nHost: 127.0.0.1:3128\r\n\r\n")
		if resp.StatusCode != http.StatusOK {
			t.Errorf("HEAD %s: %d", target, resp.StatusCode)
		}
	}
	if n := len(got()); n != 0 || g.Stats().Requests != 0 || len(g.Stats().Refused) != 11 {
		t.Errorf("upstream saw %d requests", n)
	}
}

func TestUpstreamTimeout(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so the server notices the gateway hanging up
		select {                    // stall before headers
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(up.Close)
	g, sock := startGW(t, Config{Upstream: up.URL, Timeout: 200 * time.Millisecond}, nil)
	start := time.Now()
	resp := post(t, apiClient(sock), baseURL+"/v1/messages", placeholder, messagesBody(false))
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusGatewayTimeout || time.Since(start) > 3*time.Second {
		t.Errorf("status %d after %s: %s; want 504 soon after the timeout", resp.StatusCode, time.Since(start), body)
	}
	if le := g.Stats().LastError; !strings.Contains(le, "upstream request failed") {
		t.Errorf("LastError %q", le)
	}
}

// A worker that gives up on a request after its own API timeout with no
// answer from upstream saw the API's slowness (UpstreamTimeouts, named in
// LastError); one that drops a request sooner shows nothing of the API
// (ClientDrops); neither is an unreachable API (UpstreamFailures).
func TestWorkerGivesUpWaiting(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select { // no headers for as long as the client stays
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(up.Close)
	for _, c := range []struct {
		name         string
		clientWaits  time.Duration
		timeouts     int
		drops        int
		lastErrorHas string
	}{
		{"after its timeout", 400 * time.Millisecond, 1, 0, "sent no answer in"},
		{"sooner", 50 * time.Millisecond, 0, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, sock := startGW(t, Config{Upstream: up.URL, WorkerTimeout: 400 * time.Millisecond}, nil)
			client := apiClient(sock)
			client.Timeout = c.clientWaits
			req, _ := http.NewRequest(http.MethodPost, baseURL+"/v1/messages", strings.NewReader(messagesBody(true)))
			req.Header.Set("X-Api-Key", placeholder)
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
				t.Fatalf("the client got an answer: %d", resp.StatusCode)
			}
			var st Stats
			for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if st = g.Stats(); st.UpstreamTimeouts+st.ClientDrops > 0 {
					break
				}
			}
			if st.UpstreamTimeouts != c.timeouts || st.ClientDrops != c.drops || st.UpstreamFailures != 0 {
				t.Errorf("timeouts %d drops %d failures %d; want %d %d 0", st.UpstreamTimeouts, st.ClientDrops, st.UpstreamFailures, c.timeouts, c.drops)
			}
			if !strings.Contains(st.LastError, c.lastErrorHas) {
				t.Errorf("LastError %q, want %q in it", st.LastError, c.lastErrorHas)
			}
		})
	}
}
