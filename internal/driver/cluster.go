package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cluster"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/textx"
)

// Cluster runs each attempt's worker on a zerg agent on another machine
// (cluster mode, docs/cluster.md). The attempt waits in this side's
// dispatcher until an agent that can run it asks for one; the agent gets
// it with its base as a git bundle, runs the worker and
// the verification with its own driver, in an isolation never weaker than
// the run's mode, and hands back the result as a bundle and a report. The
// worker reaches the Messages API through the cluster's tunnel and this
// side's gateway, which holds the key and judges the attempt's API
// failures, as in sandbox mode. Everything after the launch — the
// quarantine, the checks, the commit, the merge — is the pipeline's, on
// this machine: the coordinator stays the only writer of the repository.
type Cluster struct {
	Repo *gitx.Repo
	// Local runs zerg's own commands (gates, zerg check): Isolate is
	// its.
	Local Driver
	// Mode is the isolation every attempt needs (config mode).
	Mode string
	// Connect reaches the server (starting it when the coordinator
	// embeds it) as the coordinator's user; done closes what it opened.
	Connect func(ctx context.Context) (nc *nats.Conn, done func(), err error)
	// Streams tunes the claim protocol (AckWait, MaxDeliver).
	Streams cluster.StreamsConfig
	// Verify is a task's verification (nil: none).
	Verify func(task string) *ClusterVerify
	// Upstream and the credentials are the real Messages API: only the
	// gateway on this side holds them.
	Upstream   string
	APIKey     string
	AuthToken  string
	OAuthToken string
	Gateway    gateway.Policy
	// AgentKey is config.AgentKeyLocal when the agents' workers use their
	// own hosts' keys: this side then runs no gateway for the attempts and
	// serves them no tunnel, and takes the agent's verdict, usage and cost
	// from its report (docs/cluster.md, the trade-off).
	AgentKey string
	// State is where base bundles are made; Journal is the cluster's
	// record of leases, revocations and refused results (JSON lines).
	State   string
	Journal string
	// LeaseWait is how long a tunnel request waits for its agent's lease
	// to be seen before it is refused (0: three heartbeats).
	LeaseWait time.Duration
	// Progress, when set, gets one line per notable step.
	Progress func(line string)

	startOnce sync.Once
	startErr  error
	nc        *nats.Conn
	js        jetstream.JetStream
	book      *cluster.LeaseBook
	disp      *cluster.Dispatcher
	stop      context.CancelFunc
	closeConn func()

	mu      sync.Mutex
	pending map[string]*clusterPending
	bases   map[string]bool
	// reported are the refused leases agents named in heartbeats that are
	// journalled already (a taken-back holder may name its lease every
	// second).
	reported  map[cluster.Lease]bool
	bundleMu  sync.Mutex
	journalMu sync.Mutex
}

// clusterPending is an attempt waiting for an agent or for its result.
type clusterPending struct {
	task   string
	number int
	proxy  http.Handler
	audit  func(kind string, fields map[string]any) error
	done   chan clusterOutcome
	// refused counts the tunnel requests refused per agent (under the
	// driver's mu): the holder's requests refused while this side did not
	// know its lease explain an API failure its worker reports.
	refused map[string]int
}

// clusterOutcome is what ends a wait for an attempt's result: the
// accepted result, the attempt taken back from its holder, given back for
// the last time, or found unrunnable by every agent there is.
type clusterOutcome struct {
	result     cluster.Result
	takenBack  *cluster.Notice
	unrunnable *cluster.Notice
	gaveBack   *cluster.GaveBack
}

// ClusterPlaceholderKey is the key an agent's worker holds: the gateway on
// the coordinator's side sends the real one.
const ClusterPlaceholderKey = placeholderKey

func (d *Cluster) Name() string { return "cluster" }

