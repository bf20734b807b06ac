package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// token is plain on purpose: a random-looking literal reads as a leaked key to
// the secrets scan of this repository's own source (e2e/secrets).
const token = "dashboard-test-token-dashboard-test-token"

// fixture is a git repository with a run log of feature "demo" (started,
// nothing else yet), the log left open for the test to append to, and
// a dashboard served over it.
type fixture struct {
	paths   run.Paths
	log     *eventlog.Log
	server  *Server
	srv     *httptest.Server
	session string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	t.Setenv("ZERG_WORKSPACES", t.TempDir())
	if out, err := exec.Command("git", "init", "-q", "-b", "main", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	p, err := run.PathsFor(context.Background(), root, "demo")
	if err != nil {
		t.Fatal(err)
	}
	log, _, err := eventlog.Open(p.Events)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	if _, err := log.AppendData(runstate.EvRunStarted, "", 0, runstate.RunStarted{Feature: "demo", Integration: run.IntegrationBranch("demo")}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Root: root, Token: token, Loopback: true, Poll: 10 * time.Millisecond, Refresh: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(func() { s.Close(); srv.Close() })
	return &fixture{paths: p, log: log, server: s, srv: srv}
}

// start starts level 1 with task T1 and T1's first attempt.
func (f *fixture) start(t *testing.T) {
	t.Helper()
	if _, err := f.log.AppendData(runstate.EvLevelStarted, "", 0, runstate.LevelStarted{Level: 1, Tasks: []string{"T1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.log.AppendData(runstate.EvAttemptStarted, "T1", 1, runstate.AttemptStarted{Level: 1}); err != nil {
		t.Fatal(err)
	}
}

// login exchanges a login secret for a session (POST /api/session): the
// session, or "" with the status of a refusal.
func (f *fixture) login(t *testing.T, secret string) (string, int) {
	t.Helper()
	req, _ := http.NewRequest("POST", f.srv.URL+"/api/session", nil)
	req.Header.Set(loginHeader, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if len(resp.Cookies()) > 0 {
		t.Errorf("the login set cookies %v: a cookie for 127.0.0.1 goes to every port", resp.Cookies())
	}
	if resp.StatusCode != http.StatusOK {
		return "", resp.StatusCode
	}
	var body struct {
		Session string `json:"session"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Session == "" {
		t.Fatalf("the login's answer: %+v %v", body, err)
	}
	return body.Session, resp.StatusCode
}

// get requests path with the fixture's session (logging in once).
func (f *fixture) get(t *testing.T, path string) *http.Response {
	t.Helper()
	if f.session == "" {
		f.session, _ = f.login(t, token)
	}
	return f.getWith(t, path, map[string]string{sessionHeader: f.session})
}

// getWith requests path with these headers only.
func (f *fixture) getWith(t *testing.T, path string, headers map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", f.srv.URL+path, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestSessionRequired: everything of a run needs a session, given only for
// the token or a one-time code, and carried in a header: never a cookie
// (which 127.0.0.1 would send to every port), nor the token itself in a
// query or a header. The page and its assets, which hold nothing of a run,
// are served to anyone, so that the page can log in.
func TestSessionRequired(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/", "/assets/app.js"} {
		if got := f.getWith(t, path, nil).StatusCode; got != http.StatusOK {
			t.Errorf("%s: %d, want 200", path, got)
		}
	}
	guarded := []string{"/api/runs", "/api/runs/demo", "/api/runs/demo/stream", "/api/runs/demo/tasks/T1", "/api/runs/demo/cost",
		"/api/runs/demo/cost/tasks.svg", "/api/nope", "/nope", "/assets/../api/runs"}
	for _, path := range guarded {
		for name, h := range map[string]map[string]string{
			"nothing":               nil,
			"the token as a cookie": {"Cookie": "zerg_dashboard=" + token},
			"the token as session":  {sessionHeader: token},
			"the token to login":    {loginHeader: token},
			"a wrong session":       {sessionHeader: "0123456789abcdef0123456789abcdef"},
		} {
			if got := f.getWith(t, path, h).StatusCode; got != http.StatusForbidden && got != http.StatusMovedPermanently {
				t.Errorf("%s with %s: %d, want 403", path, name, got)
			}
		}
		if got := f.getWith(t, path+"?t="+token, nil).StatusCode; got != http.StatusForbidden && got != http.StatusMovedPermanently {
			t.Errorf("%s?t=TOKEN: %d, want 403", path, got)
		}
	}
	for _, bad := range []string{"", "wrong", token[:31], token + "x"} {
		if s, code := f.login(t, bad); s != "" || code != http.StatusForbidden {
			t.Errorf("login with %q: %q %d, want 403", bad, s, code)
		}
	}
	resp := f.get(t, "/api/runs")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("with a session: %d", resp.StatusCode)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	// Each login is a session of its own; the token gives as many as asked.
	if s2, _ := f.login(t, token); s2 == "" || s2 == f.session {
		t.Errorf("a second login: %q (first %q)", s2, f.session)
	}
}

// TestOneTimeCode: the launcher's code gives one session, once, and says
// so (the file goes); the second use is refused.
func TestOneTimeCode(t *testing.T) {
	f := newFixture(t)
	used := 0
	code, err := f.server.OneTimeCode(func() { used++ })
	if err != nil {
		t.Fatal(err)
	}
	s, _ := f.login(t, code)
	if s == "" || used != 1 {
		t.Fatalf("first use: session %q, used %d", s, used)
	}
	if got := f.getWith(t, "/api/runs", map[string]string{sessionHeader: s}).StatusCode; got != http.StatusOK {
		t.Errorf("the code's session: %d", got)
	}
	if s2, code2 := f.login(t, code); s2 != "" || code2 != http.StatusForbidden || used != 1 {
		t.Errorf("second use: %q %d, used %d", s2, code2, used)
	}
}

// TestLoopbackHostOnly: a request whose Host is another site's name (a
// page whose DNS name was rebound to 127.0.0.1) gets nothing, not even
// the page.
func TestLoopbackHostOnly(t *testing.T) {
	f := newFixture(t)
	for host, want := range map[string]int{
		"evil.example": http.StatusForbidden, "evil.example:80": http.StatusForbidden, "127.0.0.1.evil.example": http.StatusForbidden,
		"localhost": http.StatusOK, "127.0.0.1": http.StatusOK, "[::1]:8080": http.StatusOK,
	} {
		req, _ := http.NewRequest("GET", f.srv.URL+"/", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// Only runs of the repository and tasks of the run are read: anything
// else, a path that tries to climb out included, is a 404.
func TestUnknownRunAndTask(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/api/runs/other", "/api/runs/demo/tasks/nope", "/api/runs/demo/tasks/..%2F..%2Fevents.jsonl", "/api/runs/..%2Fruns/cost", "/api/runs/demo/cost/nope.svg"} {
		if got := f.get(t, path).StatusCode; got != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, got)
		}
	}
}

// The stream sends the view at once, then again when the log changes: an
// attempt started shows the task running, without the page asking.
func TestStreamFollowsTheLog(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	session, _ := f.login(t, token)
	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/api/runs/demo/stream", nil)
	req.Header.Set(sessionHeader, session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	lines := bufio.NewScanner(resp.Body)
	next := func() Snapshot {
		t.Helper()
		for lines.Scan() {
			if d, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				var s Snapshot
				if err := json.Unmarshal([]byte(d), &s); err != nil {
					t.Fatal(err)
				}
				return s
			}
		}
		t.Fatalf("stream ended: %v", lines.Err())
		return Snapshot{}
	}
	first := next()
	if first.View.Feature != "demo" || !strings.Contains(first.Graph, "<svg") {
		t.Fatalf("first snapshot %+v", first.View)
	}
	f.start(t)
	// start appends two events; a poll may fall between them and send the
	// level started with T1 still ready. The stream must still follow to
	// the attempt: read until T1 runs (the context bounds the wait).
	second := next()
	for len(second.View.Tasks) == 1 && second.View.Tasks[0].Status == runstate.StatusReady {
		second = next()
	}
	if len(second.View.Tasks) != 1 || second.View.Tasks[0].Status != runstate.StatusRunning {
		t.Fatalf("after attempt_started: %+v", second.View.Tasks)
	}
	if !strings.Contains(second.Graph, `data-task="T1" data-status="running"`) {
		t.Errorf("the graph does not show T1 running:\n%s", second.Graph)
	}
}

// The task page reads the attempt's records; what a worker wrote stays
// data (JSON strings), and a record is cut at its bound.
func TestTaskPageReadsRecords(t *testing.T) {
	f := newFixture(t)
	f.start(t)
	dir := f.paths.AttemptDir("T1", 1)
	os.MkdirAll(dir, 0o700)
	stream := `{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"tu1","name":"Write","input":{"file_path":"<b>x</b>"}}]}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"denied","is_error":true}]}}
`
	os.WriteFile(filepath.Join(dir, "stream.jsonl"), []byte(stream), 0o600)
	os.WriteFile(filepath.Join(dir, "diff.patch"), []byte("diff --git a/x b/x\n+<script>\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "verify.log"), []byte(strings.Repeat("v", maxVerify+10)+"END"), 0o600)
	page, ok, err := taskPage(f.paths, "T1")
	if err != nil || !ok || len(page.Attempts) != 1 {
		t.Fatalf("%v %v %+v", ok, err, page)
	}
	a := page.Attempts[0]
	if len(a.ToolCalls) != 1 || a.ToolCalls[0].Name != "Write" || !a.ToolCalls[0].Error || a.ToolCalls[0].Result != "denied" {
		t.Errorf("tool calls %+v", a.ToolCalls)
	}
	if !strings.Contains(a.Diff, "+<script>") || !strings.HasSuffix(a.Verify, "END") || !a.Truncated || len(a.Verify) != maxVerify {
		t.Errorf("diff %q, verify len %d, truncated %v", a.Diff, len(a.Verify), a.Truncated)
	}
}

// The gate page serves a gate run's whole output from its log (not the
// event's excerpt), and a gate the view does not have is a 404.
func TestGatePageReadsTheGateLog(t *testing.T) {
	f := newFixture(t)
	full := "FAILED tests/test_x.py::test_x\n" + strings.Repeat("noise\n", 1000) + "1 failed\n"
	rel := run.GateLogName(1, "tests")
	os.MkdirAll(filepath.Join(f.paths.RunDir, "gates"), 0o700)
	os.WriteFile(filepath.Join(f.paths.RunDir, rel), []byte(full), 0o600)
	if _, err := f.log.AppendData(runstate.EvGateFinished, "", 0, runstate.GateFinished{Level: 1, Name: "tests", Exit: 1, Required: true, Output: "…1 failed\n", Log: rel, Named: []string{"T1"}}); err != nil {
		t.Fatal(err)
	}
	resp := f.get(t, "/api/runs/demo/gates/0")
	var page GatePage
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %v", resp.StatusCode, err)
	}
	if page.Output != full || !page.FromLog || page.Gate.Name != "tests" || len(page.Gate.Named) != 1 {
		t.Errorf("gate page: from log %v, %d bytes, %+v", page.FromLog, len(page.Output), page.Gate)
	}
	for _, n := range []string{"1", "-1", "x"} {
		if got := f.get(t, "/api/runs/demo/gates/"+n).StatusCode; got != http.StatusNotFound {
			t.Errorf("gate %s: %d, want 404", n, got)
		}
	}
}
