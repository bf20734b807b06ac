package driver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cluster"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
)

// clusterRig is a coordinator's Cluster driver on an in-process server,
// a repository with one commit, and agents that answer by hand (no CLI).
type clusterRig struct {
	t      *testing.T
	srv    *cluster.Server
	d      *Cluster
	repo   *gitx.Repo
	base   string
	audits *auditLog
}

type auditLog struct {
	mu   sync.Mutex
	recs []map[string]any
}

func (a *auditLog) record(kind string, f map[string]any) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := map[string]any{"kind": kind}
	for k, v := range f {
		r[k] = v
	}
	a.recs = append(a.recs, r)
	return nil
}

func (a *auditLog) kinds() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, r := range a.recs {
		out = append(out, r["kind"].(string)+":"+stringOf(r["verdict"]))
	}
	return out
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@x", "-c", "commit.gpgSign=false"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func newClusterRig(t *testing.T, streams cluster.StreamsConfig, upstream string) *clusterRig {
	t.Helper()
	srv, err := cluster.StartServer(cluster.ServerOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "base")
	r := &clusterRig{t: t, srv: srv, repo: &gitx.Repo{Runner: gitx.New(dir)}, base: runGit(t, dir, "rev-parse", "HEAD"), audits: &auditLog{}}
	if upstream == "" {
		upstream = "http://127.0.0.1:9"
	}
	r.d = &Cluster{
		Repo: r.repo, Mode: "subprocess", Streams: streams, Upstream: upstream, APIKey: "sk-ant-test-key-0123456789",
		State: t.TempDir(), Journal: filepath.Join(t.TempDir(), "cluster.jsonl"),
		Connect: func(ctx context.Context) (*nats.Conn, func(), error) {
			nc, err := cluster.Connect(ctx, srv.CoordinatorCreds())
			if err != nil {
				return nil, nil, err
			}
			return nc, nc.Close, nil
		},
		Verify:    func(task string) *ClusterVerify { return &ClusterVerify{Command: "true", Timeout: time.Minute} },
		LeaseWait: 2 * time.Second, // the agents' heartbeats come every 100 ms here; margin for a loaded machine
	}
	t.Cleanup(r.d.Close)
	return r
}

// testAgent is an agent's connection that answers by hand.
type testAgent struct {
	name string
	nc   *nats.Conn
	js   jetstream.JetStream
	hb   *cluster.Heartbeater
	mu   sync.Mutex
	held []cluster.Lease
	// caps is what it says it runs (Mode "": subprocess); progress what
	// its heartbeat reports.
	caps     cluster.Capabilities
	progress map[string]cluster.LeaseProgress
}

func (a *testAgent) mode() string {
	if a.caps.Mode == "" {
		return "subprocess"
	}
	return a.caps.Mode
}

// drop stops naming c's lease in the heartbeat (a crash, an abandon).
func (a *testAgent) drop(c *cluster.Claimed) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.held = slices.DeleteFunc(a.held, func(l cluster.Lease) bool { return l == c.Lease })
}

