package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cluster"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/textx"
)

// AgentDirMode is the mode of an agent's directory when zerg makes it:
// the worker users pass through to their workspaces; nobody else lists it.
const AgentDirMode os.FileMode = 0o711

// Agent runs attempts it claims from a cluster's coordinator (zerg agent): each
// with a driver of its own machine, its worker reaching the Messages API
// through the tunnel (this machine never holds the coordinator's key) or,
// for a run with cluster.agent_key local, through a gateway here holding
// this host's own key; its result sent back as a bundle and a report. It never writes to the user's repository:
// it has none, only the bundles of the bases.
type Agent struct {
	Name string
	NC   *nats.Conn
	// Mode is the isolation this agent gives (subprocess or sandbox);
	// the coordinator hands it no attempt of a run that needs a stronger
	// one, and it refuses any it is handed all the same.
	Mode    string
	Workers int
	// Dir holds the agent's state: a bare repository of the bases, the
	// workspaces, the workers' state and their streams.
	Dir    string
	Claude string // the claude CLI
	Zerg   string // zerg's own binary, for the worker's hook
	// RunAs is the worker user in subprocess mode (nil: the agent's own
	// user).
	RunAs *security.WorkerUser
	// Sandbox is sandbox mode's driver (Mode sandbox): each attempt runs
	// in a copy whose gateway's upstream is its end of the tunnel.
	Sandbox *Sandbox
	Host    string
	// LocalKey and LocalUpstream are this host's own Messages API key and
	// endpoint ("": the API's), read once at start: only an attempt's
	// gateway on this machine holds them, for the jobs of a run with
	// cluster.agent_key local; never a worker's environment or argv.
	// Without a key, such jobs are refused.
	LocalKey      claude.Secret
	LocalUpstream string
	// Out gets one line per attempt taken, refused and finished.
	Out io.Writer
	// RefusalPause is how long the agent waits to pull again after it
	// refused an attempt (0: 5 s), so that agents that can run it get it.
	RefusalPause time.Duration

	repo    *gitx.Repo
	js      jetstream.JetStream
	hb      *cluster.Heartbeater
	mu      sync.Mutex
	running map[string]*agentHold
	outMu   sync.Mutex
	// waiting is whether the last claim found no coordinator (said once
	// per wait).
	waiting atomic.Bool
}

// agentHold is an attempt this agent runs, and how far it got: its
// heartbeat says so, and the coordinator takes back an attempt that
// makes no progress.
type agentHold struct {
	lease  cluster.Lease
	phase  atomic.Value // string
	events atomic.Uint64
}

func (h *agentHold) enter(phase string) { h.phase.Store(phase) }
func (h *agentHold) progress(n int)     { h.events.Add(uint64(max(n, 1))) }

// counting passes writes through, counting them as the attempt's progress.
type counting struct {
	w io.Writer
	h *agentHold
}

func (c counting) Write(b []byte) (int, error) {
	c.h.progress(len(b) >> 10)
	return c.w.Write(b)
}

func (ag *Agent) say(format string, a ...any) {
	ag.outMu.Lock()
	defer ag.outMu.Unlock()
	fmt.Fprintf(ag.Out, "zerg agent %s: %s\n", ag.Name, fmt.Sprintf(format, a...))
}