// start connects, sets up the streams and starts listening for claims,
// results, heartbeats and tunnelled API requests: once, at the first
// attempt (zerg check builds the driver only for Isolate).
func (d *Cluster) start(ctx context.Context) error {
	d.startOnce.Do(func() {
		nc, done, err := d.Connect(ctx)
		if err != nil {
			d.startErr = fmt.Errorf("reach the cluster's server: %w", err)
			return
		}
		js, err := jetstream.New(nc)
		if err == nil {
			err = cluster.EnsureStreams(ctx, js, d.Streams)
		}
		if err != nil {
			done()
			d.startErr = fmt.Errorf("set up the cluster's queue: %w", err)
			return
		}
		d.nc, d.js, d.closeConn = nc, js, done
		dc := d.Streams.Dispatch()
		d.book = cluster.NewLeaseBook(dc.MaxDeliver)
		dc.Fits, dc.Assigned = clusterFit, d.assigned
		d.disp = cluster.NewDispatcher(dc)
		d.pending, d.bases, d.reported = map[string]*clusterPending{}, map[string]bool{}, map[cluster.Lease]bool{}
		lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		d.stop = cancel
		if d.startErr = d.listen(lctx); d.startErr != nil {
			cancel()
			done()
		}
	})
	return d.startErr
}

// Close stops listening and closes the connection (and the embedded
// server).
func (d *Cluster) Close() {
	if d.stop != nil {
		d.stop()
	}
	if d.closeConn != nil {
		d.closeConn()
	}
}

func (d *Cluster) listen(ctx context.Context) error {
	cons, err := d.js.Consumer(ctx, cluster.StreamResults, cluster.ResultsConsumer)
	if err != nil {
		return err
	}
	cc, err := cons.Consume(d.onResult)
	if err != nil {
		return err
	}
	agents, err := cluster.WatchAgents(ctx, d.js)
	if err != nil {
		cc.Stop()
		return err
	}
	stopDispatch, err := cluster.ServeDispatch(d.nc, d.disp, d.onGiveBack)
	if err != nil {
		cc.Stop()
		return err
	}
	go func() {
		<-ctx.Done()
		cc.Stop()
		stopDispatch()
	}()
	go func() {
		for ev := range agents {
			d.onAgent(ev)
		}
	}()
	go d.watchDeadlines(ctx)
	go func() { _ = cluster.ServeTunnel(ctx, d.nc, d.handlerFor) }()
	return d.nc.Flush()
}

// watchDeadlines acts on what the dispatcher finds overdue: holders that
// went silent or made no progress lose their attempts, attempts no agent
// can run end, and a run without agents says so.
func (d *Cluster) watchDeadlines(ctx context.Context) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, n := range d.disp.Tick(now) {
				switch n.Kind {
				case cluster.NoticeNoAgent:
					d.journal("no_agent", map[string]any{"mode": d.Mode})
					d.say(fmt.Sprintf("zerg: no agent has joined the cluster for %s; the attempts wait for one: zerg agent --join URL --creds FILE --mode %s (docs/cluster.md)",
						d.Streams.Dispatch().AckWait, agentModeFor(d.Mode)))
				case cluster.NoticeTakenBack:
					// At once: a result of the old holder that races the
					// take-back is refused, not taken.
					d.book.DeadLetter(n.Attempt)
					d.tell(n.Attempt, clusterOutcome{takenBack: &n})
				case cluster.NoticeUnrunnable:
					d.tell(n.Attempt, clusterOutcome{unrunnable: &n})
				}
			}
		}
	}
}

// tell ends the wait of the attempt's Launch, if it still waits.
func (d *Cluster) tell(attemptID string, o clusterOutcome) {
	d.mu.Lock()
	p := d.pending[attemptID]
	d.mu.Unlock()
	if p == nil {
		return
	}
	select {
	case p.done <- o:
	default:
	}
}

// assigned records a lease the dispatcher hands out, before its agent
// hears of it: the book takes its results, the tunnel serves its
// requests.
func (d *Cluster) assigned(l cluster.Lease) {
	_, revoked := d.book.Observe(l)
	fields := map[string]any{"attempt": l.AttemptID, "agent": l.Agent, "delivery": l.Delivery}
	d.mu.Lock()
	if p := d.pending[l.AttemptID]; p != nil {
		fields["task"], fields["number"] = p.task, p.number
	}
	d.mu.Unlock()
	d.journal("lease", fields)
	for _, r := range revoked {
		d.journal("lease_revoked", map[string]any{"attempt": r.AttemptID, "agent": r.Agent, "delivery": r.Delivery, "by": l.Agent, "by_delivery": l.Delivery})
	}
}

