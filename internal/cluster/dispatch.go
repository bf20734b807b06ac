package cluster

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"
)

// Attempts wait in the coordinator, not on a queue every agent pulls from:
// an agent asks for one on its own subject (zerg.claim.<agent>, which the
// server lets only that agent publish), and the coordinator's Dispatcher
// hands it an attempt it can run and records the lease it gave. So the
// coordinator always knows who holds what, whatever a holder says or does
// not say, and it takes back an attempt whose holder names it in no
// heartbeat for AckWait or makes no progress for the stall timeout (Tick).
// The Dispatcher is pure (no NATS, the time passed in): ServeDispatch wires
// it to the server.

// Capabilities is what an agent can run: the isolation it gives (its
// --mode) and whether it holds an API key of its own (cluster.agent_key:
// local). A job's needs are the same shape.
type Capabilities struct {
	Mode     string `json:"mode"`
	LocalKey bool   `json:"local_key,omitempty"`
}

// Deadlines bound how long a held attempt may go without progress.
type Deadlines struct {
	// Stall: no progress for this long and the attempt is taken back (0:
	// no such deadline). The worker's own stall timeout.
	Stall time.Duration
	// Verify is added to Stall while the holder says it verifies (a
	// verification reports nothing while it runs): the task's own
	// verification timeout.
	Verify time.Duration
}

// The phases of a held attempt, as its agent reports them (Heartbeat.Progress),
// in order. A phase can only move forward; each move is progress.
const (
	PhasePreparing = "preparing" // the base, the workspace, the sandbox
	PhaseWorking   = "working"   // the worker runs
	PhaseVerifying = "verifying" // the task's verification runs
	PhaseSending   = "sending"   // the result's commit, bundle and report
)

var phaseOrder = []string{PhasePreparing, PhaseWorking, PhaseVerifying, PhaseSending}

// LeaseProgress is how far an agent got with one attempt it holds: its
// phase, and a count of what it saw happen (the worker's stream events, the
// bytes of a bundle) that only grows.
type LeaseProgress struct {
	Phase  string `json:"phase"`
	Events uint64 `json:"events"`
}

// DispatchConfig tunes a Dispatcher.
type DispatchConfig struct {
	// AckWait is how long a holder may go without a heartbeat naming its
	// lease before the attempt is taken back; also how long an attempt
	// may wait while every live agent is unable to run it before Tick
	// reports it (NoticeUnrunnable). Default 60 s.
	AckWait time.Duration
	// MaxDeliver bounds the deliveries of an attempt, all its ids
	// together (default 5): after that it is dead.
	MaxDeliver int
	// Fits says why an agent with have cannot run an attempt that needs
	// need ("": it can). nil: any agent runs anything.
	Fits func(need, have Capabilities) string
	// Assigned is called with each lease handed out, before the agent's
	// reply goes (the coordinator's lease book learns it first).
	Assigned func(Lease)
}

// NoticeKind says what Tick found.
type NoticeKind int

const (
	// NoticeTakenBack: a holder went silent or made no progress; the
	// attempt is no longer held by anyone (nor queued: the caller queues
	// it again under a new id, or gives up).
	NoticeTakenBack NoticeKind = iota
	// NoticeUnrunnable: the attempt waited AckWait while agents were
	// live and none of them could run it (Agents says why each cannot).
	// Reported once per attempt.
	NoticeUnrunnable
	// NoticeNoAgent: attempts waited AckWait with no live agent at all.
	// Reported once until an agent joins.
	NoticeNoAgent
)

// Notice is one finding of Tick.
type Notice struct {
	Kind    NoticeKind
	Attempt string
	// Lease and Why: the lease taken back and why (NoticeTakenBack).
	Lease Lease
	Why   string
	// Agents maps each live agent to why it cannot run the attempt
	// (NoticeUnrunnable).
	Agents map[string]string
}

// GiveBackResult is what became of an attempt its holder gave back.
type GiveBackResult int

const (
	// Requeued: waiting for an agent again.
	Requeued GiveBackResult = iota
	// Exhausted: it had MaxDeliver deliveries; nobody will get it.
	Exhausted
	// Dropped: the holder said it cannot run anywhere (a malformed job).
	Dropped
)

// Dispatcher holds the attempts waiting for an agent and the leases handed
// out (coordinator side). It is safe for concurrent use.
type Dispatcher struct {
	cfg DispatchConfig

	mu     sync.Mutex
	queue  []*dispatched            // waiting, oldest first
	held   map[string]*dispatched   // by attempt id
	claims []*parkedClaim           // agents waiting for an attempt, oldest first
	agents map[string]*Capabilities // live agents (their last heartbeat)

	noAgentSince time.Time
	noAgentSaid  bool
}

type dispatched struct {
	a          Attempt
	need       Capabilities
	dl         Deadlines
	deliveries uint64
	notBefore  time.Time
	// unrunnableSince is when the attempt was first seen waiting with
	// live agents none of which could run it (zero: not so now).
	unrunnableSince time.Time
	unrunnableSaid  bool
	hold            *Hold
}

