package cluster

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// claims records the answers a fake agent's claims got.
type claims struct {
	mu  sync.Mutex
	got []ClaimReply
}

func (c *claims) reply(r ClaimReply) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, r)
}

func (c *claims) last(t *testing.T) ClaimReply {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.got) == 0 {
		t.Fatal("the claim was not answered")
	}
	return c.got[len(c.got)-1]
}

func (c *claims) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got)
}

// sandboxOnly is a Fits that wants the agent's mode to be the attempt's.
func sandboxOnly(need, have Capabilities) string {
	if need.Mode != have.Mode {
		return "the run needs mode " + need.Mode + " and this agent runs " + have.Mode
	}
	return ""
}

var (
	t0      = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sandbox = Capabilities{Mode: "sandbox"}
	subproc = Capabilities{Mode: "subprocess"}
)

func attempt(id string) Attempt { return Attempt{ID: id, Task: "t", Number: 1} }

// A claim waits for an attempt it can run and gets it with a lease the
// book learns before the agent does; an agent that cannot run it is not
// handed it.
func TestDispatchHandsOutWhatAnAgentCanRun(t *testing.T) {
	var order []string
	d := NewDispatcher(DispatchConfig{AckWait: 5 * time.Second, Fits: sandboxOnly, Assigned: func(l Lease) { order = append(order, "assigned "+l.String()) }})
	var weak, strong claims
	d.Claim("weak", subproc, 4*time.Second, t0, weak.reply)
	d.Claim("strong", sandbox, 4*time.Second, t0, func(r ClaimReply) { order = append(order, "reply"); strong.reply(r) })
	if weak.count()+strong.count() != 0 {
		t.Fatal("a claim was answered with nothing queued")
	}
	d.Enqueue(attempt("x-1-aa"), sandbox, Deadlines{}, 0, t0)
	if weak.count() != 0 {
		t.Fatalf("the subprocess agent was answered: %+v", weak.got)
	}
	r := strong.last(t)
	if r.Attempt == nil || r.Attempt.ID != "x-1-aa" || r.Delivery != 1 {
		t.Fatalf("reply %+v", r)
	}
	if strings.Join(order, ",") != "assigned x-1-aa@strong#1,reply" {
		t.Errorf("order %v: the book must learn the lease before the agent", order)
	}
	if h, ok := d.Held("x-1-aa"); !ok || h.Lease.Agent != "strong" || h.Phase != PhasePreparing {
		t.Errorf("held %+v %v", h, ok)
	}
	// The waiting claim's time runs out: answered with none.
	d.Tick(t0.Add(5 * time.Second))
	if r := weak.last(t); r.Attempt != nil {
		t.Errorf("the weak agent got %+v", r)
	}
	// Control: without Fits the weak agent would have been served first.
	d2 := NewDispatcher(DispatchConfig{})
	var w2 claims
	d2.Claim("weak", subproc, 4*time.Second, t0, w2.reply)
	d2.Enqueue(attempt("y-1-aa"), sandbox, Deadlines{}, 0, t0)
	if r := w2.last(t); r.Attempt == nil {
		t.Error("control: a dispatcher that asks nothing served nobody")
	}
}

// A claim whose wait passed before an attempt came is never handed one
// (its agent may have stopped listening).
func TestDispatchExpiredClaimGetsNothing(t *testing.T) {
	d := NewDispatcher(DispatchConfig{})
	var old, fresh claims
	d.Claim("old", sandbox, time.Second, t0, old.reply)
	d.Claim("fresh", sandbox, 10*time.Second, t0.Add(2*time.Second), fresh.reply)
	d.Enqueue(attempt("x-1-aa"), sandbox, Deadlines{}, 0, t0.Add(3*time.Second))
	if r := old.last(t); r.Attempt != nil {
		t.Errorf("an expired claim got %+v", r)
	}
	if r := fresh.last(t); r.Attempt == nil {
		t.Error("the live claim got nothing")
	}
}