// Run takes attempts until take ends, then waits for the running ones
// (a drain). run ending abandons them: the coordinator gives them to
// another agent once this one's heartbeat stops naming them (AckWait).
// It outlives any one coordinator (by design): between runs, and while
// a coordinator restarts, it waits for the next one.
func (ag *Agent) Run(take, run context.Context) error {
	js, err := jetstream.New(ag.NC)
	if err != nil {
		return err
	}
	ag.js = js
	ag.running = map[string]*agentHold{}
	if err := fsx.OwnDir(ag.Dir, AgentDirMode); err != nil {
		return err
	}
	repoDir := filepath.Join(ag.Dir, "repo")
	if _, err := os.Stat(filepath.Join(repoDir, "HEAD")); err != nil {
		if _, err := gitx.InitBare(run, repoDir, ""); err != nil {
			return err
		}
	}
	ag.repo = &gitx.Repo{Runner: gitx.New(repoDir)}
	// The heartbeats' bucket is a coordinator's to create: a server zerg
	// does not embed may be up, and this agent with it, before any.
	for said := false; ; {
		ag.hb, err = cluster.StartHeartbeat(run, js, ag.Name, 0, ag.heartbeat)
		if err == nil {
			break
		}
		if !errors.Is(err, jetstream.ErrNoStreamResponse) && !errors.Is(err, nats.ErrNoResponders) {
			return err
		}
		if !said {
			ag.say("waiting for a coordinator to create the cluster's streams (%v)", err)
			said = true
		}
		select {
		case <-take.Done():
			return nil // left while waiting
		case <-time.After(2 * time.Second):
		}
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(run), 5*time.Second)
		defer cancel()
		_ = ag.hb.Stop(ctx)
	}()
	key := "runs with cluster.agent_key local refused (no ANTHROPIC_API_KEY)"
	if ag.LocalKey != "" {
		key = "this host's own API key for runs with cluster.agent_key local"
	}
	ag.say("joined %s with %d worker(s), mode %s, %s; it serves every run of that server until stopped (Ctrl-C), also after a coordinator ends", ag.NC.ConnectedUrlRedacted(), ag.Workers, ag.Mode, key)
	var wg sync.WaitGroup
	for i := 0; i < max(ag.Workers, 1); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for take.Err() == nil {
				c, err := cluster.Claim(take, ag.NC, ag.Name, ag.capabilities(), ag.coordinatorUp)
				if err != nil {
					if take.Err() != nil {
						return
					}
					ag.say("claim: %v", err)
					time.Sleep(time.Second)
					continue
				}
				ag.runOne(run, c)
			}
		}()
	}
	wg.Wait()
	return nil
}

// coordinatorUp says, once per wait, that no coordinator answers claims.
func (ag *Agent) coordinatorUp(up bool) {
	if up {
		ag.waiting.Store(false)
	} else if !ag.waiting.Swap(true) {
		ag.say("waiting for a coordinator: no run uses this cluster now, or its server is down (an embedded one ends with its run)")
	}
}

// capabilities is what this agent can run.
func (ag *Agent) capabilities() cluster.Capabilities {
	return cluster.Capabilities{Mode: ag.Mode, LocalKey: ag.LocalKey != ""}
}

// refusal says why this agent cannot run job; "": it can.
func (ag *Agent) refusal(job ClusterJob) string {
	return clusterFit(cluster.Capabilities{Mode: job.Mode, LocalKey: job.LocalKey()}, ag.capabilities())
}

func (ag *Agent) heartbeat() cluster.Heartbeat {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	hb := cluster.Heartbeat{Host: ag.Host, Workers: ag.Workers, Capabilities: ag.capabilities(), Running: []cluster.Lease{},
		Progress: map[string]cluster.LeaseProgress{}}
	for id, h := range ag.running {
		hb.Running = append(hb.Running, h.lease)
		phase, _ := h.phase.Load().(string)
		hb.Progress[id] = cluster.LeaseProgress{Phase: phase, Events: h.events.Load()}
	}
	return hb
}

