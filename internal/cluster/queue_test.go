package cluster

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// An agent claims an attempt from the coordinator over NATS, reads its
// base bundle, puts its result bundle and publishes its result, which the
// book takes once.
func TestClaimBundlesAndResult(t *testing.T) {
	t.Parallel()
	r := newRig(t, ServerOptions{})
	a := r.addAgent(t, "a1")
	book := NewLeaseBook(testStreams.MaxDeliver)
	d := r.serve(t, DispatchConfig{Assigned: func(l Lease) { book.Observe(l) }})

	// Over 2 MiB: reading it needs the chunk consumer's flow control.
	base := bytes.Repeat([]byte("base bundle "), 3<<18)
	if err := PutBaseBundle(ctx(t), r.js, "base-t1", bytes.NewReader(base)); err != nil {
		t.Fatal(err)
	}
	att := enqueue(d, "t1")
	book.Register(att.ID)

	start := time.Now()
	cl := claim(t, a, 10*time.Second)
	t.Logf("claim round trip: %v", time.Since(start))
	if cl.Attempt.ID != att.ID || string(cl.Attempt.Spec) != `{"prompt":"x"}` || cl.Attempt.BaseBundle != "base-t1" {
		t.Fatalf("claimed %+v, want %+v", cl.Attempt, att)
	}
	if want := (Lease{AttemptID: att.ID, Agent: "a1", Delivery: 1}); cl.Lease != want {
		t.Fatalf("lease %v, want %v", cl.Lease, want)
	}
	if h, ok := d.Held(att.ID); !ok || h.Lease != cl.Lease {
		t.Fatalf("the coordinator holds %+v %v, want %v", h, ok, cl.Lease)
	}

	// The agent reads the base bundle and hands back a result bundle.
	var got bytes.Buffer
	if err := GetBaseBundle(ctx(t), a.js, cl.Attempt.BaseBundle, &got); err != nil {
		t.Fatalf("agent GetBaseBundle: %v", err)
	}
	if !bytes.Equal(got.Bytes(), base) {
		t.Fatalf("base bundle: %d bytes, want %d", got.Len(), len(base))
	}
	out := bytes.Repeat([]byte("result "), 40000) // several chunks
	name, err := PutResultBundle(ctx(t), a.js, cl.Lease, bytes.NewReader(out))
	if err != nil {
		t.Fatalf("agent PutResultBundle: %v", err)
	}
	res := &Result{Lease: cl.Lease, Outcome: []byte(`{"status":"ok"}`), Bundle: name}
	if err := PublishResult(ctx(t), a.js, res); err != nil {
		t.Fatalf("PublishResult: %v", err)
	}
	// A retried publish of the same result is de-duplicated by the stream.
	if err := PublishResult(ctx(t), a.js, res); err != nil {
		t.Fatalf("PublishResult again: %v", err)
	}

	rr := r.nextResult(t)
	if v, _ := book.Accept(rr.Lease); v != Accepted {
		t.Fatalf("Accept(%v) = %v", rr.Lease, v)
	}
	var bundle bytes.Buffer
	if err := GetResultBundle(ctx(t), r.js, rr.Lease.Agent, rr.Bundle, &bundle); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bundle.Bytes(), out) {
		t.Fatalf("result bundle: %d bytes, want %d", bundle.Len(), len(out))
	}
	s, err := r.js.Stream(ctx(t), StreamResults)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.CachedInfo().State.Msgs; n != 1 {
		t.Fatalf("%s holds %d messages, want 1 (the retry is a duplicate)", StreamResults, n)
	}
}