// onGiveBack records an attempt its holder gave back: waiting for an
// agent again, or (given back for good, or once too often) ended.
func (d *Cluster) onGiveBack(g cluster.GaveBack) {
	d.journal("given_back", map[string]any{"attempt": g.Lease.AttemptID, "agent": g.Lease.Agent, "delivery": g.Lease.Delivery,
		"why": textx.Clip(g.Why, 300), "requeued": g.Result == cluster.Requeued})
	if g.Result != cluster.Requeued {
		d.tell(g.Lease.AttemptID, clusterOutcome{gaveBack: &g})
	}
}

// onAgent tells the dispatcher which agents are live, with what they can
// run and the leases they name; a lease named that is not the attempt's
// current one is journalled, once.
func (d *Cluster) onAgent(ev cluster.AgentEvent) {
	if ev.Kind == cluster.AgentJoined {
		// Its result bucket: made with its credentials on an embedded
		// server, here for a server zerg does not run.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = cluster.EnsureAgentStore(ctx, d.js, ev.Agent)
		cancel()
	}
	switch ev.Kind {
	case cluster.AgentJoined, cluster.AgentLeft, cluster.AgentExpired:
		rec := map[string]any{"agent": ev.Agent, "host": ev.Heartbeat.Host, "workers": ev.Heartbeat.Workers}
		line := fmt.Sprintf("zerg: agent %s %s", ev.Agent, ev.Kind)
		if ev.Kind == cluster.AgentJoined {
			rec["mode"], rec["local_key"] = ev.Heartbeat.Mode, ev.Heartbeat.LocalKey
			line += fmt.Sprintf(" (mode %s, %d worker(s))", ev.Heartbeat.Mode, ev.Heartbeat.Workers)
			if why := clusterFit(cluster.Capabilities{Mode: d.Mode, LocalKey: d.AgentKey == config.AgentKeyLocal}, ev.Heartbeat.Capabilities); why != "" {
				line += "; it cannot run this run's attempts: " + why
			}
		}
		d.journal("agent_"+ev.Kind.String(), rec)
		d.say(line)
	}
	switch ev.Kind {
	case cluster.AgentJoined, cluster.AgentUpdated:
		if ev.Err == nil {
			d.disp.Heartbeat(ev.Heartbeat, time.Now())
		}
	case cluster.AgentLeft, cluster.AgentExpired:
		d.disp.AgentGone(ev.Agent)
	}
	for _, l := range ev.Heartbeat.Running {
		v := d.book.Check(l)
		if !v.Refused() || v == cluster.Unknown {
			continue
		}
		d.mu.Lock()
		seen := d.reported[l]
		d.reported[l] = true
		d.mu.Unlock()
		if !seen {
			d.refused(l, v, "a heartbeat")
		}
	}
}

// onResult takes one agent's result: exactly one per attempt, from the
// newest lease; any other is recorded and dropped.
func (d *Cluster) onResult(msg jetstream.Msg) {
	defer func() { _ = msg.Ack() }()
	r, err := cluster.ParseResult(msg.Subject(), msg.Data())
	if err != nil {
		d.journal("result_refused", map[string]any{"subject": msg.Subject(), "why": textx.Clip(err.Error(), 300)})
		return
	}
	v, _ := d.book.Accept(r.Lease)
	if v != cluster.Accepted {
		d.refused(r.Lease, v, "a result")
		return
	}
	d.disp.Drop(r.Lease.AttemptID)
	d.mu.Lock()
	p := d.pending[r.Lease.AttemptID]
	d.mu.Unlock()
	if p == nil {
		return
	}
	select {
	case p.done <- clusterOutcome{result: r}:
	default:
	}
}