// runOne runs one claimed attempt and answers for it.
func (ag *Agent) runOne(ctx context.Context, c *cluster.Claimed) {
	a, l := c.Attempt, c.Lease
	job, err := ParseClusterJob(a.Spec)
	if err != nil {
		ag.say("refuses %s: %v", a.ID, err)
		_ = c.GiveBack(ctx, false, 0, err.Error())
		return
	}
	if why := ag.refusal(job); why != "" {
		// The coordinator hands out only what this agent says it can
		// run; another agent may run it: back to the coordinator, later.
		ag.say("refuses %s (task %s): %s", a.ID, a.Task, why)
		_ = c.GiveBack(ctx, true, 2*time.Second, why)
		// Each refusal spends one of the attempt's deliveries: claim
		// again only after agents that can run it had their turn.
		pause := ag.RefusalPause
		if pause == 0 {
			pause = 5 * time.Second
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		return
	}
	h := &agentHold{lease: l}
	h.enter(cluster.PhasePreparing)
	ag.mu.Lock()
	ag.running[a.ID] = h
	ag.mu.Unlock()
	defer func() {
		ag.mu.Lock()
		delete(ag.running, a.ID)
		ag.mu.Unlock()
	}()
	_ = ag.hb.Now(ctx)
	ag.say("runs %s attempt %d (%s, delivery %d)", a.Task, a.Number, a.ID, l.Delivery)
	start := time.Now()
	rep, bundle, err := ag.attempt(ctx, c, job, h)
	if ctx.Err() != nil {
		ag.say("abandons %s: stopped; the coordinator gives it to another agent", a.ID)
		return
	}
	if err != nil {
		ag.say("could not run %s: %v; back to the coordinator", a.ID, err)
		_ = c.GiveBack(ctx, true, 5*time.Second, "could not run it: "+err.Error())
		return
	}
	h.enter(cluster.PhaseSending)
	if err := ag.answer(ctx, c, rep, bundle, h); err != nil {
		ag.say("could not send the result of %s: %v; the coordinator gives it to another agent", a.ID, err)
		return
	}
	if bundle != "" {
		_ = os.Remove(bundle)
	}
	how := fmt.Sprintf("worker %s (%s)", rep.Class, rep.Reason)
	if rep.Verified {
		how += fmt.Sprintf(", verification exit %d", rep.VerifyExit)
	}
	if rep.Problem != "" {
		how += ", no result: " + textx.Clip(rep.Problem, 200)
	}
	ag.say("finished %s attempt %d in %s: %s; result sent", a.Task, a.Number, time.Since(start).Round(time.Second), how)
}

// answer puts the bundle and publishes the report: the attempt's end.
func (ag *Agent) answer(ctx context.Context, c *cluster.Claimed, rep ClusterReport, bundle string, h *agentHold) error {
	r := &cluster.Result{Lease: c.Lease}
	if bundle != "" {
		f, err := os.Open(bundle)
		if err != nil {
			return err
		}
		name, err := cluster.PutResultBundle(ctx, ag.js, c.Lease, io.TeeReader(f, counting{io.Discard, h}))
		_ = f.Close() // opened to read
		if err != nil {
			return err
		}
		r.Bundle = name
	}
	rep.Worker.Err = nil
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	r.Outcome = b
	return cluster.PublishResult(ctx, ag.js, r)
}

// attempt runs the worker and the verification and makes the result's
// bundle. An error is this machine's trouble (git, disk): another agent
// may do better.
func (ag *Agent) attempt(ctx context.Context, c *cluster.Claimed, job ClusterJob, h *agentHold) (ClusterReport, string, error) {
	a, l := c.Attempt, c.Lease
	rep := ClusterReport{Host: ag.Host}
	if err := ag.fetchBase(ctx, a, h); err != nil {
		return rep, "", err
	}
	name := fmt.Sprintf("%s-%d", a.ID, l.Delivery)
	workspace := filepath.Join(ag.Dir, "ws", name)
	state := filepath.Join(ag.Dir, "state", name)
	for _, d := range []string{filepath.Dir(workspace), state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return rep, "", err
		}
	}
	defer os.RemoveAll(state)

	// The attempt's record of its API traffic (a local job's gateway, a
	// sandbox's denials) stays on this machine, beside its stream.
	audit, closeAudit, err := ag.auditLog(filepath.Join(ag.Dir, "logs", name+".audit.jsonl"))
	if err != nil {
		return rep, "", err
	}
	defer closeAudit()
	policy := job.Policy.gateway()
	// A local job in sandbox mode needs no way here: the sandbox's own
	// gateway holds the key (below), and is what the attempt is judged by.
	route := &agentRoute{close: func() error { return nil }}
	if !job.LocalKey() || ag.Sandbox == nil {
		if route, err = ag.route(job, a.ID, audit, policy); err != nil {
			return rep, "", err
		}
	}
	defer func() { _ = route.close() }() // the gateway's record is closed and checked where the report is made

	var drv Driver = &Subprocess{Repo: ag.repo, RunAs: ag.RunAs, Lanes: filepath.Join(ag.Dir, "lanes")}
	if ag.Sandbox != nil {
		sb := *ag.Sandbox
		sb.Repo, sb.Upstream, sb.APIKey, sb.AuthToken, sb.OAuthToken = ag.repo, route.url, ClusterPlaceholderKey, "", ""
		if job.LocalKey() {
			// The sandbox's own gateway holds this host's key, as the
			// local sandbox driver's holds the coordinator's.
			sb.Upstream, sb.APIKey, sb.Gateway = ag.localUpstream(), string(ag.LocalKey), policy
		}
		drv = &sb
	}
	ws, err := drv.Prepare(ctx, Attempt{Repo: ag.repo, Task: a.Task, Number: a.Number, Base: a.Base, Workspace: workspace,
		Branch: "agent/" + name, WorkerDir: state, Models: policy.Models, TaskUSD: policy.TaskUSD, Audit: audit,
		Screen: func(m json.RawMessage) json.RawMessage { return m }})
	if err != nil {
		return rep, "", err
	}
	defer func() {
		ws.Close()
		dctx := context.WithoutCancel(ctx)
		_ = ws.Discard(dctx)
		_, _ = ag.repo.Run(dctx, "branch", "-D", "--", "agent/"+name)
	}()
	api := claude.APISettings{BaseURL: route.url, APIKey: ClusterPlaceholderKey}
	sp := job.Worker.Spec(ag.Claude, ag.Zerg, ws.Dir(), state, api)
	h.enter(cluster.PhaseWorking)
	v, err := ws.Launch(ctx, sp, ag.starter(filepath.Join(ag.Dir, "logs", name+".jsonl"), h))
	if err != nil {
		return rep, "", err
	}
	if route.gw != nil {
		// A local job in subprocess mode: judged, and its usage and cost
		// taken, from this agent's gateway, as the coordinator's would.
		_ = route.close()
		judgeGateway(&v, v.Worker, route.gw.Stats(), ctx.Err() != nil)
	}
	rep.Class, rep.Reason, rep.Detail, rep.Worker = v.Class, v.Reason, v.Detail, v.Worker
	if v.Worker.Err != nil && rep.Worker.Detail == "" {
		rep.Worker.Detail = v.Worker.Err.Error()
	}
	if ctx.Err() != nil {
		return rep, "", ctx.Err()
	}
	if v.Class == outcome.Success && job.Verify != nil {
		h.enter(cluster.PhaseVerifying)
		code, out := ws.Exec(ctx, Command{Command: job.Verify.Command, Timeout: job.Verify.Timeout,
			Env: []string{"ZERG_VERIFY=1"}, Home: "verify-home"})
		rep.Verified, rep.VerifyExit, rep.VerifyOutput = true, code, textx.Clip(out, 64<<10)
	}
	h.enter(cluster.PhaseSending)
	qdir := filepath.Join(ag.Dir, "q", name)
	defer os.RemoveAll(qdir)
	q, err := ag.repo.NewQuarantine(ctx, qdir)
	if err != nil {
		return rep, "", err
	}
	commit, problem := ws.Snapshot(ctx, q, a.Base)
	if problem != "" {
		rep.Problem = problem
		return rep, "", nil
	}
	rep.Commit = commit
	bundle := filepath.Join(qdir, "result.bundle")
	for _, args := range [][]string{
		{"update-ref", "refs/heads/result", commit},
		{"symbolic-ref", "HEAD", "refs/heads/result"},
		{"bundle", "create", "-q", bundle, a.Base + "..HEAD"},
	} {
		if _, err := q.Run(ctx, args...); err != nil {
			return rep, "", fmt.Errorf("bundle the result: %w", err)
		}
	}
	// The bundle outlives the quarantine's removal only as long as the
	// caller needs it: move it beside the logs.
	keep := filepath.Join(ag.Dir, "logs", name+".bundle")
	if err := os.Rename(bundle, keep); err != nil {
		return rep, "", err
	}
	return rep, keep, nil
}