func (r *clusterRig) agent(name string) *testAgent {
	t := r.t
	t.Helper()
	c, err := r.srv.AddAgent(name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	nc, err := cluster.Connect(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	a := &testAgent{name: name, nc: nc, js: js}
	return a
}

// ready makes the agents' buckets once the driver made the streams.
func (r *clusterRig) ready(agents ...*testAgent) {
	t := r.t
	t.Helper()
	js, _ := jetstream.New(r.d.nc)
	for _, a := range agents {
		if err := cluster.EnsureAgentStore(context.Background(), js, a.name); err != nil {
			t.Fatal(err)
		}
		hb, err := cluster.StartHeartbeat(context.Background(), a.js, a.name, 100*time.Millisecond, func() cluster.Heartbeat {
			a.mu.Lock()
			defer a.mu.Unlock()
			return cluster.Heartbeat{Capabilities: cluster.Capabilities{Mode: a.mode()}, Running: append([]cluster.Lease{}, a.held...), Progress: a.progress}
		})
		if err != nil {
			t.Fatal(err)
		}
		a.hb = hb
		t.Cleanup(func() { hb.Stop(context.Background()) })
	}
}

// claim takes the next attempt and reports its lease at once.
func (a *testAgent) claim(t *testing.T) *cluster.Claimed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	caps := a.caps
	caps.Mode = a.mode()
	c, err := cluster.Claim(ctx, a.nc, a.name, caps, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	a.held = append(a.held, c.Lease)
	a.mu.Unlock()
	if err := a.hb.Now(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// answer publishes a result for lease l: a commit adding file on the base,
// as a bundle in the agent's bucket, and a successful report.
func (a *testAgent) answer(t *testing.T, r *clusterRig, l cluster.Lease, file string) {
	t.Helper()
	a.answerWith(t, r, l, file, ClusterReport{Class: outcome.Success, Reason: outcome.ReasonCompleted,
		Worker: claude.Outcome{Class: outcome.Success, Reason: outcome.ReasonCompleted}, Verified: true, VerifyExit: 0, VerifyOutput: "ok " + a.name})
}

// answerWith publishes a result for lease l with the report given.
func (a *testAgent) answerWith(t *testing.T, r *clusterRig, l cluster.Lease, file string, report ClusterReport) {
	t.Helper()
	dir := t.TempDir()
	runGit(t, dir, "clone", "-q", r.repo.Dir, "w")
	w := filepath.Join(dir, "w")
	os.WriteFile(filepath.Join(w, file), []byte(a.name+"\n"), 0o644)
	runGit(t, w, "add", "-A")
	runGit(t, w, "commit", "-q", "-m", "work")
	bundle := filepath.Join(dir, "r.bundle")
	runGit(t, w, "bundle", "create", "-q", bundle, r.base+"..HEAD")
	f, _ := os.Open(bundle)
	defer f.Close()
	ctx := context.Background()
	name, err := cluster.PutResultBundle(ctx, a.js, l, f)
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := json.Marshal(report)
	if err := cluster.PublishResult(ctx, a.js, &cluster.Result{Lease: l, Bundle: name, Outcome: rep}); err != nil {
		t.Fatal(err)
	}
}

type launched struct {
	v   Verdict
	err error
	ws  Workspace
}

func (r *clusterRig) launch(ctx context.Context, task string) chan launched {
	r.t.Helper()
	return r.launchStalling(ctx, task, 0)
}

func wait(t *testing.T, ch chan launched) launched {
	t.Helper()
	select {
	case l := <-ch:
		if l.err != nil {
			t.Fatal(l.err)
		}
		return l
	case <-time.After(20 * time.Second):
		t.Fatal("the launch did not end")
	}
	return launched{}
}

// snapshot is the commit the workspace hands back, and the file it adds.
func (r *clusterRig) snapshot(ws Workspace) (string, string) {
	t := r.t
	t.Helper()
	q, err := r.repo.NewQuarantine(context.Background(), filepath.Join(t.TempDir(), "q"))
	if err != nil {
		t.Fatal(err)
	}
	commit, problem := ws.Snapshot(context.Background(), q, r.base)
	if problem != "" {
		t.Fatalf("snapshot: %s", problem)
	}
	files, err := q.Run(context.Background(), "diff-tree", "--no-commit-id", "--name-only", "-r", r.base, commit)
	if err != nil {
		t.Fatal(err)
	}
	return commit, strings.TrimSpace(files)
}

// TestClusterTakesOneResultPerAttempt: the holder's result is the
// attempt's; another agent's result for the same delivery (it does not
// hold it) is refused, recorded and audited, and its bundle never
// reaches the quarantine. The verification is the agent's report.
func TestClusterTakesOneResultPerAttempt(t *testing.T) {
	t.Parallel() // its own server and repository
	r := newClusterRig(t, cluster.StreamsConfig{AckWait: 5 * time.Second, MaxDeliver: 3, HeartbeatTTL: time.Second}, "")
	a1, a2 := r.agent("a1"), r.agent("a2")
	if err := r.d.start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ch := r.launch(context.Background(), "T1")
	r.ready(a1, a2)
	c := a1.claim(t)
	// a2 reports a1's delivery as its own (its subject and bucket can only
	// be its own).
	a2.answer(t, r, cluster.Lease{AttemptID: c.Attempt.ID, Agent: "a2", Delivery: c.Lease.Delivery}, "forged.txt")
	a1.answer(t, r, c.Lease, "real.txt")
	l := wait(t, ch)
	if l.v.Class != outcome.Success {
		t.Fatalf("verdict %+v", l.v)
	}
	if _, file := r.snapshot(l.ws); file != "real.txt" {
		t.Errorf("the attempt's result adds %q, want real.txt (the holder's)", file)
	}
	if code, out := l.ws.Exec(context.Background(), Command{Command: "true"}); code != 0 || out != "ok a1" {
		t.Errorf("verification = %d %q, want the holder's report", code, out)
	}
	if code, _ := l.ws.Exec(context.Background(), Command{Command: "rm -rf /"}); code == 0 {
		t.Errorf("a command that is not the verification passed on the coordinator")
	}
	if got := strings.Join(r.audits.kinds(), ","); !strings.Contains(got, "cluster_report_refused:conflict") {
		t.Errorf("audit %s: want the refused result", got)
	}
	if j, _ := os.ReadFile(r.d.Journal); !strings.Contains(string(j), `"verdict":"conflict"`) {
		t.Errorf("journal:\n%s", j)
	}
}

// TestClusterDropsALateResult: an agent that stops naming its lease
// (crashed, cut off) loses its attempt after AckWait: it is queued again
// under a new id and another agent takes it; the new holder's result is
// taken and the silent one's late result is recorded and dropped.
// Control: without the take-back the same late result would have been
// taken.
func TestClusterDropsALateResult(t *testing.T) {
	t.Parallel() // its own server and repository
	r := newClusterRig(t, cluster.StreamsConfig{AckWait: time.Second, MaxDeliver: 3, HeartbeatTTL: time.Second}, "")
	a1, a2 := r.agent("a1"), r.agent("a2")
	if err := r.d.start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ch := r.launch(context.Background(), "T2")
	r.ready(a1, a2)
	c1 := a1.claim(t)
	a1.drop(c1)
	c2 := a2.claim(t) // queued again after AckWait
	if c2.Lease.Delivery != 2 || c2.Attempt.ID == c1.Attempt.ID || c2.Attempt.Task != "T2" {
		t.Fatalf("a2's lease %s, want delivery 2 of T2 under a new id", c2.Lease)
	}
	a2.answer(t, r, c2.Lease, "new.txt")
	l := wait(t, ch)
	a1.answer(t, r, c1.Lease, "late.txt")
	time.Sleep(300 * time.Millisecond)
	if _, file := r.snapshot(l.ws); file != "new.txt" {
		t.Errorf("result adds %q, want new.txt", file)
	}
	j, _ := os.ReadFile(r.d.Journal)
	if !strings.Contains(string(j), `"kind":"lease_taken_back"`) || !strings.Contains(string(j), `"queued_as":"`+c2.Attempt.ID+`"`) ||
		!strings.Contains(string(j), `"verdict":"dead"`) {
		t.Errorf("journal lacks the take-back and the dropped late result:\n%s", j)
	}
	// Control: the book takes a delivery-1 result when it is current.
	b := cluster.NewLeaseBook(3)
	b.Register(c1.Lease.AttemptID)
	b.Observe(c1.Lease)
	if v, _ := b.Accept(c1.Lease); v != cluster.Accepted {
		t.Errorf("control: %s", v)
	}
}

// TestClusterDeadLetterIsInfra: an attempt nobody finishes in MaxDeliver
// deliveries fails as infra (stalled), not as the task's fault.
func TestClusterDeadLetterIsInfra(t *testing.T) {
	t.Parallel() // its own server and repository
	r := newClusterRig(t, cluster.StreamsConfig{AckWait: time.Second, MaxDeliver: 2, HeartbeatTTL: time.Second}, "")
	a1 := r.agent("a1")
	if err := r.d.start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ch := r.launch(context.Background(), "T3")
	r.ready(a1)
	a1.drop(a1.claim(t))
	a1.drop(a1.claim(t))
	l := wait(t, ch)
	if l.v.Class != outcome.Infra || l.v.Reason != outcome.ReasonStalled || !strings.Contains(l.v.Detail, "cluster.max_deliver") {
		t.Fatalf("verdict %+v, want infra stalled", l.v)
	}
	if _, problem := l.ws.Snapshot(context.Background(), nil, r.base); problem == "" {
		t.Error("a dead attempt's workspace snapshots without a result")
	}
}

// TestClusterTunnelOnlyForTheHolder: the worker of the agent holding the
// lease reaches the gateway (which sends the real key upstream); another
// agent's request for the same attempt reaches nothing.
func TestClusterTunnelOnlyForTheHolder(t *testing.T) {
	t.Parallel() // its own server and repository
	keys := make(chan string, 4)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		keys <- req.Header.Get("X-Api-Key")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens": 3}`)
	}))
	defer api.Close()
	r := newClusterRig(t, cluster.StreamsConfig{AckWait: 5 * time.Second, MaxDeliver: 3, HeartbeatTTL: time.Second}, api.URL)
	ctx, cancel := context.WithCancel(context.Background())
	a1, a2 := r.agent("a1"), r.agent("a2")
	if err := r.d.start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ch := r.launch(ctx, "T4")
	r.ready(a1, a2)
	c := a1.claim(t)
	post := func(a *testAgent) (int, string) {
		client := &http.Client{Transport: &cluster.Tunnel{NC: a.nc, Subject: cluster.APISubject(a.name, c.Attempt.ID), HeadTimeout: 10 * time.Second}}
		return postCountTokens(t, client, "http://x")
	}
	if code, body := post(a2); code != http.StatusForbidden || !strings.Contains(body, "not leased") {
		t.Errorf("another agent's request: %d %s, want 403", code, body)
	}
	code, body := post(a1)
	if strings.Contains(body, "not leased") {
		t.Fatalf("the holder's request was refused: %d %s", code, body)
	}
	select {
	case k := <-keys:
		if k != r.d.APIKey {
			t.Errorf("upstream got key %q, want the coordinator's", k)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("the holder's request did not reach the API: %d %s", code, body)
	}
	cancel()
	if l := wait(t, ch); l.v.Class != outcome.Infra || l.v.Reason != outcome.ReasonCancelled {
		t.Errorf("a stopped launch: %+v", l.v)
	}
}

// TestClusterTunnelRefusalIsNotForged: when the tunnel refused the lease
// holder's own requests (here: sent before its lease was known), the API
// failure its worker then reports is the coordinator's doing, infra, not a
// forged result; the control, another agent's refused requests, leaves the
// holder's unexplained claim judged forged.
func TestClusterTunnelRefusalIsNotForged(t *testing.T) {
	t.Parallel() // its own server and repository
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		t.Error("a refused request reached the API")
	}))
	defer api.Close()
	for _, c := range []struct {
		refusedAgent string
		class        outcome.Class
		reason       string
	}{
		{"a1", outcome.Infra, outcome.ReasonAPIUnreachable},
		{"a2", outcome.Task, outcome.ReasonForgedResult},
	} {
		t.Run("refused "+c.refusedAgent, func(t *testing.T) {
			t.Parallel()
			r := newClusterRig(t, cluster.StreamsConfig{AckWait: 5 * time.Second, MaxDeliver: 3, HeartbeatTTL: time.Second}, api.URL)
			a1, a2 := r.agent("a1"), r.agent("a2")
			if err := r.d.start(context.Background()); err != nil {
				t.Fatal(err)
			}
			ch := r.launch(context.Background(), "T6")
			r.ready(a1, a2)
			id := ""
			deadline := time.Now().Add(10 * time.Second)
			for id == "" && time.Now().Before(deadline) {
				r.d.mu.Lock()
				for k := range r.d.pending {
					id = k
				}
				r.d.mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
			refused := map[string]*testAgent{"a1": a1, "a2": a2}[c.refusedAgent]
			client := &http.Client{Transport: &cluster.Tunnel{NC: refused.nc, Subject: cluster.APISubject(refused.name, id), HeadTimeout: 10 * time.Second}}
			if code, body := postCountTokens(t, client, "http://x"); code != http.StatusForbidden {
				t.Fatalf("a request without a known lease: %d %s, want 403", code, body)
			}
			cl := a1.claim(t)
			claimed := claude.Outcome{Class: outcome.Infra, Reason: outcome.ReasonRateLimit, Detail: "API Error: 429 rate limited"}
			a1.answerWith(t, r, cl.Lease, "x.txt", ClusterReport{Class: outcome.Infra, Reason: outcome.ReasonRateLimit, Worker: claimed})
			l := wait(t, ch)
			if l.v.Class != c.class || l.v.Reason != c.reason {
				t.Errorf("verdict %s/%s (%s), want %s/%s", l.v.Class, l.v.Reason, l.v.Detail, c.class, c.reason)
			}
		})
	}
}

func TestAgentCanRun(t *testing.T) {
	for _, c := range []struct {
		agent, run string
		ok         bool
	}{
		{"subprocess", "subprocess", true},
		{"subprocess", "sandbox", false},
		{"sandbox", "subprocess", true},
		{"sandbox", "sandbox", true},
		{"sandbox", "container", false},
		{"container", "container", true},
		{"container", "sandbox", true},
		{"subprocess", "tasks", false},
		{"", "subprocess", false},
	} {
		if got := AgentCanRun(c.agent, c.run); got != c.ok {
			t.Errorf("AgentCanRun(%s, %s) = %v, want %v", c.agent, c.run, got, c.ok)
		}
	}
}
