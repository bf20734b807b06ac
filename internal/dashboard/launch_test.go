package dashboard

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestURLKeepsTheSecretInTheFragment: the secret is in the
// fragment, which no request, server log or Referer carries; the route
// follows it.
func TestURLKeepsTheSecretInTheFragment(t *testing.T) {
	if got := URL("127.0.0.1:4000", "abc", ""); got != "http://127.0.0.1:4000/#t=abc" {
		t.Errorf("no feature: %s", got)
	}
	if got := URL("127.0.0.1:4000", "abc", "auth"); got != "http://127.0.0.1:4000/#t=abc&/run/auth" {
		t.Errorf("a feature: %s", got)
	}
}

// TestLauncher: the file the browser is opened with is zerg's
// user's alone (0600 in a 0700 directory of its own), holds a one-time code
// and never the printed token, and goes once the code is used.
func TestLauncher(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	const token = "launcher-test-token-launcher-test-token"
	srv, err := New(Options{Root: t.TempDir(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	addr := strings.TrimPrefix(hs.URL, "http://")
	file, done, err := srv.Launcher(addr, "auth")
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	for p, want := range map[string]os.FileMode{file: 0o600, filepath.Dir(file): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %o", p, fi, err, want)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), token) {
		t.Errorf("the launcher holds the token:\n%s", b)
	}
	m := regexp.MustCompile(`url=http://` + regexp.QuoteMeta(addr) + `/#t=([0-9a-f]{32})&amp;/run/auth"`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("the launcher does not go on to the dashboard with a code:\n%s", b)
	}
	req, _ := http.NewRequest("POST", hs.URL+"/api/session", nil)
	req.Header.Set("X-Zerg-Login", string(m[1]))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the launcher's code: %d", resp.StatusCode)
	}
	if _, err := os.Stat(filepath.Dir(file)); !os.IsNotExist(err) {
		t.Errorf("the launcher is still there after its code was used: %v", err)
	}
}

// Loopback: only an address of this machine serves without --allow-remote.
func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:0": true, "[::1]:80": true, "localhost:1": true, "0.0.0.0:0": false, "example.com:80": false, ":0": false} {
		if got, err := Loopback(addr); err != nil || got != want {
			t.Errorf("%s: %v, %v, want %v", addr, got, err, want)
		}
	}
	if _, err := Loopback("127.0.0.1"); err == nil {
		t.Error("no port: no error")
	}
}