// agentRoute is an attempt's way to the Messages API from this machine: a
// listener the worker (or its sandbox's gateway) sends its requests to.
type agentRoute struct {
	url string
	// gw is a local job's gateway, holding this host's key; nil: the
	// requests go through the tunnel to the coordinator's gateway.
	gw    *gateway.Gateway
	close func() error
}

// route opens the attempt's way to the API: the tunnel for a coordinator
// job, a gateway of this agent for a local one.
func (ag *Agent) route(job ClusterJob, attemptID string, audit func(string, map[string]any) error, policy gateway.Policy) (*agentRoute, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &agentRoute{url: "http://" + ln.Addr().String()}
	var h http.Handler
	sockDir := ""
	if job.LocalKey() {
		if sockDir, err = fsx.MkdirTemp("zerg-agw-"); err != nil {
			ln.Close()
			return nil, err
		}
		sock := filepath.Join(sockDir, "s")
		r.gw, err = gateway.Start(gateway.Config{Upstream: ag.localUpstream(), APIKey: string(ag.LocalKey), Placeholder: placeholderKey,
			Audit: audit, Policy: policy, Price: priceUsage, WorkerTimeout: job.Worker.APITimeout}, sock)
		if err != nil {
			ln.Close()
			os.RemoveAll(sockDir)
			return nil, fmt.Errorf("start the attempt's gateway: %w", err)
		}
		h = unixProxy(sock)
	} else {
		tunnel := &cluster.Tunnel{NC: ag.NC, Subject: cluster.APISubject(ag.Name, attemptID)}
		h = &httputil.ReverseProxy{
			Rewrite:       func(pr *httputil.ProxyRequest) { pr.Out.URL.Scheme, pr.Out.URL.Host = "http", "coordinator" },
			Transport:     tunnel,
			FlushInterval: -1,
		}
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	var once sync.Once
	var gwErr error
	r.close = func() error {
		once.Do(func() {
			_ = srv.Close() // the gateway's error below is the one that matters
			if r.gw != nil {
				gwErr = r.gw.Close()
			}
			if sockDir != "" {
				os.RemoveAll(sockDir)
			}
		})
		return gwErr
	}
	return r, nil
}

// localUpstream is this host's Messages API.
func (ag *Agent) localUpstream() string {
	if ag.LocalUpstream != "" {
		return ag.LocalUpstream
	}
	return "https://api.anthropic.com"
}

// auditLog appends an attempt's audit records to file (JSON lines, 0600).
func (ag *Agent) auditLog(file string) (func(string, map[string]any) error, func(), error) {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, nil, err
	}
	f, err := fsx.CreatePrivate(file)
	if err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex
	record := func(kind string, fields map[string]any) error {
		rec := map[string]any{"time": time.Now().UTC().Format(time.RFC3339Nano), "kind": kind}
		for k, v := range fields {
			rec[k] = v
		}
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		_, err = f.Write(append(b, '\n'))
		return err
	}
	return record, func() { _ = f.Close() }, nil // each record was written, and checked, when made
}

