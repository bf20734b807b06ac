package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestStartRejects(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no credential", Config{Upstream: "http://127.0.0.1:1"}, "neither an API key"},
		{"bad upstream", Config{Upstream: "ftp://x", APIKey: realKey}, "not an http(s) base URL"},
		{"upstream with credentials", Config{Upstream: "https://u:p@api.example.com", APIKey: realKey}, "not an http(s) base URL"},
		{"negative timeout", Config{APIKey: realKey, Timeout: -1}, "negative"},
	}
	for _, bad := range []struct{ entry, want string }{
		{"*", "allow-all"},
		{"", "allow-all"},
		{"localhost", "loopback name localhost is always refused"},
		{"LOCALHOST.:8080", "loopback name localhost is always refused"},
		{"*.localhost", "localhost names"},
		{"127.0.0.1", "loopback address 127.0.0.1 is always refused"},
		{"0x7f.1:80", "loopback address 127.0.0.1 is always refused"},
		{"[::1]:443", "loopback address ::1 is always refused"},
		{"169.254.169.254", "metadata address"},
		{"0.0.0.0", "unspecified"},
		{"*.com", "at least two labels"},
		{"*.203.0.113.1", "wildcard needs a domain name"},
		{"example.com:0", "bad port"},
		{"example.com:", "missing port"},
		{"example.com:http", "bad port"},
		{"exa mple.com", "not allowed in a host name"},
		{"::1", "brackets"},
		{"1.2.3.4.5", "more than four parts"},
	} {
		cases = append(cases, struct {
			name string
			cfg  Config
			want string
		}{"allow " + bad.entry, Config{APIKey: realKey, Allow: []string{"example.com", bad.entry}}, bad.want})
	}
	for i, c := range cases {
		_, err := start(c.cfg, filepath.Join(dir, fmt.Sprintf("%d.sock", i)), newFakeNet().hooks())
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "start gateway: ") {
			t.Errorf("%s: err %v, want one containing %q", c.name, err, c.want)
		}
	}

	// An existing path is not replaced, and an over-long one is refused.
	existing := filepath.Join(dir, "taken.sock")
	if err := os.WriteFile(existing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(Config{APIKey: realKey}, existing); err == nil {
		t.Error("Start replaced an existing file")
	}
	if _, err := Start(Config{APIKey: realKey}, "/tmp/"+strings.Repeat("x", 110)); err == nil || !strings.Contains(err.Error(), "limit is 107") {
		t.Errorf("long socket path: %v", err)
	}
}

func TestAllowlistMatching(t *testing.T) {
	fn := newFakeNet()
	var allowed []string
	g, err := newGateway(Config{APIKey: realKey, Allow: []string{"Example.COM.", "*.Pkg.Example.org:8443", "203.0.113.7", "[2001:db8::1]:443"}}, fn.hooks())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{
		"example.com:443", "example.com:80", "EXAMPLE.com.:443", "example.com:8080", "a.example.com:443",
		"a.pkg.example.org:8443", "a.b.pkg.example.org:8443", "pkg.example.org:8443", "a.pkg.example.org:443", "apkg.example.org:8443",
		"203.0.113.7:80", "3405803783:443", "203.0.113.007:443", "203.0.113.8:443",
		"[2001:db8::1]:443", "[2001:DB8:0::1]:443", "[2001:db8::1]:80",
	} {
		h, p, err := splitTarget(c)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		for _, e := range g.allow {
			if e.matches(h, p) {
				allowed = append(allowed, c)
				break
			}
		}
	}
	// 203.0.113.007 is octal 7 in the last part: 203.0.113.7.
	want := "example.com:443 example.com:80 EXAMPLE.com.:443 a.pkg.example.org:8443 a.b.pkg.example.org:8443 " +
		"203.0.113.7:80 3405803783:443 203.0.113.007:443 [2001:db8::1]:443 [2001:DB8:0::1]:443"
	if got := strings.Join(allowed, " "); got != want {
		t.Errorf("allowed:\n got %s\nwant %s", got, want)
	}
}