// Hold is an attempt handed to an agent.
type Hold struct {
	Lease Lease
	// Since is when it was handed out; Named the last heartbeat that
	// named the lease; Progress the last sign of progress.
	Since, Named, Progress time.Time
	Phase                  string
	Events                 uint64
	// InFlight counts the holder's model requests for it that are open
	// now (a long answer is progress while it streams).
	InFlight int
}

type parkedClaim struct {
	agent string
	caps  Capabilities
	until time.Time
	reply func(ClaimReply)
}

// NewDispatcher makes an empty dispatcher.
func NewDispatcher(cfg DispatchConfig) *Dispatcher {
	if cfg.AckWait <= 0 {
		cfg.AckWait = 60 * time.Second
	}
	if cfg.MaxDeliver <= 0 {
		cfg.MaxDeliver = 5
	}
	return &Dispatcher{cfg: cfg, held: map[string]*dispatched{}, agents: map[string]*Capabilities{}}
}

// Enqueue makes a wait for an agent that can give need. delivered is how
// many deliveries the attempt had under earlier ids (it counts towards
// MaxDeliver), 0 for a new attempt.
func (d *Dispatcher) Enqueue(a Attempt, need Capabilities, dl Deadlines, delivered uint64, now time.Time) {
	d.mu.Lock()
	d.queue = append(d.queue, &dispatched{a: a, need: need, dl: dl, deliveries: delivered})
	run := d.match(now)
	d.mu.Unlock()
	runAll(run)
}

// Claim is agent's ask for one attempt it can give caps for: answered at
// once when one waits, else parked until one does or until wait has passed
// (then answered with none).
func (d *Dispatcher) Claim(agent string, caps Capabilities, wait time.Duration, now time.Time, reply func(ClaimReply)) {
	d.mu.Lock()
	d.claims = append(d.claims, &parkedClaim{agent: agent, caps: caps, until: now.Add(wait), reply: reply})
	run := d.match(now)
	d.mu.Unlock()
	runAll(run)
}

// match hands waiting attempts to parked claims, oldest first, and
// answers the claims whose wait passed; it returns what to do once d.mu is
// released. The caller holds d.mu.
func (d *Dispatcher) match(now time.Time) []func() {
	var run []func()
	claims := d.claims[:0]
	for _, c := range d.claims {
		if !now.Before(c.until) {
			// Its agent stops waiting soon: answered with none, never
			// handed an attempt it might not receive.
			reply := c.reply
			run = append(run, func() { reply(ClaimReply{}) })
			continue
		}
		i := slices.IndexFunc(d.queue, func(e *dispatched) bool {
			return !now.Before(e.notBefore) && d.fits(e.need, c.caps) == ""
		})
		if i < 0 {
			claims = append(claims, c)
			continue
		}
		e := d.queue[i]
		d.queue = slices.Delete(d.queue, i, i+1)
		e.deliveries++
		e.unrunnableSince, e.unrunnableSaid = time.Time{}, false
		e.hold = &Hold{Lease: Lease{AttemptID: e.a.ID, Agent: c.agent, Delivery: e.deliveries}, Since: now, Progress: now, Phase: PhasePreparing}
		d.held[e.a.ID] = e
		a, l, reply, assigned := e.a, e.hold.Lease, c.reply, d.cfg.Assigned
		run = append(run, func() {
			if assigned != nil {
				assigned(l)
			}
			reply(ClaimReply{Attempt: &a, Delivery: l.Delivery})
		})
	}
	d.claims = claims
	return run
}

func (d *Dispatcher) fits(need, have Capabilities) string {
	if d.cfg.Fits == nil {
		return ""
	}
	return d.cfg.Fits(need, have)
}

func runAll(fs []func()) {
	for _, f := range fs {
		f()
	}
}

// GiveBack is agent giving back the attempt it holds under delivery: with
// retry it waits for an agent again (not before delay), unless it had its
// MaxDeliver deliveries; without, it is dropped. ok is false when agent
// does not hold that delivery: nothing changed.
func (d *Dispatcher) GiveBack(agent, attemptID string, delivery uint64, retry bool, delay time.Duration, now time.Time) (res GiveBackResult, deliveries uint64, ok bool) {
	d.mu.Lock()
	e := d.held[attemptID]
	if e == nil || e.hold.Lease != (Lease{AttemptID: attemptID, Agent: agent, Delivery: delivery}) {
		d.mu.Unlock()
		return 0, 0, false
	}
	delete(d.held, attemptID)
	e.hold = nil
	var run []func()
	switch {
	case !retry:
		res = Dropped
	case e.deliveries >= uint64(d.cfg.MaxDeliver):
		res = Exhausted
	default:
		res = Requeued
		e.notBefore = now.Add(delay)
		d.queue = append(d.queue, e)
		run = d.match(now)
	}
	deliveries = e.deliveries
	d.mu.Unlock()
	runAll(run)
	return res, deliveries, true
}

