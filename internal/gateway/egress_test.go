package gateway

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// tlsFor trusts srv's certificate, which is valid for example.com.
func tlsFor(srv *httptest.Server) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return &tls.Config{RootCAs: pool}
}

func TestConnectTunnelsToAllowlistedHost(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello over TLS, host %s, key %q", r.Host, r.Header.Get("X-Api-Key"))
	}))
	t.Cleanup(srv.Close)
	fn := newFakeNet()
	// example.com resolves to a documentation address that the test network
	// routes to the TLS server.
	fn.route("example.com", "203.0.113.10", 443, srv.Listener.Addr().String())
	audit := &auditLog{}
	g, sock := startGW(t, Config{Allow: []string{"example.com"}, Audit: audit.record}, fn)
	c := proxyClient(sock, tlsFor(srv))

	resp, err := c.Get("https://EXAMPLE.com./hello")
	if err != nil {
		t.Fatalf("GET through the tunnel: %v", err)
	}
	body := readBody(t, resp)
	if body != `hello over TLS, host EXAMPLE.com., key ""` {
		t.Errorf("body %q", body)
	}
	// A second request on the same client reuses the tunnel or opens a new one;
	// both must work.
	resp, err = c.Get("https://example.com/again")
	if err != nil {
		t.Fatalf("second GET: %v", err)
	}
	readBody(t, resp)
	st := g.Stats()
	if st.Egress < 1 || len(st.Denied) != 0 || len(audit.kinds(AuditEgressDenied)) != 0 {
		t.Errorf("egress %d denied %v", st.Egress, st.Denied)
	}
	if st.Requests != 0 {
		t.Errorf("a tunnel counted as a model-API request")
	}
	for _, d := range fn.dialed() {
		if d != "203.0.113.10:443" {
			t.Errorf("dialled %s; only the checked address may be dialled", d)
		}
	}
}

func TestConnectDeniedAndAudited(t *testing.T) {
	fn := newFakeNet()
	fn.route("other.example", "203.0.113.20", 443, "127.0.0.1:1")
	audit := &auditLog{}
	g, sock := startGW(t, Config{Allow: []string{"example.com", "*.example.com:8443"}, Audit: audit.record}, fn)
	for _, target := range []string{"other.example:443", "example.com:22", "a.example.com:443", "example.com:8443"} {
		resp, body := rawRequest(t, sock, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "not allowlisted") {
			t.Errorf("CONNECT %s: %d %q, want 403 not allowlisted", target, resp.StatusCode, body)
		}
	}
	// Through a real proxy-configured client too.
	if _, err := proxyClient(sock, nil).Get("https://other.example/"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("https GET to a non-allowlisted host: %v, want a Forbidden proxy error", err)
	}
	st := g.Stats()
	if len(st.Denied) != 5 || st.Egress != 0 {
		t.Fatalf("denied %d egress %d", len(st.Denied), st.Egress)
	}
	d := st.Denied[0]
	if d.Method != "CONNECT" || d.Target != "other.example:443" || d.Reason != "not allowlisted" || d.Time.IsZero() {
		t.Errorf("denial %+v", d)
	}
	entries := audit.kinds(AuditEgressDenied)
	if len(entries) != 5 || entries[0]["target"] != "other.example:443" || entries[0]["method"] != "CONNECT" || entries[0]["reason"] != "not allowlisted" {
		t.Errorf("audit entries %v", entries)
	}
	if n := len(fn.dialed()); n != 0 {
		t.Errorf("%d dials for denied targets", n)
	}
}

func TestAbsoluteFormEgress(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "plain %s %s key=%q", r.Host, r.URL.Path, r.Header.Get("X-Api-Key"))
	}))
	t.Cleanup(plain.Close)
	fn := newFakeNet()
	fn.route("mirror.example.org", "203.0.113.30", 80, plain.Listener.Addr().String())
	fn.route("other.example", "203.0.113.31", 80, plain.Listener.Addr().String())
	audit := &auditLog{}
	g, sock := startGW(t, Config{Allow: []string{"mirror.example.org"}, Audit: audit.record}, fn)
	c := proxyClient(sock, nil)

	req, _ := http.NewRequest(http.MethodGet, "http://mirror.example.org/pkg", nil)
	req.Header.Set("X-Api-Key", placeholder)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, resp); body != `plain mirror.example.org /pkg key="sk-ant-sandbox-placeholder"` {
		t.Errorf("allowlisted GET: %d %q (egress must not get the real key)", resp.StatusCode, body)
	}

	resp, err = c.Get("http://other.example/steal?data=1")
	if err != nil {
		t.Fatal(err)
	}
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "not allowlisted") {
		t.Errorf("non-allowlisted GET: %d %q", resp.StatusCode, body)
	}
	// https in absolute form is refused too (clients use CONNECT for it).
	resp2, body2 := rawRequest(t, sock, "GET https://mirror.example.org/ HTTP/1.1\r\nHost: mirror.example.org\r\n\r\n")
	if resp2.StatusCode != http.StatusForbidden {
		t.Errorf("absolute-form https: %d %q", resp2.StatusCode, body2)
	}
	st := g.Stats()
	if st.Egress != 1 || len(st.Denied) != 2 || st.Denied[0].Target != "http://other.example/steal?data=1" || st.Denied[0].Method != "GET" {
		t.Errorf("egress %d denied %+v", st.Egress, st.Denied)
	}
	if n := len(audit.kinds(AuditEgressDenied)); n != 2 {
		t.Errorf("%d audit entries, want 2", n)
	}
	for _, d := range fn.dialed() {
		if d != "203.0.113.30:80" {
			t.Errorf("dialled %s", d)
		}
	}
}