// fetchBase brings the attempt's base into the agent's repository from
// its bundle, checking every object, once per base.
func (ag *Agent) fetchBase(ctx context.Context, a cluster.Attempt, h *agentHold) error {
	if !commitID.MatchString(a.Base) {
		return fmt.Errorf("the attempt's base %q is not a commit id", a.Base)
	}
	ref := "refs/zerg/base/" + a.Base
	if got, err := ag.repo.RevParse(ctx, ref); err == nil && got == a.Base {
		return nil
	}
	if strings.ContainsAny(a.BaseBundle, "/\\") || a.BaseBundle == "" {
		return fmt.Errorf("base bundle name %q", a.BaseBundle)
	}
	dir := filepath.Join(ag.Dir, "bundles")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "base-*.bundle")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := cluster.GetBaseBundle(ctx, ag.js, a.BaseBundle, counting{f, h}); err != nil {
		_ = f.Close() // the fetch's error is the one to report
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	err = ag.repo.Locked(func() error {
		_, err := ag.repo.Run(ctx, "-c", "transfer.fsckObjects=true", "fetch", "--quiet", "--no-tags", "--", f.Name(), "+refs/heads/base:"+ref)
		return err
	})
	if err != nil {
		return fmt.Errorf("fetch the base bundle: %w", err)
	}
	if got, err := ag.repo.RevParse(ctx, ref); err != nil || got != a.Base {
		return fmt.Errorf("the base bundle %s holds %s, not the attempt's base %s", a.BaseBundle, got, a.Base)
	}
	return nil
}

var commitID = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// starter runs the worker and records its stream on this machine; each
// event is the attempt's progress.
func (ag *Agent) starter(stream string, h *agentHold) Starter {
	return func(ctx context.Context, sp claude.Spec) (claude.Outcome, error) {
		if err := os.MkdirAll(filepath.Dir(stream), 0o700); err != nil {
			return claude.Outcome{}, err
		}
		f, err := fsx.CreatePrivate(stream)
		if err != nil {
			return claude.Outcome{}, err
		}
		defer f.Close()
		var mu sync.Mutex
		sp.OnEvent = func(ev claude.Event) {
			h.progress(1)
			// Best effort, as the pipeline's stream record: the outcome is
			// the CLI's result's, not this record's.
			mu.Lock()
			_, _ = f.Write(ev.Raw)
			_, _ = f.Write([]byte{'\n'})
			mu.Unlock()
		}
		run, err := claude.Start(ctx, sp)
		if err != nil {
			class := outcome.Infra
			if errors.Is(err, claude.ErrBadSpec) {
				class = outcome.Fatal
			}
			return claude.Outcome{Class: class, Reason: outcome.ReasonStartFailed, Detail: err.Error()}, nil
		}
		return run.Wait(), nil
	}
}