// Heartbeat takes an agent's heartbeat: the agent is live with its
// capabilities, and each lease it names that it holds is named now, with
// its progress.
func (d *Dispatcher) Heartbeat(hb Heartbeat, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	caps := hb.Capabilities
	d.agents[hb.Agent] = &caps
	d.noAgentSince, d.noAgentSaid = time.Time{}, false
	for _, l := range hb.Running {
		e := d.held[l.AttemptID]
		if e == nil || e.hold.Lease != l {
			continue
		}
		h := e.hold
		h.Named = now
		p, ok := hb.Progress[l.AttemptID]
		if !ok {
			continue
		}
		if at, was := slices.Index(phaseOrder, p.Phase), slices.Index(phaseOrder, h.Phase); at > was {
			h.Phase, h.Progress = p.Phase, now
		}
		if p.Events > h.Events {
			h.Events, h.Progress = p.Events, now
		}
	}
}

// AgentGone forgets a live agent (it left or went silent). Its leases stay
// until their deadlines.
func (d *Dispatcher) AgentGone(agent string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.agents, agent)
}

// Activity records that agent's model request for attemptID started
// (delta 1) or ended (-1): progress, when agent holds it.
func (d *Dispatcher) Activity(agent, attemptID string, delta int, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.held[attemptID]
	if e == nil || e.hold.Lease.Agent != agent {
		return
	}
	e.hold.InFlight = max(e.hold.InFlight+delta, 0)
	e.hold.Progress = now
}

// Drop forgets an attempt, waiting or held (its result was taken, or
// nobody is to run it any more).
func (d *Dispatcher) Drop(attemptID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.held, attemptID)
	d.queue = slices.DeleteFunc(d.queue, func(e *dispatched) bool { return e.a.ID == attemptID })
}

// Held is the attempt's hold, if an agent holds it.
func (d *Dispatcher) Held(attemptID string) (Hold, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.held[attemptID]
	if e == nil {
		return Hold{}, false
	}
	return *e.hold, true
}

// Tick answers the claims whose wait passed (with none), hands out
// attempts whose delay passed, and reports what is overdue: holds taken back (they are
// dropped here), attempts no live agent can run, and a queue with no agent
// at all.
func (d *Dispatcher) Tick(now time.Time) []Notice {
	d.mu.Lock()
	run := d.match(now)
	var notices []Notice
	ids := make([]string, 0, len(d.held))
	for id := range d.held {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		e := d.held[id]
		if why := e.hold.overdue(now, d.cfg.AckWait, e.dl); why != "" {
			delete(d.held, id)
			notices = append(notices, Notice{Kind: NoticeTakenBack, Attempt: id, Lease: e.hold.Lease, Why: why})
			e.hold = nil
		}
	}
	if len(d.queue) > 0 && len(d.agents) == 0 {
		if d.noAgentSince.IsZero() {
			d.noAgentSince = now
		}
		if !d.noAgentSaid && now.Sub(d.noAgentSince) >= d.cfg.AckWait {
			d.noAgentSaid = true
			notices = append(notices, Notice{Kind: NoticeNoAgent})
		}
	}
	for _, e := range d.queue {
		why := map[string]string{}
		for name, caps := range d.agents {
			if w := d.fits(e.need, *caps); w != "" {
				why[name] = w
			}
		}
		if len(d.agents) == 0 || len(why) < len(d.agents) {
			e.unrunnableSince, e.unrunnableSaid = time.Time{}, false
			continue
		}
		if e.unrunnableSince.IsZero() {
			e.unrunnableSince = now
		}
		if !e.unrunnableSaid && now.Sub(e.unrunnableSince) >= d.cfg.AckWait {
			e.unrunnableSaid = true
			notices = append(notices, Notice{Kind: NoticeUnrunnable, Attempt: e.a.ID, Agents: why})
		}
	}
	d.mu.Unlock()
	runAll(run)
	return notices
}

// overdue says why the hold is to be taken back now ("": it is not).
func (h *Hold) overdue(now time.Time, ackWait time.Duration, dl Deadlines) string {
	named := h.Named
	if named.IsZero() {
		named = h.Since
	}
	if silent := now.Sub(named); silent > ackWait {
		what := "since it was handed the attempt"
		if !h.Named.IsZero() {
			what = "for " + silent.Round(time.Second).String()
		}
		return fmt.Sprintf("agent %s named its lease (delivery %d) in no heartbeat %s: more than cluster.ack_wait (%s)",
			h.Lease.Agent, h.Lease.Delivery, what, ackWait)
	}
	if dl.Stall <= 0 || h.InFlight > 0 {
		return ""
	}
	limit, what := dl.Stall, "heartbeat.stall_timeout"
	if h.Phase == PhaseVerifying {
		limit, what = dl.Stall+dl.Verify, "the verification's timeout and heartbeat.stall_timeout"
	}
	if idle := now.Sub(h.Progress); idle > limit {
		return fmt.Sprintf("agent %s made no progress with it for %s (phase %s; no model request, no event reported): more than %s (%s)",
			h.Lease.Agent, idle.Round(time.Second), h.Phase, what, limit)
	}
	return ""
}