// Spellings of loopback, link-local and unspecified addresses are refused
// whatever the allowlist says, with the canonical address in the reason.
func TestCanonicalisationTricksDenied(t *testing.T) {
	fn := newFakeNet()
	g, sock := startGW(t, Config{Allow: []string{"example.com", "*.example.com"}}, fn)
	cases := []struct{ req, reason string }{
		{"CONNECT 127.1:443", "loopback address 127.0.0.1"},
		{"CONNECT LOCALHOST.:443", "loopback name localhost"},
		{"CONNECT [::1]:443", "loopback address ::1"},
		{"CONNECT [::ffff:127.0.0.1]:443", "loopback address 127.0.0.1"},
		{"CONNECT 0x7f.1:22", "loopback address 127.0.0.1"},
		{"CONNECT 2130706433:443", "loopback address 127.0.0.1"},
		{"CONNECT 0177.0.0.01:443", "loopback address 127.0.0.1"},
		{"CONNECT 0:443", "unspecified address 0.0.0.0"},
		{"CONNECT 169.254.169.254:80", "metadata address 169.254.169.254"},
		{"CONNECT 0xa9.0xfe.0xa9.0xfe:80", "metadata address 169.254.169.254"},
		{"CONNECT [fe80::1]:80", "link-local address fe80::1"},
		{"CONNECT a.b.localhost:443", "loopback name a.b.localhost"},
		{"GET http://127.1/", "loopback address 127.0.0.1"},
		{"GET http://LOCALHOST./", "loopback name localhost"},
		{"GET http://0x7f.1:8080/", "loopback address 127.0.0.1"},
		{"GET http://[::1]:3128/v1/messages", "loopback address ::1"},
		{"GET http://127.0.0.1:80/", "loopback address 127.0.0.1"},
		{"CONNECT 127.0.0.1:3128", "loopback address 127.0.0.1"},
	}
	for _, c := range cases {
		resp, body := rawRequest(t, sock, c.req+" HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "refused: "+c.reason) {
			t.Errorf("%s: %d %q, want 403 refused: %s", c.req, resp.StatusCode, strings.TrimSpace(body), c.reason)
		}
	}
	for _, bad := range []string{"CONNECT 1.2.3.4.5:443", "CONNECT 0x1g.1:443", "CONNECT 256.1.1.1:443", "CONNECT example.com", "CONNECT ex%61mple.com:443", "CONNECT [fe80::1%25eth0]:443", "CONNECT example.com:0", "GET http://%6c%6fcalhost/"} {
		resp, body := rawRequest(t, sock, bad+" HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d %q, want a refusal", bad, resp.StatusCode, body)
		}
	}
	if n := len(fn.dialed()); n != 0 {
		t.Errorf("%d dials: %v", n, fn.dialed())
	}
	if g.Stats().Egress != 0 {
		t.Errorf("egress let through")
	}
}

func TestAllowlistedNameResolvingToRefusedAddress(t *testing.T) {
	fn := newFakeNet()
	fn.resolve("rebind.example.com", "127.0.0.1")
	fn.resolve("mixed.example.com", "203.0.113.40", "169.254.169.254")
	fn.resolve("self.example.com", "10.99.0.1") // the host's own address (fakeNet.own)
	fn.resolve("v6.example.com", "::ffff:127.0.0.2")
	fn.route("ok.example.com", "203.0.113.41", 443, "127.0.0.1:1")
	g, sock := startGW(t, Config{Allow: []string{"*.example.com"}}, fn)
	for _, c := range []struct{ name, reason string }{
		{"rebind.example.com", "loopback address 127.0.0.1"},
		{"mixed.example.com", "metadata address 169.254.169.254"},
		{"self.example.com", "the host's own address 10.99.0.1"},
		{"v6.example.com", "loopback address 127.0.0.2"},
	} {
		for _, req := range []string{"CONNECT " + c.name + ":443", "GET http://" + c.name + "/"} {
			resp, body := rawRequest(t, sock, req+" HTTP/1.1\r\nHost: "+c.name+"\r\n\r\n")
			want := c.name + " resolves to a refused address: " + c.reason
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, want) {
				t.Errorf("%s: %d %q, want 403 %q", req, resp.StatusCode, strings.TrimSpace(body), want)
			}
		}
	}
	if d := fn.dialed(); len(d) != 0 {
		t.Errorf("dialled %v", d)
	}
	// A name that resolves to a fine address but cannot be reached: 502,
	// not a denial.
	resp, _ := rawRequest(t, sock, "CONNECT ok.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("unreachable allowlisted host: %d", resp.StatusCode)
	}
	if n := len(g.Stats().Denied); n != 8 {
		t.Errorf("%d denials, want 8", n)
	}
}

func TestTunnelCarriesBytesSentBeforeTheReply(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { echo.Close() })
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	fn := newFakeNet()
	fn.route("echo.example.com", "203.0.113.50", 7, echo.Addr().String())
	_, sock := startGW(t, Config{Allow: []string{"echo.example.com:7"}}, fn)
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The payload follows the CONNECT in the same write, as an eager TLS
	// client's ClientHello would.
	io.WriteString(c, "CONNECT echo.example.com:7 HTTP/1.1\r\nHost: echo.example.com:7\r\n\r\nping-before-reply")
	want := "HTTP/1.1 200 Connection Established\r\n\r\nping-before-reply"
	got := make([]byte, len(want))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != want {
		t.Errorf("tunnel returned %q (%v), want %q", got, err, want)
	}
}
