package cluster

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// nextEvent waits for an event about agent, skipping other agents' events and
// updates unless kind is AgentUpdated.
func nextEvent(t *testing.T, ch <-chan AgentEvent, agent string, kind AgentEventKind, within time.Duration) AgentEvent {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatal("watch closed")
			}
			if ev.Agent != agent || (ev.Kind == AgentUpdated && kind != AgentUpdated) {
				continue
			}
			if ev.Kind != kind {
				t.Fatalf("%s: event %v, want %v", agent, ev.Kind, kind)
			}
			return ev
		case <-deadline:
			t.Fatalf("%s: no %v event within %v", agent, kind, within)
		}
	}
}

func TestHeartbeatsJoinUpdateLeaveExpire(t *testing.T) {
	t.Parallel()
	r := newRig(t, ServerOptions{})
	a, b := r.addAgent(t, "a"), r.addAgent(t, "b")
	wctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, err := WatchAgents(wctx, r.js)
	if err != nil {
		t.Fatal(err)
	}

	running := []Lease{{AttemptID: "t-1-aa", Agent: "a", Delivery: 2}, {AttemptID: "t-2-bb", Agent: "b", Delivery: 1}}
	hbA, err := StartHeartbeat(ctx(t), a.js, "a", 200*time.Millisecond, func() Heartbeat {
		return Heartbeat{Host: "host-a", Workers: 3, Running: running}
	})
	if err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, events, "a", AgentJoined, 2*time.Second)
	if ev.Err != nil || ev.Heartbeat.Host != "host-a" || ev.Heartbeat.Workers != 3 {
		t.Fatalf("joined %+v", ev)
	}
	// A lease naming another agent is dropped from a's heartbeat.
	if len(ev.Heartbeat.Running) != 1 || ev.Heartbeat.Running[0] != running[0] {
		t.Fatalf("running %v", ev.Heartbeat.Running)
	}
	nextEvent(t, events, "a", AgentUpdated, 2*time.Second)

	// b goes silent (its connection dies): its key expires.
	if _, err := StartHeartbeat(ctx(t), b.js, "b", 200*time.Millisecond, func() Heartbeat { return Heartbeat{Host: "host-b"} }); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, events, "b", AgentJoined, 2*time.Second)
	b.nc.Close()
	silent := time.Now()
	nextEvent(t, events, "b", AgentExpired, 3*time.Second)
	t.Logf("expiry seen %v after the agent went silent (TTL %v, puts every 200ms)", time.Since(silent), testStreams.HeartbeatTTL)

	// a stops cleanly: it leaves at once.
	if err := hbA.Stop(ctx(t)); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, events, "a", AgentLeft, time.Second)
}

// An agent's heartbeat may carry "Nats-Rollup: all" (the server forces
// rollups on buckets with expiry markers). That erases the other keys with no
// marker; WatchAgents still reports a dead agent expired, by its deadline.
func TestHeartbeatRollupCannotHideDeadAgent(t *testing.T) {
	t.Parallel()
	r := newRig(t, ServerOptions{})
	a, c := r.addAgent(t, "a"), r.addAgent(t, "c")
	wctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, err := WatchAgents(wctx, r.js)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := StartHeartbeat(ctx(t), c.js, "c", time.Hour, func() Heartbeat { return Heartbeat{} }); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, events, "c", AgentJoined, 2*time.Second)
	c.nc.Close()
	m := nats.NewMsg("$KV." + BucketAgents + ".a")
	m.Data = []byte(`{"agent":"a"}`)
	m.Header.Set("Nats-Rollup", "all")
	if _, err := a.js.PublishMsg(ctx(t), m); err != nil {
		t.Fatalf("rollup put: %v", err)
	}
	kv, err := r.js.KeyValue(ctx(t), BucketAgents)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx(t), "c"); err == nil {
		t.Log("the rollup did not erase c's key")
	}
	start := time.Now()
	nextEvent(t, events, "c", AgentExpired, 3*time.Second)
	t.Logf("c reported expired %v after the rollup", time.Since(start))
}

// A server restarted on its store (an external server killed and started
// again): the watch reports an agent's new lease within a few seconds of
// the agent's reconnection, as the coordinator's tunnel needs it to serve
// the agent's requests (it waits 3 heartbeats for a lease).
func TestWatchAgentsAcrossServerRestart(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	srv, err := StartServer(ServerOptions{Dir: dir, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	c, err := srv.AddAgent("a")
	if err != nil {
		t.Fatal(err)
	}
	fast := nats.ReconnectWait(100 * time.Millisecond)
	_, coordJS := connectJS(t, srv.CoordinatorCreds(), fast)
	streams := StreamsConfig{AckWait: 5 * time.Second, MaxDeliver: 3, HeartbeatTTL: 5 * time.Second}
	if err := EnsureStreams(ctx(t), coordJS, streams); err != nil {
		t.Fatal(err)
	}
	_, agentJS := connectJS(t, c, fast)
	wctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, err := WatchAgents(wctx, coordJS)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var running []Lease
	hb, err := StartHeartbeat(ctx(t), agentJS, "a", 200*time.Millisecond, func() Heartbeat {
		mu.Lock()
		defer mu.Unlock()
		return Heartbeat{Running: append([]Lease{}, running...)}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer hb.Stop(context.Background())
	nextEvent(t, events, "a", AgentJoined, 2*time.Second)

	srv.Shutdown()
	srv, err = StartServer(ServerOptions{Dir: dir, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	// After the heartbeat's Stop (a defer), whose last publish would
	// otherwise wait out its timeout on a server already gone.
	t.Cleanup(srv.Shutdown)
	lease := Lease{AttemptID: "t-1-aa", Agent: "a", Delivery: 1}
	mu.Lock()
	running = []Lease{lease}
	mu.Unlock()
	deadline := time.After(3 * time.Second)
	for {
		select {
		case ev := <-events:
			if len(ev.Heartbeat.Running) == 1 && ev.Heartbeat.Running[0] == lease {
				return
			}
		case <-deadline:
			t.Fatalf("the new lease was not reported within 3s of the restart (heartbeat error: %v)", hb.Err())
		}
	}
}