// The holder must name its lease in a heartbeat every AckWait: the red
// team's rogue held attempts with in-progress acks alone. Control: a
// holder that names it every second keeps it.
func TestDispatchTakesBackASilentHolder(t *testing.T) {
	for _, names := range []bool{false, true} {
		d := NewDispatcher(DispatchConfig{AckWait: 5 * time.Second})
		var c claims
		d.Claim("rogue", sandbox, 4*time.Second, t0, c.reply)
		d.Enqueue(attempt("x-1-aa"), sandbox, Deadlines{Stall: time.Hour}, 0, t0)
		l := Lease{AttemptID: "x-1-aa", Agent: "rogue", Delivery: 1}
		var taken []Notice
		for s := 1; s <= 20 && len(taken) == 0; s++ {
			now := t0.Add(time.Duration(s) * time.Second)
			if names {
				d.Heartbeat(Heartbeat{Agent: "rogue", Capabilities: sandbox, Running: []Lease{l}}, now)
			}
			for _, n := range d.Tick(now) {
				if n.Kind == NoticeTakenBack {
					taken = append(taken, n)
				}
			}
		}
		switch {
		case names && len(taken) > 0:
			t.Errorf("control: a holder naming its lease every second lost it: %+v", taken)
		case !names && len(taken) != 1:
			t.Fatalf("a holder that never names its lease kept it 20 s: %+v", taken)
		case !names:
			if taken[0].Lease != l || !strings.Contains(taken[0].Why, "agent rogue") || !strings.Contains(taken[0].Why, "cluster.ack_wait") {
				t.Errorf("notice %+v", taken[0])
			}
			if _, ok := d.Held("x-1-aa"); ok {
				t.Error("the attempt is still held after it was taken back")
			}
		}
	}
}

// A holder that names its lease but reports no progress and sends no
// model request loses it after the stall timeout; each kind of progress
// keeps it (controls), and the verification has its own time on top.
func TestDispatchTakesBackAHolderWithoutProgress(t *testing.T) {
	l := Lease{AttemptID: "x-1-aa", Agent: "a", Delivery: 1}
	cases := []struct {
		name     string
		progress func(d *Dispatcher, s int, now time.Time) Heartbeat
		kept     bool
	}{
		{"nothing", func(*Dispatcher, int, time.Time) Heartbeat { return Heartbeat{} }, false},
		{"events", func(_ *Dispatcher, s int, _ time.Time) Heartbeat {
			return Heartbeat{Progress: map[string]LeaseProgress{l.AttemptID: {Phase: PhaseWorking, Events: uint64(s)}}}
		}, true},
		{"the same events again", func(*Dispatcher, int, time.Time) Heartbeat {
			return Heartbeat{Progress: map[string]LeaseProgress{l.AttemptID: {Phase: PhaseWorking, Events: 7}}}
		}, false},
		{"a phase moving back", func(_ *Dispatcher, s int, _ time.Time) Heartbeat {
			return Heartbeat{Progress: map[string]LeaseProgress{l.AttemptID: {Phase: phaseOrder[s%2]}}}
		}, false},
		{"a model request in flight", func(d *Dispatcher, s int, now time.Time) Heartbeat {
			if s == 1 {
				d.Activity("a", l.AttemptID, 1, now)
			}
			return Heartbeat{}
		}, true},
		{"another agent's requests", func(d *Dispatcher, _ int, now time.Time) Heartbeat {
			d.Activity("b", l.AttemptID, 1, now)
			d.Activity("b", l.AttemptID, -1, now)
			return Heartbeat{}
		}, false},
		{"verifying, within its timeout", func(*Dispatcher, int, time.Time) Heartbeat {
			return Heartbeat{Progress: map[string]LeaseProgress{l.AttemptID: {Phase: PhaseVerifying}}}
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := NewDispatcher(DispatchConfig{AckWait: 5 * time.Second})
			var cl claims
			d.Claim("a", sandbox, 4*time.Second, t0, cl.reply)
			d.Enqueue(attempt(l.AttemptID), sandbox, Deadlines{Stall: 30 * time.Second, Verify: 60 * time.Second}, 0, t0)
			var taken *Notice
			for s := 1; s <= 75 && taken == nil; s++ {
				now := t0.Add(time.Duration(s) * time.Second)
				hb := c.progress(d, s, now)
				hb.Agent, hb.Running = "a", []Lease{l}
				d.Heartbeat(hb, now)
				for _, n := range d.Tick(now) {
					if n.Kind == NoticeTakenBack {
						taken = &n
					}
				}
			}
			switch {
			case c.kept && taken != nil:
				t.Errorf("taken back: %s", taken.Why)
			case !c.kept && taken == nil:
				t.Error("a holder without progress kept the attempt 75 s (stall 30 s)")
			case !c.kept && !strings.Contains(taken.Why, "no progress") && !strings.Contains(taken.Why, "heartbeat.stall_timeout"):
				t.Errorf("why: %s", taken.Why)
			}
		})
	}
}