func TestCloseSummaryAndSocket(t *testing.T) {
	_, u := startMock(t, fmt.Sprintf(toolScenario, "big"))
	audit := &auditLog{}
	g, sock := startGW(t, Config{Upstream: u, Audit: audit.record}, nil)
	readBody(t, post(t, apiClient(sock), baseURL+"/v1/messages", placeholder, messagesBody(true)))
	rawRequest(t, sock, "CONNECT evil.example:443 HTTP/1.1\r\nHost: x\r\n\r\n")
	if fi, err := os.Stat(sock); err != nil || fi.Mode()&0o777 != 0o666 || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("socket %v %v, want a socket with mode 0666", fi, err)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket still there after Close: %v", err)
	}
	if _, err := net.Dial("unix", sock); err == nil {
		t.Error("the socket still accepts connections")
	}
	sums := audit.kinds(AuditSummary)
	if len(sums) != 1 {
		t.Fatalf("%d summaries, want 1", len(sums))
	}
	b, err := json.Marshal(sums[0])
	if err != nil {
		t.Fatalf("the summary must marshal for the audit log: %v", err)
	}
	for _, want := range []string{`"requests":1`, `"statuses":{"200":1}`, `"input_tokens":1000`, `"output_tokens":50`,
		`"tool_calls":3`, `"tools":{"Bash":1,"Write":2}`, `"denied":1`, `"foreign_keys":0`, `"egress":0`, `{"name":"Bash","input":{"command":"go test ./..."}}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summary lacks %s:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), realKey) {
		t.Error("the summary holds the key")
	}
}

func TestCloseReportsAuditFailures(t *testing.T) {
	audit := &auditLog{fail: errors.New("disk full")}
	g, sock := startGW(t, Config{Audit: audit.record}, nil)
	resp, _ := rawRequest(t, sock, "CONNECT evil.example:443 HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a failing audit must not change the decision: %d", resp.StatusCode)
	}
	err := g.Close()
	if err == nil || !strings.Contains(err.Error(), "close gateway: ") || !strings.Contains(err.Error(), "audit egress_denied: disk full") ||
		!strings.Contains(err.Error(), "audit gateway: disk full") {
		t.Errorf("Close: %v", err)
	}
}

// Denials past MaxDenials are counted, not listed or audited.
func TestDenialsAreBounded(t *testing.T) {
	audit := &auditLog{}
	g, sock := startGW(t, Config{Audit: audit.record}, nil)
	c := proxyClient(sock, nil)
	for i := 0; i < MaxDenials+5; i++ {
		resp, err := c.Get(fmt.Sprintf("http://evil.example/%d", i))
		if err != nil {
			t.Fatal(err)
		}
		readBody(t, resp)
	}
	st := g.Stats()
	if len(st.Denied) != MaxDenials || st.DeniedOmitted != 5 || len(audit.kinds(AuditEgressDenied)) != MaxDenials {
		t.Errorf("denied %d omitted %d audited %d", len(st.Denied), st.DeniedOmitted, len(audit.kinds(AuditEgressDenied)))
	}
}

// Many workers' worth of requests at once: model calls, denials and
// allowlisted egress. Run with -race.
func TestConcurrentRequests(t *testing.T) {
	_, u := startMock(t, fmt.Sprintf(toolScenario, "big"))
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	t.Cleanup(plain.Close)
	fn := newFakeNet()
	fn.route("mirror.example.org", "203.0.113.30", 80, plain.Listener.Addr().String())
	audit := &auditLog{}
	g, sock := startGW(t, Config{Upstream: u, Allow: []string{"mirror.example.org"}, Audit: audit.record}, fn)
	api, px := apiClient(sock), proxyClient(sock, nil)
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, 3*n)
	for i := 0; i < n; i++ {
		wg.Add(3)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, baseURL+"/v1/messages", strings.NewReader(messagesBody(i%2 == 0)))
			req.Header.Set("X-Api-Key", placeholder)
			resp, err := api.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				errs <- fmt.Errorf("model call: %d", resp.StatusCode)
			}
			_, _ = drain(resp)
		}()
		go func() {
			defer wg.Done()
			resp, err := px.Get(fmt.Sprintf("http://evil%d.example/", i))
			if err != nil {
				errs <- err
				return
			}
			_, _ = drain(resp)
			if resp.StatusCode != http.StatusForbidden {
				errs <- fmt.Errorf("denial: %d", resp.StatusCode)
			}
		}()
		go func() {
			defer wg.Done()
			resp, err := px.Get("http://mirror.example.org/x")
			if err != nil {
				errs <- err
				return
			}
			if b, _ := drain(resp); string(b) != "ok" {
				errs <- fmt.Errorf("egress: %d %q", resp.StatusCode, b)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := g.Stats()
	want := Usage{InputTokens: 1000 * n, OutputTokens: 50 * n, CacheReadTokens: 7 * n, CacheWriteTokens: 3 * n}
	if st.Requests != n || st.Statuses[200] != n || st.Usage != want || len(st.ToolCalls) != 3*n || len(st.Denied) != n || st.Egress != n {
		t.Errorf("stats after %d of each: requests %d statuses %v usage %+v tool calls %d denied %d egress %d",
			n, st.Requests, st.Statuses, st.Usage, len(st.ToolCalls), len(st.Denied), st.Egress)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if len(audit.kinds(AuditEgressDenied)) != n || len(audit.kinds(AuditSummary)) != 1 {
		t.Errorf("audit: %d denials, %d summaries", len(audit.kinds(AuditEgressDenied)), len(audit.kinds(AuditSummary)))
	}
}

func TestCloseEndsOpenTunnels(t *testing.T) {
	hold, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hold.Close() })
	go func() {
		for {
			c, err := hold.Accept()
			if err != nil {
				return
			}
			defer c.Close() // holds the connection open until the test ends
		}
	}()
	fn := newFakeNet()
	fn.route("hold.example.com", "203.0.113.60", 443, hold.Addr().String())
	g, sock := startGW(t, Config{Allow: []string{"hold.example.com"}}, fn)
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "CONNECT hold.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n")
	buf := make([]byte, len("HTTP/1.1 200 Connection Established\r\n\r\n"))
	if _, err := io.ReadFull(c, buf); err != nil || !strings.Contains(string(buf), " 200 ") {
		t.Fatalf("CONNECT: %q %v", buf, err)
	}
	done := make(chan error, 1)
	go func() { done <- g.Close() }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The client side of the tunnel is closed: a read ends, before the deadline.
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Read(buf); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("tunnel still open after Close: %v", err)
	}
}

func drain(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// Screen rewrites what the summary records of each tool input; Stats keeps
// the input as it came.
func TestSummaryScreensToolInputs(t *testing.T) {
	_, u := startMock(t, fmt.Sprintf(toolScenario, "big"))
	audit := &auditLog{}
	screen := func(in json.RawMessage) json.RawMessage {
		if strings.Contains(string(in), "go test") {
			return json.RawMessage(`"[screened]"`)
		}
		return in
	}
	g, sock := startGW(t, Config{Upstream: u, Audit: audit.record, Screen: screen}, nil)
	readBody(t, post(t, apiClient(sock), baseURL+"/v1/messages", placeholder, messagesBody(true)))
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(audit.kinds(AuditSummary))
	if !strings.Contains(string(b), `{"name":"Bash","input":"[screened]"}`) || strings.Contains(string(b), "go test") {
		t.Errorf("summary:\n%s", b)
	}
	kept := false
	for _, c := range g.Stats().ToolCalls {
		kept = kept || strings.Contains(string(c.Input), "go test")
	}
	if !kept {
		t.Error("Stats lost the input")
	}
}

func TestResetOf(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		h    http.Header
		want string
	}{
		{http.Header{"Retry-After": {"60"}}, "2030-01-02T03:05:05Z"},
		{http.Header{"Anthropic-Ratelimit-Requests-Reset": {"2030-01-02T04:00:00Z"}, "Retry-After": {"5"}}, "2030-01-02T04:00:00Z"},
		{http.Header{"Anthropic-Ratelimit-Unified-Reset": {"1900000000"}}, "2030-03-17T17:46:40Z"},
		{http.Header{}, ""},
	}
	for _, c := range cases {
		if got := resetOf(c.h, now); got != c.want {
			t.Errorf("resetOf(%v) = %q, want %q", c.h, got, c.want)
		}
	}
}

// Only the sandbox's user may use the socket. As root, a process of
// another uid that shares the peer's group (so the socket's mode lets it
// connect) is refused by the kernel's record of who connected; the same
// process as the peer's uid gets through (the control).
func TestOnlyThePeerUsesTheSocket(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test connects as other users")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("needs curl")
	}
	up, got := recordingUpstream(t, "")
	// Reachable by everyone: the test is about what the socket itself
	// allows (t.TempDir's parent is private).
	dir, err := os.MkdirTemp("", "zerg-gw-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	const peerUID, peerGID, otherUID = 64001, 64002, 64003
	audit := &auditLog{}
	g, err := Start(Config{Upstream: up.URL, APIKey: realKey, Placeholder: placeholder, Peer: &Peer{UID: peerUID, GID: peerGID}, Audit: audit.record}, filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	sock := filepath.Join(dir, "s")
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o660 || fi.Sys().(*syscall.Stat_t).Gid != peerGID {
		t.Fatalf("socket %v: want mode 0660, group %d", fi, peerGID)
	}
	as := func(uid int) string {
		cmd := exec.Command(curl, "-sS", "-m", "5", "--unix-socket", sock, "-H", "content-type: application/json",
			"-d", messagesBody(false), "http://127.0.0.1:3128/v1/messages")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: peerGID, Groups: []uint32{}}}
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := as(otherUID); strings.Contains(out, "input_tokens") {
		t.Errorf("uid %d reached the API through the socket: %s", otherUID, out)
	}
	if n := len(got()); n != 0 {
		t.Errorf("the upstream saw %d requests of another user", n)
	}
	if out := as(peerUID); !strings.Contains(out, "input_tokens") {
		t.Errorf("the peer's own request did not get through: %s", out)
	}
	st := g.Stats()
	if st.ForeignPeers != 1 || len(got()) != 1 {
		t.Errorf("foreign peers %d, upstream requests %d; want 1 and 1", st.ForeignPeers, len(got()))
	}
	if e := audit.kinds(AuditForeignPeer); len(e) != 1 || e[0]["uid"] != otherUID {
		t.Errorf("%s audit entries: %v", AuditForeignPeer, e)
	}
}