// An attempt given back over NATS goes to another agent as the next
// delivery; the first holder's late result is refused as revoked. Only the
// holder may give it back.
func TestGiveBackRevokesLease(t *testing.T) {
	t.Parallel()
	r := newRig(t, ServerOptions{})
	a, b := r.addAgent(t, "a"), r.addAgent(t, "b")
	book := NewLeaseBook(testStreams.MaxDeliver)
	gave := make(chan GaveBack, 2)
	d := NewDispatcher(DispatchConfig{MaxDeliver: 3, Assigned: func(l Lease) { book.Observe(l) }})
	stop, err := ServeDispatch(r.coord, d, func(g GaveBack) { gave <- g })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	att := enqueue(d, "slow")
	book.Register(att.ID)

	clA := claim(t, a, 10*time.Second)
	// b cannot give back what a holds: the coordinator refuses it.
	forged := &Claimed{Attempt: clA.Attempt, Lease: Lease{AttemptID: att.ID, Agent: "b", Delivery: 1}, nc: b.nc}
	if err := forged.GiveBack(ctx(t), true, 0, "not mine"); err == nil || !strings.Contains(err.Error(), "does not hold") {
		t.Fatalf("b's give-back of a's attempt: %v", err)
	}
	if err := clA.GiveBack(ctx(t), true, 0, "cannot run it"); err != nil {
		t.Fatal(err)
	}
	if g := <-gave; g.Lease != clA.Lease || g.Result != Requeued || g.Why != "cannot run it" {
		t.Fatalf("gave back %+v", g)
	}
	clB := claim(t, b, 10*time.Second)
	if want := (Lease{AttemptID: att.ID, Agent: "b", Delivery: 2}); clB.Lease != want {
		t.Fatalf("B's lease %v, want %v", clB.Lease, want)
	}
	if v := book.Check(clA.Lease); v != Revoked {
		t.Fatalf("a's old lease: %v, want revoked", v)
	}
	if err := PublishResult(ctx(t), a.js, &Result{Lease: clA.Lease, Outcome: []byte(`{"late":true}`)}); err != nil {
		t.Fatal(err)
	}
	if err := PublishResult(ctx(t), b.js, &Result{Lease: clB.Lease, Outcome: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if late := r.nextResult(t); late.Lease != clA.Lease {
		t.Fatalf("first result %v", late.Lease)
	} else if v, _ := book.Accept(late.Lease); v != Revoked {
		t.Fatalf("late result of %v: %v, want revoked", late.Lease, v)
	}
	good := r.nextResult(t)
	if v, _ := book.Accept(good.Lease); v != Accepted {
		t.Fatalf("result of %v: %v, want accepted", good.Lease, v)
	}
}

func TestForgedResultBody(t *testing.T) {
	t.Parallel()
	_, err := ParseResult("zerg.result.a.t-1-abcd", []byte(`{"lease":{"attempt":"t-1-abcd","agent":"b","delivery":1}}`))
	if !errors.Is(err, ErrForgedResult) {
		t.Fatalf("err = %v, want ErrForgedResult", err)
	}
	if _, err := ParseResult("zerg.result.a.t-1-abcd", []byte(`{"lease":{"attempt":"t-1-abcd","agent":"a","delivery":1}}`)); err != nil {
		t.Fatal(err)
	}
}

func TestNewAttemptID(t *testing.T) {
	t.Parallel()
	id := NewAttemptID("fix the.build/now", 3)
	if !tokenRe.MatchString(id) || !strings.HasPrefix(id, "fix_the_build_now-3-") {
		t.Fatalf("id %q", id)
	}
	// Two ids of the same task and attempt differ by their random part.
	if a, b := NewAttemptID("x", 1), NewAttemptID("x", 1); a == b {
		t.Fatalf("ids repeat: %q", a)
	}
}

// An agent that joins before any coordinator listens waits for one instead
// of failing, and says so; once a coordinator serves, the claim is
// answered. Another error (a closed connection) ends it at once.
func TestClaimWaitsForACoordinator(t *testing.T) {
	t.Parallel()
	r := newRig(t, ServerOptions{})
	a := r.addAgent(t, "a1")
	waiting := make(chan bool, 16)
	got := make(chan *Claimed, 1)
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		cl, err := Claim(c, a.nc, a.name, Capabilities{Mode: "subprocess"}, func(up bool) { waiting <- up })
		if err != nil {
			t.Error(err)
		}
		got <- cl
	}()
	select {
	case up := <-waiting:
		if up {
			t.Fatal("a coordinator answered before one listened")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("did not say it waits")
	}
	d := r.serve(t, DispatchConfig{})
	att := enqueue(d, "late")
	select {
	case cl := <-got:
		if cl == nil || cl.Attempt.ID != att.ID {
			t.Fatalf("claimed %+v", cl)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still waiting 10s after a coordinator served")
	}

	// A cancelled claim ends with the error; a closed connection at once.
	cancelled, stop := context.WithCancel(context.Background())
	stop()
	if _, err := Claim(cancelled, a.nc, a.name, Capabilities{}, nil); err == nil {
		t.Error("a cancelled claim returned no error")
	}
	a.nc.Close()
	start := time.Now()
	if _, err := Claim(ctx(t), a.nc, a.name, Capabilities{}, nil); err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("on a closed connection: %v after %s, want an error at once", err, time.Since(start))
	}
}