// A given-back attempt waits again (not before its delay), counting its
// deliveries, and is exhausted at MaxDeliver; only its holder may give it
// back.
func TestDispatchGiveBack(t *testing.T) {
	d := NewDispatcher(DispatchConfig{MaxDeliver: 2})
	var c claims
	d.Enqueue(attempt("x-1-aa"), sandbox, Deadlines{}, 0, t0)
	d.Claim("a", sandbox, 10*time.Second, t0, c.reply)
	if _, _, ok := d.GiveBack("b", "x-1-aa", 1, true, 0, t0); ok {
		t.Error("another agent gave back a's attempt")
	}
	if _, _, ok := d.GiveBack("a", "x-1-aa", 2, true, 0, t0); ok {
		t.Error("a gave back a delivery it does not hold")
	}
	res, n, ok := d.GiveBack("a", "x-1-aa", 1, true, 2*time.Second, t0)
	if !ok || res != Requeued || n != 1 {
		t.Fatalf("give back: %v %d %v", res, n, ok)
	}
	var c2 claims
	d.Claim("b", sandbox, 10*time.Second, t0.Add(time.Second), c2.reply)
	if c2.count() != 0 {
		t.Fatalf("handed out before its delay: %+v", c2.got)
	}
	d.Tick(t0.Add(3 * time.Second))
	if r := c2.last(t); r.Attempt == nil || r.Delivery != 2 {
		t.Fatalf("after the delay: %+v", r)
	}
	if res, n, _ := d.GiveBack("b", "x-1-aa", 2, true, 0, t0.Add(3*time.Second)); res != Exhausted || n != 2 {
		t.Errorf("at MaxDeliver: %v %d, want exhausted", res, n)
	}
	// Deliveries under an earlier id count.
	d.Enqueue(attempt("x-1-bb"), sandbox, Deadlines{}, 1, t0)
	var c3 claims
	d.Claim("a", sandbox, 10*time.Second, t0, c3.reply)
	if r := c3.last(t); r.Delivery != 2 {
		t.Errorf("the requeued attempt's delivery is %d, want 2", r.Delivery)
	}
	if res, _, _ := d.GiveBack("a", "x-1-bb", 2, false, 0, t0); res != Dropped {
		t.Errorf("a give-back without retry: %v", res)
	}
}

// "No live agent can run this" is told from "agents are busy": reported
// after AckWait with each agent's reason, once; with an agent that could
// run it (busy or not) it is not; with no agent at all it is NoAgent.
func TestDispatchUnrunnable(t *testing.T) {
	d := NewDispatcher(DispatchConfig{AckWait: 5 * time.Second, Fits: sandboxOnly})
	d.Enqueue(attempt("x-1-aa"), sandbox, Deadlines{}, 0, t0)
	kinds := func(ns []Notice) (out []NoticeKind) {
		for _, n := range ns {
			out = append(out, n.Kind)
		}
		return out
	}
	if ns := d.Tick(t0); len(ns) != 0 {
		t.Fatalf("at once: %v", kinds(ns))
	}
	if ns := d.Tick(t0.Add(6 * time.Second)); len(ns) != 1 || ns[0].Kind != NoticeNoAgent {
		t.Fatalf("with no agent: %v", kinds(ns))
	}
	if ns := d.Tick(t0.Add(7 * time.Second)); len(ns) != 0 {
		t.Fatalf("said twice: %v", kinds(ns))
	}
	d.Heartbeat(Heartbeat{Agent: "a1", Capabilities: subproc}, t0.Add(8*time.Second))
	d.Heartbeat(Heartbeat{Agent: "a2", Capabilities: subproc}, t0.Add(8*time.Second))
	d.Tick(t0.Add(8 * time.Second))
	ns := d.Tick(t0.Add(14 * time.Second))
	if len(ns) != 1 || ns[0].Kind != NoticeUnrunnable || ns[0].Attempt != "x-1-aa" || len(ns[0].Agents) != 2 || !strings.Contains(ns[0].Agents["a1"], "runs subprocess") {
		t.Fatalf("with two subprocess agents: %+v", ns)
	}
	if ns := d.Tick(t0.Add(20 * time.Second)); len(ns) != 0 {
		t.Fatalf("said twice: %v", kinds(ns))
	}
	// Control: a sandbox agent is live (busy: it asks for nothing).
	d2 := NewDispatcher(DispatchConfig{AckWait: 5 * time.Second, Fits: sandboxOnly})
	d2.Enqueue(attempt("x-1-aa"), sandbox, Deadlines{}, 0, t0)
	d2.Heartbeat(Heartbeat{Agent: "a1", Capabilities: subproc}, t0)
	d2.Heartbeat(Heartbeat{Agent: "busy", Capabilities: sandbox}, t0)
	for s := 0; s <= 30; s += 5 {
		if ns := d2.Tick(t0.Add(time.Duration(s) * time.Second)); len(ns) != 0 {
			t.Fatalf("control: with a busy sandbox agent, %v at %ds", kinds(ns), s)
		}
	}
	// ...and once it is gone, the attempt is unrunnable again.
	d2.AgentGone("busy")
	d2.Tick(t0.Add(31 * time.Second))
	if ns := d2.Tick(t0.Add(37 * time.Second)); len(ns) != 1 || ns[0].Kind != NoticeUnrunnable {
		t.Fatalf("after the sandbox agent left: %v", kinds(ns))
	}
}