// refused records a report the book refused, and audits it for the
// attempt when the attempt is this coordinator's.
func (d *Cluster) refused(l cluster.Lease, v cluster.Verdict, what string) {
	fields := map[string]any{"attempt": l.AttemptID, "agent": l.Agent, "delivery": l.Delivery, "verdict": v.String(), "what": what}
	d.journal("report_refused", fields)
	d.mu.Lock()
	p := d.pending[l.AttemptID]
	d.mu.Unlock()
	if p != nil && p.audit != nil {
		_ = p.audit("cluster_report_refused", fields)
	}
	if what == "a result" {
		d.say(fmt.Sprintf("zerg: dropped a result of %s from agent %s (delivery %d): %s", l.AttemptID, l.Agent, l.Delivery, v))
	}
}

// handlerFor is the gateway of the attempt when agent holds its current
// lease, nil (refused) otherwise. An agent's heartbeat reports a new
// lease within a second of its claim; a first request may come before it.
func (d *Cluster) handlerFor(agent, attemptID string) http.Handler {
	d.mu.Lock()
	p := d.pending[attemptID]
	d.mu.Unlock()
	if p == nil {
		return nil
	}
	leaseWait := d.LeaseWait
	if leaseWait == 0 {
		leaseWait = 3 * cluster.HeartbeatEvery
	}
	for wait := time.Now().Add(leaseWait); ; {
		if l, ok := d.book.Current(attemptID); ok && l.Agent == agent {
			if p.proxy == nil {
				return nil
			}
			// A model request of the holder is progress while it runs.
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				d.disp.Activity(agent, attemptID, 1, time.Now())
				defer d.disp.Activity(agent, attemptID, -1, time.Now())
				p.proxy.ServeHTTP(w, r)
			})
		}
		if time.Now().After(wait) {
			d.journal("api_refused", map[string]any{"attempt": attemptID, "agent": agent})
			d.mu.Lock()
			if p.refused == nil {
				p.refused = map[string]int{}
			}
			p.refused[agent]++
			d.mu.Unlock()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (d *Cluster) journal(kind string, fields map[string]any) {
	if d.Journal == "" {
		return
	}
	rec := map[string]any{"time": time.Now().UTC().Format(time.RFC3339Nano), "kind": kind}
	for k, v := range fields {
		rec[k] = v
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	d.journalMu.Lock()
	defer d.journalMu.Unlock()
	f, err := os.OpenFile(d.Journal, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}

func (d *Cluster) say(line string) {
	if d.Progress != nil {
		d.Progress(line)
	}
}

// baseBundle puts a bundle of base (its history, no other branch) in the
// cluster's object store once, and names it.
func (d *Cluster) baseBundle(ctx context.Context, base string) (string, error) {
	name := "base-" + base + ".bundle"
	d.bundleMu.Lock()
	defer d.bundleMu.Unlock()
	d.mu.Lock()
	done := d.bases[base]
	d.mu.Unlock()
	if done {
		return name, nil
	}
	if obs, err := d.js.ObjectStore(ctx, cluster.BucketBundles); err == nil {
		if _, err := obs.GetInfo(ctx, name); err == nil {
			d.mu.Lock()
			d.bases[base] = true
			d.mu.Unlock()
			return name, nil
		}
	}
	if err := os.MkdirAll(d.State, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(d.State, "bundle-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	// A bare repository borrowing the repository's objects, with one
	// branch: the bundle holds base's history and nothing else.
	q, err := d.Repo.NewQuarantine(ctx, filepath.Join(tmp, "repo"))
	if err != nil {
		return "", err
	}
	file := filepath.Join(tmp, "base.bundle")
	if _, err := q.Run(ctx, "update-ref", "refs/heads/base", base); err != nil {
		return "", err
	}
	if _, err := q.Run(ctx, "bundle", "create", "-q", file, "refs/heads/base"); err != nil {
		return "", fmt.Errorf("bundle the base %s: %w", base, err)
	}
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := cluster.PutBaseBundle(ctx, d.js, name, f); err != nil {
		return "", err
	}
	d.mu.Lock()
	d.bases[base] = true
	d.mu.Unlock()
	return name, nil
}

func (d *Cluster) Prepare(ctx context.Context, a Attempt) (Workspace, error) {
	// The parents as every driver makes them (the worker users of a local
	// mode pass through them); the workspace itself is zerg's alone.
	if err := os.MkdirAll(filepath.Dir(a.Workspace), 0o755); err != nil {
		return nil, fmt.Errorf("create workspace for %s: %w", a.Task, err)
	}
	if err := os.Mkdir(a.Workspace, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("create workspace for %s: %w", a.Task, err)
	}
	return &remote{d: d, a: a, dir: a.Workspace}, nil
}

// Reopen is the record of an attempt a dead coordinator left: its result,
// if the agent's bundle reached it, else nothing to snapshot.
func (d *Cluster) Reopen(ctx context.Context, a Attempt) (Workspace, error) {
	if _, err := os.Stat(a.Workspace); err != nil {
		return nil, err
	}
	w := &remote{d: d, a: a, dir: a.Workspace}
	if _, err := os.Stat(w.bundle()); err != nil {
		w.problem = "the coordinator stopped before the agent's result arrived"
	}
	return w, nil
}

func (d *Cluster) Isolate(ctx context.Context, commit, name string) (Workspace, error) {
	return d.Local.Isolate(ctx, commit, name)
}

// remote is an attempt's workspace on this side: a directory that receives
// the agent's result bundle. The worker's checkout is on the agent.
type remote struct {
	d       *Cluster
	a       Attempt
	dir     string
	report  *ClusterReport
	agent   string
	problem string
}

func (w *remote) Dir() string    { return w.dir }
func (w *remote) bundle() string { return filepath.Join(w.dir, "result.bundle") }

// Launch queues the attempt and waits for an agent's accepted result, its
// dead letter or the end of the run. The verdict is judged from this
// side's gateway, as in sandbox mode.
func (w *remote) Launch(ctx context.Context, sp claude.Spec, _ Starter) (Verdict, error) {
	d, a := w.d, w.a
	if err := d.start(ctx); err != nil {
		return Verdict{}, err
	}
	baseName, err := d.baseBundle(ctx, a.Base)
	if err != nil {
		return Verdict{}, fmt.Errorf("cluster: the base of %s: %w", a.Task, err)
	}
	var verify *ClusterVerify
	if d.Verify != nil {
		verify = d.Verify(a.Task)
	}
	job := ClusterJob{Mode: d.Mode, Worker: jobWorker(sp), Verify: verify}
	policy := d.Gateway
	policy.Models, policy.TaskUSD = a.Models, a.TaskUSD
	local := d.AgentKey == config.AgentKeyLocal
	if local {
		job.AgentKey = config.AgentKeyLocal
		job.Policy = &ClusterPolicy{Models: policy.Models, Resolved: policy.Resolved, MaxTokens: policy.MaxTokens, Betas: policy.Betas,
			Strict: policy.Strict, ServerTools: policy.ServerTools, BudgetUSD: localBudget(policy)}
	}
	spec, err := json.Marshal(job)
	if err != nil {
		return Verdict{}, err
	}
	// The attempt's gateway: the key, its policy, its record. Agents reach
	// it only through the tunnel, only while they hold the lease. A local
	// run's attempts have none here: their agents' gateways hold their
	// own keys, and a request on the tunnel is refused.
	var gw *gateway.Gateway
	var proxy http.Handler
	if !local {
		sockDir, err := fsx.MkdirTemp("zerg-cgw-")
		if err != nil {
			return Verdict{}, err
		}
		defer os.RemoveAll(sockDir)
		sock := filepath.Join(sockDir, "s")
		gw, err = gateway.Start(gateway.Config{
			Upstream: d.Upstream, APIKey: d.APIKey, AuthToken: d.AuthToken, OAuthToken: d.OAuthToken, Placeholder: placeholderKey,
			Audit: a.Audit, Screen: a.Screen, Policy: policy, Price: priceUsage, WorkerTimeout: sp.APITimeout,
		}, sock)
		if err != nil {
			return Verdict{}, fmt.Errorf("start the gateway of %s: %w", a.Task, err)
		}
		proxy = unixProxy(sock)
	}
	gwClosed := false
	closeGW := func() error {
		if gwClosed || gw == nil {
			return nil
		}
		gwClosed = true
		return gw.Close()
	}
	defer func() { _ = closeGW() }() // on the early returns; the normal path checks its error

	p := &clusterPending{task: a.Task, number: a.Number, proxy: proxy, audit: a.Audit, done: make(chan clusterOutcome, 1)}
	need := cluster.Capabilities{Mode: d.Mode, LocalKey: local}
	deadlines := cluster.Deadlines{Stall: sp.IdleTimeout}
	if verify != nil {
		deadlines.Verify = verify.Timeout
	}
	id := cluster.NewAttemptID(a.Task, a.Number)
	defer func() { d.unregister(id) }()
	var delivered uint64
	var got clusterOutcome
	for {
		// Registered before it can be handed out: the book takes only its
		// leases' results, the tunnel serves only its holder.
		d.book.Register(id)
		d.mu.Lock()
		d.pending[id] = p
		d.mu.Unlock()
		d.disp.Enqueue(cluster.Attempt{ID: id, Task: a.Task, Number: a.Number, Base: a.Base, BaseBundle: baseName, Spec: spec}, need, deadlines, delivered, time.Now())
		d.journal("attempt_queued", map[string]any{"attempt": id, "task": a.Task, "number": a.Number, "base": a.Base})
		_ = os.WriteFile(filepath.Join(w.dir, "attempt-id"), []byte(id+"\n"), 0o600)
		select {
		case got = <-p.done:
		case <-ctx.Done():
			// Nobody is to run it any more (an agent running it already
			// sends a result the book then refuses as dead).
			w.problem = "the run was stopped before an agent's result arrived"
			_ = closeGW()
			v := Verdict{}
			var st gateway.Stats
			if gw != nil {
				st = gw.Stats()
			}
			judgeGateway(&v, claude.Outcome{}, st, true)
			return v, nil
		}
		tb := got.takenBack
		if tb == nil {
			break
		}
		// Its holder went silent or made no progress: it gets nothing
		// more of this attempt (its results are refused as dead, its
		// requests as not leased), and another agent gets it under a new
		// id, so the holder cannot even name it.
		d.unregister(id)
		delivered = tb.Lease.Delivery
		rec := map[string]any{"attempt": id, "task": a.Task, "number": a.Number, "agent": tb.Lease.Agent, "delivery": tb.Lease.Delivery, "why": tb.Why}
		if delivered >= uint64(d.Streams.Dispatch().MaxDeliver) {
			d.journal("lease_taken_back", rec)
			d.say(fmt.Sprintf("zerg: took %s attempt %d back from agent %s: %s", a.Task, a.Number, tb.Lease.Agent, tb.Why))
			_ = closeGW()
			w.problem = "no agent's result arrived"
			return Verdict{Class: outcome.Infra, Reason: outcome.ReasonStalled,
				Detail: fmt.Sprintf("no agent finished the attempt in %d deliveries (cluster.max_deliver); the last, agent %s's, was taken back: %s", delivered, tb.Lease.Agent, tb.Why)}, nil
		}
		id = cluster.NewAttemptID(a.Task, a.Number)
		rec["queued_as"] = id
		d.journal("lease_taken_back", rec)
		d.say(fmt.Sprintf("zerg: took %s attempt %d back from agent %s: %s; queued again as %s", a.Task, a.Number, tb.Lease.Agent, tb.Why, id))
	}
	switch {
	case got.unrunnable != nil:
		_ = closeGW()
		w.problem = "no joined agent can run it"
		detail := unrunnable(d.Mode, local, got.unrunnable.Agents)
		d.journal("unrunnable", map[string]any{"attempt": id, "task": a.Task, "number": a.Number, "agents": got.unrunnable.Agents})
		return Verdict{Class: outcome.Fatal, Reason: outcome.ReasonNoAgent, Detail: detail}, nil
	case got.gaveBack != nil:
		_ = closeGW()
		g := got.gaveBack
		w.problem = "no agent's result arrived"
		why := fmt.Sprintf("agent %s gave it back (%s)", g.Lease.Agent, textx.Clip(textx.OneLine(g.Why), 200))
		if g.Result == cluster.Exhausted {
			why = fmt.Sprintf("no agent finished the attempt in %d deliveries (cluster.max_deliver): the last, agent %s, gave it back (%s)",
				g.Deliveries, g.Lease.Agent, textx.Clip(textx.OneLine(g.Why), 200))
		}
		return Verdict{Class: outcome.Infra, Reason: outcome.ReasonStalled, Detail: why}, nil
	}
	r := got.result
	w.agent = r.Lease.Agent
	var rep ClusterReport
	if err := json.Unmarshal(r.Outcome, &rep); err != nil {
		w.problem = fmt.Sprintf("agent %s sent a report zerg cannot read (%v)", r.Lease.Agent, err)
	} else {
		w.report = &rep
		if rep.Problem != "" {
			w.problem = rep.Problem
		}
	}
	if w.problem == "" {
		if r.Bundle == "" {
			w.problem = fmt.Sprintf("agent %s sent no result bundle", r.Lease.Agent)
		} else if err := w.fetch(ctx, r); err != nil {
			w.problem = fmt.Sprintf("the result bundle of agent %s could not be fetched (%v)", r.Lease.Agent, err)
		}
	}
	d.journal("result_accepted", map[string]any{"attempt": id, "task": a.Task, "agent": r.Lease.Agent, "delivery": r.Lease.Delivery, "host": rep.Host})
	if err := closeGW(); err != nil {
		return Verdict{Worker: rep.Worker}, &AuditError{Err: err}
	}
	v := Verdict{Worker: rep.Worker}
	if local {
		v = localVerdict(rep, policy.Run)
		v.Refused = cliRefusals(rep.Worker.PermissionDenials)
	} else {
		st := gw.Stats()
		judgeGateway(&v, rep.Worker, st, false)
		v.Refused = gatewayRefusals(st)
		d.mu.Lock()
		refused := p.refused[r.Lease.Agent]
		d.mu.Unlock()
		tunnelRefusals(&v, refused)
	}
	if v.Class != outcome.Success && v.Detail != "" {
		v.Detail = fmt.Sprintf("on agent %s: %s", r.Lease.Agent, v.Detail)
	}
	return v, nil
}

// tunnelRefusals corrects a verdict of a forged result when this side's
// tunnel refused the lease holder's own requests (n): the API failure its
// worker reported was zerg's refusal, which the gateway never saw, so the
// attempt failed for the run's coordination, not for its task.
func tunnelRefusals(v *Verdict, n int) {
	if n == 0 || v.Reason != outcome.ReasonForgedResult {
		return
	}
	v.Class, v.Reason = outcome.Infra, outcome.ReasonAPIUnreachable
	v.Detail = fmt.Sprintf("the coordinator's tunnel refused %d of its request(s) to the model API: it did not know the agent's lease then", n)
}

// unregister forgets an attempt id this side no longer waits for.
func (d *Cluster) unregister(id string) {
	d.disp.Drop(id)
	d.book.DeadLetter(id)
	d.mu.Lock()
	delete(d.pending, id)
	d.mu.Unlock()
}

// clusterFit says why an agent that can give have cannot run an attempt
// that needs need ("": it can): the dispatcher hands it none, and an agent
// refuses such a job by the same words.
func clusterFit(need, have cluster.Capabilities) string {
	if !AgentCanRun(have.Mode, need.Mode) {
		return fmt.Sprintf("the run needs mode %s and this agent runs %s", need.Mode, have.Mode)
	}
	if need.LocalKey && !have.LocalKey {
		return "the run uses each agent's own key (cluster.agent_key: local) and this agent started without ANTHROPIC_API_KEY"
	}
	return ""
}

// agentModeFor is the --mode of an agent that runs a run of mode.
func agentModeFor(mode string) string {
	if mode == "" || ModeStrength(mode) < 0 {
		return config.ModeSubprocess
	}
	return mode
}

// unrunnable is the verdict's detail of an attempt no joined agent can
// run: each agent's reason and what to start instead.
func unrunnable(mode string, local bool, agents map[string]string) string {
	names := make([]string, 0, len(agents))
	for n := range agents {
		names = append(names, n)
	}
	sort.Strings(names)
	var why []string
	for _, n := range names {
		why = append(why, fmt.Sprintf("agent %s: %s", n, agents[n]))
	}
	fix := fmt.Sprintf("start agents with zerg agent --join URL --creds FILE --mode %s", agentModeFor(mode))
	if mode == config.ModeContainer {
		fix = "container mode has no agent in this version: run the cluster in mode sandbox or subprocess"
	}
	if local {
		fix += " and ANTHROPIC_API_KEY set (cluster.agent_key: local)"
	}
	return fmt.Sprintf("no joined agent can run this run's attempts; %s (docs/cluster.md). They are not busy, none of them can: %s",
		fix, strings.Join(why, "; "))
}

// localBudget is a local job's budget for its agent's gateway: the task's,
// bounded by what the run's budget has left (the run's meter is only
// here, and hears of a local attempt's cost when its report arrives).
func localBudget(p gateway.Policy) float64 {
	budget := p.TaskUSD
	if p.Run != nil && p.Run.Limit() > 0 {
		left := max(p.Run.Limit()-p.Run.Spent(), 0.0001)
		if budget <= 0 || left < budget {
			budget = left
		}
	}
	return budget
}

// localVerdict is the verdict of a local job: the agent's, judged from
// its own gateway, which this side cannot check. Its cost is the run's
// all the same. An account error is the agent's key's, not the run's:
// infra, for another agent (or this one later) to retry.
func localVerdict(rep ClusterReport, run *gateway.Meter) Verdict {
	v := Verdict{Class: rep.Class, Reason: rep.Reason, Detail: rep.Detail, Worker: rep.Worker}
	if run != nil {
		run.Add(rep.Worker.CostUSD)
	}
	if v.Class == outcome.Account {
		v.Class = outcome.Infra
		v.Detail = "its own key (cluster.agent_key: local): " + v.Detail
	}
	return v
}

// fetch copies the result bundle into the workspace.
func (w *remote) fetch(ctx context.Context, r cluster.Result) error {
	f, err := os.OpenFile(w.bundle(), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := cluster.GetResultBundle(ctx, w.d.js, r.Lease.Agent, r.Bundle, f); err != nil {
		_ = f.Close() // the fetch's error is the one to report
		os.Remove(w.bundle())
		return err
	}
	return f.Close()
}

// Exec answers the task's verification with what the agent ran in the
// worker's isolation; cluster mode runs no command of an attempt here.
func (w *remote) Exec(ctx context.Context, c Command) (int, string) {
	if w.report != nil && w.report.Verified && w.d.Verify != nil {
		if v := w.d.Verify(w.a.Task); v != nil && v.Command == c.Command {
			return w.report.VerifyExit, w.report.VerifyOutput
		}
	}
	if w.report != nil && !w.report.Verified {
		return 1, fmt.Sprintf("zerg: agent %s did not run the verification", w.agent)
	}
	return 1, "zerg: cluster mode runs an attempt's commands on its agent, and this one's result did not arrive"
}

func (w *remote) Snapshot(ctx context.Context, q *gitx.Quarantine, base string) (string, string) {
	if w.problem != "" {
		return "", w.problem
	}
	commit, err := q.FetchBundle(ctx, w.bundle())
	if err != nil {
		return "", fmt.Sprintf("the result bundle of agent %s was refused (%v)", w.agent, err)
	}
	return commit, ""
}

func (w *remote) Keep(why string) string {
	if _, err := os.Stat(w.bundle()); err == nil {
		return "the agent's result bundle is kept in " + w.bundle()
	}
	return "the attempt's record is kept in " + w.dir
}

func (w *remote) Remove(ctx context.Context) error  { return os.RemoveAll(w.dir) }
func (w *remote) Discard(ctx context.Context) error { return os.RemoveAll(w.dir) }
func (w *remote) Close()                            {}

// unixProxy forwards the tunnel's requests to the gateway's socket,
// streaming the answer as it comes.
func unixProxy(sock string) http.Handler {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dl net.Dialer
			return dl.DialContext(ctx, "unix", sock)
		},
		DisableCompression: true,
	}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.Host = "http", "gateway", "gateway"
		},
		Transport:     tr,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if !errors.Is(err, context.Canceled) {
				http.Error(w, "zerg: the gateway: "+err.Error(), http.StatusBadGateway)
			}
		},
	}
}
