package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Heartbeat is the value of an agent's key in BucketAgents.
type Heartbeat struct {
	Agent   string `json:"agent"`
	Host    string `json:"host"`
	Workers int    `json:"workers"`
	// Capabilities is what the agent runs (its --mode, a key of its
	// own): the coordinator tells "no agent can run this" from "agents
	// are busy" by them.
	Capabilities
	// Running are the leases the agent is running now: attempt ids with
	// their delivery numbers. A lease the coordinator handed out must be
	// named here at least every AckWait, or it is taken back.
	Running []Lease `json:"running"`
	// Progress says how far the agent got with each attempt of Running
	// (by attempt id).
	Progress map[string]LeaseProgress `json:"progress,omitempty"`
	Time     time.Time                `json:"time"`
}

// HeartbeatEvery is how often an agent puts its heartbeat.
const HeartbeatEvery = time.Second

// Heartbeater puts an agent's heartbeat periodically (agent side).
type Heartbeater struct {
	js      jetstream.JetStream
	agent   string
	state   func() Heartbeat
	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once
	mu      sync.Mutex
	err     error
}

// StartHeartbeat puts agent's heartbeat now and then every `every` (0 means
// HeartbeatEvery) until Stop. state supplies the current value; its Agent
// and Time are filled in. The first put's error is returned.
func StartHeartbeat(ctx context.Context, js jetstream.JetStream, agent string, every time.Duration, state func() Heartbeat) (*Heartbeater, error) {
	if err := ValidAgentName(agent); err != nil {
		return nil, err
	}
	if every <= 0 {
		every = HeartbeatEvery
	}
	h := &Heartbeater{js: js, agent: agent, state: state, stop: make(chan struct{}), stopped: make(chan struct{})}
	if err := h.put(ctx); err != nil {
		return nil, err
	}
	go h.loop(every)
	return h, nil
}

func (h *Heartbeater) subject() string { return "$KV." + BucketAgents + "." + h.agent }

// put is a KV put done as a plain JetStream publish on the key's subject:
// that is all kv.Put does, and it spares agents the permission to look up
// the bucket's stream.
func (h *Heartbeater) put(ctx context.Context) error {
	hb := h.state()
	hb.Agent, hb.Time = h.agent, time.Now().UTC()
	b, err := json.Marshal(hb)
	if err != nil {
		return err
	}
	if _, err := h.js.Publish(ctx, h.subject(), b); err != nil {
		return fmt.Errorf("cluster: heartbeat of %s: %w", h.agent, err)
	}
	return nil
}

func (h *Heartbeater) loop(every time.Duration) {
	defer close(h.stopped)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), every)
			err := h.put(ctx)
			cancel()
			h.mu.Lock()
			h.err = err
			h.mu.Unlock()
		}
	}
}

// Now puts the heartbeat at once, outside its period: an agent that has
// just claimed an attempt tells the coordinator its new lease before the
// worker's first API request needs it.
func (h *Heartbeater) Now(ctx context.Context) error { return h.put(ctx) }

// Err is the last periodic put's error (nil after a successful put).
func (h *Heartbeater) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Stop ends the heartbeat and deletes the key, so watchers see the agent
// leave at once instead of after the TTL.
func (h *Heartbeater) Stop(ctx context.Context) error {
	h.once.Do(func() { close(h.stop) })
	<-h.stopped
	m := nats.NewMsg(h.subject())
	m.Header.Set("KV-Operation", "DEL") // what kv.Delete publishes
	if _, err := h.js.PublishMsg(ctx, m); err != nil {
		return fmt.Errorf("cluster: heartbeat of %s: delete: %w", h.agent, err)
	}
	return nil
}

// AgentEventKind says what happened to an agent.
type AgentEventKind int

const (
	// AgentJoined: the first heartbeat seen from the agent (also for
	// agents already present when the watch starts).
	AgentJoined AgentEventKind = iota
	// AgentUpdated: a later heartbeat.
	AgentUpdated
	// AgentLeft: the agent deleted its key (Heartbeater.Stop).
	AgentLeft
	// AgentExpired: the key's TTL ran out: the agent went silent.
	AgentExpired
)

