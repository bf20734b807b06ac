package rush

import (
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/mockapi"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
)

// nothingWritten fails the test when a refused rush left a trace: the run's
// directory or a branch of zerg's.
func (p *project) nothingWritten(what string) {
	p.t.Helper()
	if _, err := os.Stat(filepath.Join(p.dir, ".zerg", "runs", "demo")); !errors.Is(err, os.ErrNotExist) {
		p.t.Errorf("%s: .zerg/runs/demo exists (%v)", what, err)
	}
	if refs := p.git("for-each-ref", "--format=%(refname)", "refs/heads/zerg/"); refs != "" {
		p.t.Errorf("%s: zerg's branches were written:\n%s", what, refs)
	}
}

// setConfig appends settings to the project's committed config.
func (p *project) setConfig(yaml string) {
	p.t.Helper()
	editFile(p.t, filepath.Join(p.dir, ".zerg", "config.yaml"), func(s string) string { return s + yaml })
	p.git("commit", "-q", "-am", "config")
}

// TestProbesRefuseBeforeAnything: a binary that does not run, a base URL
// nothing answers at and a key the API refuses are each one line naming
// the setting to fix, exit 2, within seconds, with nothing written (no run
// directory, no branch). Before the probes, the broken binary ran for
// minutes as infrastructure failures, and the wrong base URL was blamed on
// the workers.
func TestProbesRefuseBeforeAnything(t *testing.T) {
	t.Parallel()
	p := newProject(t, nil)
	timed := func(env []string, args ...string) (result, time.Duration) {
		t0 := time.Now()
		r := p.zergEnv(env, args...)
		return r, time.Since(t0)
	}
	check := func(what string, r result, took time.Duration, want ...string) {
		t.Helper()
		t.Logf("%s: exit %d in %s: %s", what, r.code, took.Round(10*time.Millisecond), strings.TrimSpace(r.stderr))
		if r.code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s%s", what, r.code, r.stdout, r.stderr)
		}
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr does not say %q:\n%s", what, w, r.stderr)
			}
		}
		if took > time.Minute {
			t.Errorf("%s took %s; the probe is bounded by seconds", what, took)
		}
		p.nothingWritten(what)
	}

	// ZERG_CLAUDE=/bin/true: it exists and exits 0, but is no claude.
	env := append(p.env(), "ZERG_CLAUDE=/bin/true")
	r, took := timed(env, "rush", "demo", "--rehearse")
	check("ZERG_CLAUDE=/bin/true", r, took, "/bin/true", "ZERG_CLAUDE", "does not run")

	// The same from the config (claude.path wins over ZERG_CLAUDE).
	p.setConfig("claude:\n  path: /bin/true\n")
	r, took = timed(p.env(), "rush", "demo", "--rehearse")
	check("claude.path: /bin/true", r, took, "claude.path", "does not run")
	p.git("reset", "-q", "--hard", "HEAD~1")

	// A base URL nothing listens at.
	p.setConfig("claude:\n  base_url: http://127.0.0.1:1\n")
	keyEnv := append(p.env(), "ANTHROPIC_API_KEY=sk-ant-api03-probe-test-key")
	r, took = timed(keyEnv, "rush", "demo", "--yes")
	check("claude.base_url: http://127.0.0.1:1", r, took, "claude.base_url", "cannot be reached")
	if strings.Contains(r.stderr, "sk-ant-api03-probe-test-key") {
		t.Errorf("the key is in the error:\n%s", r.stderr)
	}
	p.git("reset", "-q", "--hard", "HEAD~1")

	// A key the API refuses: the scripted API takes one key only.
	srv := mockapi.NewServer(&mockapi.Scenario{APIKey: "sk-ant-api03-the-right-key"})
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p.setConfig("claude:\n  base_url: " + url + "\n")
	r, took = timed(keyEnv, "rush", "demo", "--yes")
	check("a refused key", r, took, "refused the key", "ANTHROPIC_API_KEY")
}

// cutOffUpstream is the model API for a run whose network to the API goes
// down once the run has started: it answers the rush's probe (so the run
// starts; the control that the probe passes a live endpoint), then stops
// listening, so the gateway's every request meets "connection refused".
// Only the listener closes: closing the server's connections as well cut
// the probe's own answer short once in CI (EOF), and without keep-alives
// no later request can ride the probe's connection.
type cutOffUpstream struct {
	url    string
	probes int
	once   sync.Once
	srv    *http.Server
}

func startCutOffUpstream(t *testing.T) *cutOffUpstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &cutOffUpstream{url: "http://" + ln.Addr().String()}
	api := mockapi.NewServer(nil).Handler()
	u.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.ServeHTTP(w, r)
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			u.probes++
			u.once.Do(func() { _ = ln.Close() })
		}
	})}
	u.srv.SetKeepAlivesEnabled(false)
	go func() { _ = u.srv.Serve(ln) }()
	t.Cleanup(func() { u.srv.Close() })
	return u
}

// TestUpstreamDownMidRunIsTheRuns: the API becomes unreachable after the
// run started (sandbox mode: every request goes through zerg's gateway).
// The gateway's own 502 is an infrastructure fault of the run, never the
// workers' (no forged_result, no task failure), and once three workers met
// it the launching stops with the cause, instead of cycling the breaker.
func TestUpstreamDownMidRunIsTheRuns(t *testing.T) {
	t.Parallel()
	p := newProject(t, nil)
	up := startCutOffUpstream(t)
	p.setConfig("claude:\n  base_url: " + up.url + "\n")
	t0 := time.Now()
	r := p.zergEnv(append(p.env(), "ANTHROPIC_API_KEY=sk-ant-api03-upstream-test-key"), "rush", "demo", "--yes", "--no-check")
	took := time.Since(t0)
	t.Logf("exit %d after %s\n%s", r.code, took.Round(100*time.Millisecond), tail(r.stderr, 12))
	if up.probes != 1 {
		t.Fatalf("the endpoint was probed %d times, want 1 (the run must start)", up.probes)
	}
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (stopped)\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr+r.stdout, "the same infrastructure failure in") || !strings.Contains(r.stderr+r.stdout, "upstream") {
		t.Errorf("the run does not say why it stopped:\n%s%s", r.stdout, r.stderr)
	}
	evs := p.events()
	tasks := map[string]bool{}
	for _, e := range evs {
		if e.Type != runstate.EvAttemptFinished {
			continue
		}
		var f runstate.AttemptFinished
		if err := e.Decode(&f); err != nil {
			t.Fatal(err)
		}
		if f.Reason == "forged_result" || f.Class != "infra" {
			t.Errorf("%s attempt %d: %s %s (%s); the gateway's failure is the run's, not the worker's", e.Task, e.Attempt, f.Class, f.Reason, f.Detail)
		}
		if f.Reason == outcome.ReasonAPIUnreachable {
			tasks[e.Task] = true
		}
	}
	if len(tasks) < 3 {
		t.Errorf("api_unreachable in %d tasks, want 3 before the stop", len(tasks))
	}
	for id, ts := range runstate.Replay(evs).Tasks {
		if ts.Status == runstate.StatusFailed || ts.TaskFailures > 0 {
			t.Errorf("%s: %s with %d task failures; no task is at fault", id, ts.Status, ts.TaskFailures)
		}
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
