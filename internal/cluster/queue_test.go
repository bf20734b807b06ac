package cluster

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestEnqueueClaimDone(t *testing.T) {
	t.Parallel()
	r := newRig(t, ServerOptions{})
	a := r.addAgent(t, "a1")
	book := NewLeaseBook(testStreams.MaxDeliver)

	// Over 2 MiB: reading it needs the chunk consumer's flow control.
	base := bytes.Repeat([]byte("base bundle "), 3<<18)
	if err := PutBaseBundle(ctx(t), r.js, "base-t1", bytes.NewReader(base)); err != nil {
		t.Fatal(err)
	}
	att := enqueue(t, r.js, "t1")
	book.Register(att.ID)
	// Enqueue is idempotent by attempt id.
	if dup, err := Enqueue(ctx(t), r.js, att); err != nil || !dup {
		t.Fatalf("second Enqueue: dup=%v err=%v, want a duplicate", dup, err)
	}

	start := time.Now()
	cl := claim(t, a, 3*time.Second)
	t.Logf("claim round trip (enqueued, bound, pulled): %v", time.Since(start))
	if cl.Attempt.ID != att.ID || string(cl.Attempt.Spec) != `{"prompt":"x"}` || cl.Attempt.BaseBundle != "base-t1" {
		t.Fatalf("claimed %+v, want %+v", cl.Attempt, att)
	}
	if want := (Lease{AttemptID: att.ID, Agent: "a1", Delivery: 1}); cl.Lease != want {
		t.Fatalf("lease %v, want %v", cl.Lease, want)
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
	if err := cl.Done(ctx(t)); err != nil {
		t.Fatalf("Done: %v", err)
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
	q, err := r.js.Stream(ctx(t), StreamAttempts)
	if err != nil {
		t.Fatal(err)
	}
	if n := q.CachedInfo().State.Msgs; n != 0 {
		t.Fatalf("%s holds %d messages after Done, want 0", StreamAttempts, n)
	}
}

func TestRedeliveryRevokesLease(t *testing.T) {
	t.Parallel()
	r := newRig(t, ServerOptions{})
	a, b := r.addAgent(t, "a"), r.addAgent(t, "b")
	book := NewLeaseBook(testStreams.MaxDeliver)
	att := enqueue(t, r.js, "slow")
	book.Register(att.ID)

	clA := claim(t, a, 3*time.Second)
	if v, _ := book.Observe(clA.Lease); v != Current {
		t.Fatalf("Observe(%v) = %v", clA.Lease, v)
	}
	// While A keeps it alive past AckWait (1s), B gets nothing.
	consB, err := AttemptsConsumerFor(ctx(t), b.js)
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	if cl, err := Claim(c, consB, "b"); err == nil {
		t.Fatalf("B claimed %v while A kept it in progress", cl.Lease)
	}
	cancel()
	if err := clA.KeepAliveErr(); err != nil {
		t.Fatalf("keep-alive: %v", err)
	}

	// A goes silent: JetStream hands the attempt to B after AckWait.
	clA.Abandon()
	stalled := time.Now()
	clB := claim(t, b, 5*time.Second)
	t.Logf("redelivered %v after the last keep-alive stopped (AckWait %v)", time.Since(stalled), testStreams.AckWait)
	if want := (Lease{AttemptID: att.ID, Agent: "b", Delivery: 2}); clB.Lease != want {
		t.Fatalf("B's lease %v, want %v", clB.Lease, want)
	}
	v, revoked := book.Observe(clB.Lease)
	if v != Current || len(revoked) != 1 || revoked[0] != clA.Lease {
		t.Fatalf("Observe(%v) = %v %v, want current revoking %v", clB.Lease, v, revoked, clA.Lease)
	}

	// A's late result travels fine but the coordinator refuses it.
	if err := PublishResult(ctx(t), a.js, &Result{Lease: clA.Lease, Outcome: []byte(`{"late":true}`)}); err != nil {
		t.Fatal(err)
	}
	if err := PublishResult(ctx(t), b.js, &Result{Lease: clB.Lease, Outcome: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := clB.Done(ctx(t)); err != nil {
		t.Fatal(err)
	}
	late := r.nextResult(t)
	if v, _ := book.Accept(late.Lease); v != Revoked {
		t.Fatalf("late result of %v: %v, want revoked", late.Lease, v)
	}
	good := r.nextResult(t)
	if v, _ := book.Accept(good.Lease); v != Accepted {
		t.Fatalf("result of %v: %v, want accepted", good.Lease, v)
	}
	if v, _ := book.Accept(good.Lease); v != Duplicate {
		t.Fatalf("second result of %v: %v, want duplicate", good.Lease, v)
	}
}

func TestDeadLetterAfterMaxDeliver(t *testing.T) {
	t.Parallel()
	r := newRig(t, ServerOptions{})
	a := r.addAgent(t, "a")
	book := NewLeaseBook(testStreams.MaxDeliver)
	dead := make(chan DeadLetter, 1)
	sub, err := WatchDeadLetters(r.coord, r.js, func(d DeadLetter) { dead <- d })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := r.coord.Flush(); err != nil {
		t.Fatal(err)
	}
	att := enqueue(t, r.js, "doomed")
	book.Register(att.ID)
	var last Lease
	for i := 1; i <= testStreams.MaxDeliver; i++ {
		cl := claim(t, a, 3*time.Second)
		if cl.Lease.Delivery != uint64(i) {
			t.Fatalf("delivery %d, want %d", cl.Lease.Delivery, i)
		}
		book.Observe(cl.Lease)
		last = cl.Lease
		if err := cl.Fail(true, 0); err != nil {
			t.Fatal(err)
		}
	}
	// The advisory is raised when the server next tries to deliver the
	// attempt, i.e. when an agent pulls; it gets nothing.
	consA, err := AttemptsConsumerFor(ctx(t), a.js)
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	if cl, err := Claim(c, consA, "a"); err == nil {
		t.Fatalf("claimed %v beyond MaxDeliver", cl.Lease)
	}
	cancel()
	select {
	case d := <-dead:
		if d.Err != nil || d.Attempt.ID != att.ID || d.Deliveries != uint64(testStreams.MaxDeliver) {
			t.Fatalf("dead letter %+v", d)
		}
		if l, ok := book.DeadLetter(d.Attempt.ID); !ok || l != last {
			t.Fatalf("DeadLetter: %v %v, want %v", l, ok, last)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("no dead letter")
	}
	if v, _ := book.Accept(last); v != Dead {
		t.Fatalf("result after dead-lettering: %v", v)
	}
	// The dead attempt is removed from the queue, not left undeliverable.
	deadline := time.Now().Add(2 * time.Second)
	for {
		q, err := r.js.Stream(ctx(t), StreamAttempts)
		if err != nil {
			t.Fatal(err)
		}
		if q.CachedInfo().State.Msgs == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still holds %d messages", StreamAttempts, q.CachedInfo().State.Msgs)
		}
		time.Sleep(20 * time.Millisecond)
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
	if NewAttemptID("x", 1) == NewAttemptID("x", 1) {
		t.Fatal("ids repeat")
	}
}

// An agent that joins a server before any coordinator created the queue (a
// server zerg does not embed) waits for it instead of failing; an error
// that is not a missing queue ends the wait at once.
func TestWaitAttemptsConsumer(t *testing.T) {
	srv, err := StartServer(ServerOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	_, coordJS := connectJS(t, srv.CoordinatorCreds())
	c, err := srv.AddAgent("a1")
	if err != nil {
		t.Fatal(err)
	}
	a := connectAgent(t, "a1", c)

	// Control: without the queue, binding it fails; that is what an agent
	// met before it waited.
	if _, err := AttemptsConsumerFor(ctx(t), a.js); err == nil {
		t.Fatal("control: the consumer bound before the streams existed")
	}
	waited := make(chan error, 1)
	got := make(chan error, 1)
	go func() {
		_, err := WaitAttemptsConsumer(ctx(t), a.js, 50*time.Millisecond, func(err error) { waited <- err })
		got <- err
	}()
	select {
	case <-waited:
	case err := <-got:
		t.Fatalf("returned %v before the queue existed", err)
	case <-time.After(5 * time.Second):
		t.Fatal("did not say it waits")
	}
	if err := EnsureStreams(ctx(t), coordJS, testStreams); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("after the queue was made: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still waiting 5s after the queue was made")
	}

	// A cancelled wait ends with the error; another error (a closed
	// connection) ends it at once.
	srv2, err := StartServer(ServerOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv2.Shutdown)
	c2, _ := srv2.AddAgent("a2")
	b := connectAgent(t, "a2", c2)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := WaitAttemptsConsumer(cancelled, b.js, 50*time.Millisecond, nil); err == nil {
		t.Error("a cancelled wait with no queue returned no error")
	}
	b.nc.Close()
	start := time.Now()
	if _, err := WaitAttemptsConsumer(ctx(t), b.js, 50*time.Millisecond, nil); err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("on a closed connection: %v after %s, want an error at once", err, time.Since(start))
	}
}