func (k AgentEventKind) String() string {
	switch k {
	case AgentJoined:
		return "joined"
	case AgentUpdated:
		return "updated"
	case AgentLeft:
		return "left"
	case AgentExpired:
		return "expired"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// AgentEvent is one change in BucketAgents.
type AgentEvent struct {
	Kind  AgentEventKind
	Agent string
	// Heartbeat is the value for AgentJoined and AgentUpdated. Its Agent
	// is the key (which permissions vouch for) and Running only holds
	// leases naming that agent.
	Heartbeat Heartbeat
	// Err reports a value that could not be decoded (Kind is then
	// AgentUpdated or AgentJoined with a zero Heartbeat).
	Err error
}

// WatchAgents reports agents joining, updating, leaving and expiring
// (coordinator side) until ctx ends, when the channel is closed.
//
// Expiry is normally pushed: the bucket's TTL removes a silent agent's key
// and leaves a marker. As a fallback (a marker lost, or a key erased by
// another agent's rollup before it expired) an agent with no put for twice
// the bucket's TTL is reported expired too. Each expiry is reported once.
//
// After the connection reconnects (the server restarted on its store) the
// watch is started again: the old one's consumer may take its idle
// heartbeats to notice, and until then no new lease would be seen, so the
// tunnel would refuse the agents' requests. The new watch's initial values
// are every agent's last heartbeat.
func WatchAgents(ctx context.Context, js jetstream.JetStream) (<-chan AgentEvent, error) {
	kv, err := js.KeyValue(ctx, BucketAgents)
	if err != nil {
		return nil, fmt.Errorf("cluster: bucket %s: %w", BucketAgents, err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster: bucket %s: %w", BucketAgents, err)
	}
	ttl := st.TTL()
	if ttl <= 0 {
		return nil, fmt.Errorf("cluster: bucket %s has no TTL", BucketAgents)
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster: watch %s: %w", BucketAgents, err)
	}
	out := make(chan AgentEvent, 64)
	go func() {
		defer close(out)
		defer func() { _ = w.Stop() }()
		lastPut := map[string]time.Time{} // live agents
		tick := time.NewTicker(ttl / 4)
		defer tick.Stop()
		nc := js.Conn()
		reconnects := nc.Stats().Reconnects
		rewatch := time.NewTicker(200 * time.Millisecond)
		defer rewatch.Stop()
		send := func(ev AgentEvent) bool {
			select {
			case out <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for {
			var e jetstream.KeyValueEntry
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				for agent, t := range lastPut {
					if now.Sub(t) > 2*ttl {
						delete(lastPut, agent)
						if !send(AgentEvent{Kind: AgentExpired, Agent: agent}) {
							return
						}
					}
				}
				continue
			case <-rewatch.C:
				if r := nc.Stats().Reconnects; r != reconnects && nc.IsConnected() {
					if nw, err := kv.WatchAll(ctx); err == nil {
						_ = w.Stop()
						w, reconnects = nw, r
					}
				}
				continue
			case entry, ok := <-w.Updates():
				if !ok {
					return
				}
				e = entry
			}
			if e == nil { // end of the initial values
				continue
			}
			ev := AgentEvent{Agent: e.Key()}
			_, live := lastPut[ev.Agent]
			switch e.Operation() {
			case jetstream.KeyValueDelete:
				ev.Kind = AgentLeft
				delete(lastPut, ev.Agent)
			case jetstream.KeyValuePurge:
				ev.Kind = AgentExpired
				delete(lastPut, ev.Agent)
				if !live { // already reported by the deadline
					continue
				}
			default:
				ev.Kind = AgentUpdated
				if !live {
					ev.Kind = AgentJoined
				}
				// The entry's time, not ours: initial values may be old.
				lastPut[ev.Agent] = e.Created()
				ev.Heartbeat, ev.Err = decodeHeartbeat(ev.Agent, e.Value())
			}
			if !send(ev) {
				return
			}
		}
	}()
	return out, nil
}

func decodeHeartbeat(agent string, b []byte) (Heartbeat, error) {
	var hb Heartbeat
	if err := json.Unmarshal(b, &hb); err != nil {
		return Heartbeat{}, fmt.Errorf("cluster: heartbeat of %s: %w", agent, err)
	}
	if hb.Agent != agent {
		return Heartbeat{}, fmt.Errorf("cluster: heartbeat under key %s names agent %q", agent, hb.Agent)
	}
	running := hb.Running[:0]
	for _, l := range hb.Running {
		if l.Agent == agent {
			running = append(running, l)
		}
	}
	hb.Running = running
	return hb, nil
}
