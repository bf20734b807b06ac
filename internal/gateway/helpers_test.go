package gateway

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	// Built from pieces so this file holds no secret-shaped literal (the
	// repository's own secret scan reads it).
	realKey     = "sk-ant-" + "api03-REAL-KEY-never-in-the-sandbox-0123456789abcdef"
	realToken   = "sk-ant-" + "oat01-REAL-OAUTH-TOKEN-0123456789abcdef"
	placeholder = "sk-ant-sandbox-placeholder"
)

// fakeNet is the network the gateway sees in tests: names resolve from
// hosts, and dials to an address in routes reach the real listener behind
// it; every dial is recorded.
type fakeNet struct {
	mu     sync.Mutex
	hosts  map[string][]netip.Addr
	routes map[string]string // "ip:port" → real "127.0.0.1:port"
	own    []netip.Addr
	dials  []string
}

func newFakeNet() *fakeNet {
	return &fakeNet{hosts: map[string][]netip.Addr{}, routes: map[string]string{},
		own: []netip.Addr{netip.MustParseAddr("10.99.0.1")}}
}

// route makes name resolve to ip and ip:port reach the listener at real.
func (f *fakeNet) route(name, ip string, port int, real string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := netip.MustParseAddr(ip)
	if name != "" {
		f.hosts[name] = append(f.hosts[name], a)
	}
	f.routes[netip.AddrPortFrom(a, uint16(port)).String()] = real
}

func (f *fakeNet) resolve(name string, ips ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ip := range ips {
		f.hosts[name] = append(f.hosts[name], netip.MustParseAddr(ip))
	}
}

func (f *fakeNet) dialed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.dials...)
}

func (f *fakeNet) hooks() hooks {
	var d net.Dialer
	return hooks{
		lookup: func(_ context.Context, h string) ([]netip.Addr, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if a, ok := f.hosts[h]; ok {
				return a, nil
			}
			return nil, fmt.Errorf("no such host %s", h)
		},
		dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			f.mu.Lock()
			f.dials = append(f.dials, addr)
			real, ok := f.routes[addr]
			f.mu.Unlock()
			if !ok {
				return nil, fmt.Errorf("dial %s: unroutable in the test network", addr)
			}
			return d.DialContext(ctx, network, real)
		},
		own: func() []netip.Addr { return f.own },
	}
}

// auditLog records Config.Audit calls.
type auditLog struct {
	mu      sync.Mutex
	entries []auditEntry
	fail    error
}

type auditEntry struct {
	kind   string
	fields map[string]any
}

func (a *auditLog) record(kind string, fields map[string]any) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, auditEntry{kind, fields})
	return a.fail
}

func (a *auditLog) kinds(kind string) []map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []map[string]any
	for _, e := range a.entries {
		if e.kind == kind {
			out = append(out, e.fields)
		}
	}
	return out
}

// startGW starts a gateway on a socket in t.TempDir() over the fake network
// and closes it when the test ends.
func startGW(t *testing.T, cfg Config, fn *fakeNet) (*Gateway, string) {
	t.Helper()
	if fn == nil {
		fn = newFakeNet()
	}
	sock := filepath.Join(t.TempDir(), "gw.sock")
	if len(sock) > 107 {
		t.Fatalf("socket path %s too long for sun_path; shorten the test name", sock)
	}
	if cfg.APIKey == "" && cfg.AuthToken == "" && cfg.OAuthToken == "" {
		cfg.APIKey = realKey
	}
	if cfg.Placeholder == "" {
		cfg.Placeholder = placeholder
	}
	g, err := start(cfg, sock, fn.hooks())
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g, sock
}

func dialSock(sock string) func(ctx context.Context, _, _ string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, _, _ string) (net.Conn, error) { return d.DialContext(ctx, "unix", sock) }
}

// apiClient talks to the gateway like a client with ANTHROPIC_BASE_URL and
// no proxy: origin-form requests over the socket.
func apiClient(sock string) *http.Client {
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DialContext: dialSock(sock)}}
}

// proxyClient is a sandboxed client: HTTP(S)_PROXY=http://127.0.0.1:3128
// (reached through the socket, as the in-sandbox forwarder does), so plain
// HTTP goes out in absolute form and HTTPS through CONNECT.
func proxyClient(sock string, tlsConf *tls.Config) *http.Client {
	proxy, _ := url.Parse("http://" + SandboxAddr)
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		Proxy: http.ProxyURL(proxy), DialContext: dialSock(sock), TLSClientConfig: tlsConf,
	}}
}

const baseURL = "http://" + SandboxAddr

// rawRequest writes text to a fresh socket connection and reads one response.
func rawRequest(t *testing.T, sock, text string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("dial socket: %v", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, text); err != nil {
		t.Fatalf("write request: %v", err)
	}
	method, _, _ := strings.Cut(text, " ")
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("read response to %q: %v", strings.SplitN(text, "\r\n", 2)[0], err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read body: %v", err)
	}
	return resp, string(b)
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return string(b)
}

// messagesBody is a minimal Messages request the scripted API accepts.
func messagesBody(stream bool) string {
	s := `{"model":"claude-opus-4-8","max_tokens":1000,"tools":[{"name":"Write","input_schema":{}}],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"please create hello.txt"}]}]`
	if stream {
		s += `,"stream":true`
	}
	return s + "}"
}

// countBody is a minimal count_tokens request.
const countBody = `{"model":"claude-opus-4-8","messages":[{"role":"user","content":"hi"}]}`

func post(t *testing.T, c *http.Client, url, key, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	return resp
}
