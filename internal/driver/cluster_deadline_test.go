package driver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cluster"
	"github.com/zergrush/zerg/internal/outcome"
)

// launchStalling is launch with the worker's stall timeout set (the
// coordinator's no-progress deadline).
func (r *clusterRig) launchStalling(ctx context.Context, task string, stall time.Duration) chan launched {
	t := r.t
	t.Helper()
	ws, err := r.d.Prepare(ctx, Attempt{Repo: r.repo, Task: task, Number: 1, Base: r.base,
		Workspace: filepath.Join(t.TempDir(), task), Audit: r.audits.record})
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan launched, 1)
	go func() {
		v, err := ws.Launch(ctx, claude.Spec{Prompt: "Task " + task + ": x", IdleTimeout: stall}, nil)
		ch <- launched{v, err, ws}
	}()
	return ch
}

// rogueClaim claims an attempt in a's name without naming it in any
// heartbeat (a has none running): what the red team's rogue agent did,
// keeping its attempts with in-progress acks alone.
func (a *testAgent) rogueClaim(t *testing.T) *cluster.Claimed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, err := cluster.Claim(ctx, a.nc, a.name, cluster.Capabilities{Mode: a.mode()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A holder that names its lease in no heartbeat loses the attempt after
// AckWait: it is queued again under a new id for an agent that does, the
// journal names the holder, and its late result is refused. The control
// (the same holder naming its lease keeps it past AckWait) is the
// dispatcher's, TestDispatchTakesBackASilentHolder, and the red team's.
func TestClusterTakesBackASilentHolder(t *testing.T) {
	t.Parallel() // its own server and repository
	r := newClusterRig(t, cluster.StreamsConfig{AckWait: time.Second, MaxDeliver: 4, HeartbeatTTL: time.Second}, "")
	rogue, honest := r.agent("rogue"), r.agent("honest")
	if err := r.d.start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := r.launch(ctx, "T1")
	r.ready(honest)
	js, _ := jetstream.New(r.d.nc)
	if err := cluster.EnsureAgentStore(context.Background(), js, rogue.name); err != nil {
		t.Fatal(err)
	}
	held := rogue.rogueClaim(t)
	if !eventually(func() bool { _, still := r.d.disp.Held(held.Attempt.ID); return !still }) {
		t.Fatalf("a silent holder still holds %s 10 s after it was handed it (AckWait 1 s)", held.Lease)
	}
	c := honest.claim(t)
	if c.Attempt.ID == held.Attempt.ID || c.Attempt.Task != "T1" || c.Lease.Delivery != 2 {
		t.Fatalf("after the take-back: %s of %s, want delivery 2 of T1 under a new id", c.Lease, c.Attempt.Task)
	}
	rogue.answer(t, r, held.Lease, "rogue.txt")
	honest.answer(t, r, c.Lease, "honest.txt")
	l := wait(t, ch)
	if l.v.Class != outcome.Success {
		t.Fatalf("verdict %+v", l.v)
	}
	if _, file := r.snapshot(l.ws); file != "honest.txt" {
		t.Errorf("the result adds %q, want honest.txt", file)
	}
	j := journalRecords(t, r.d.Journal)
	var taken, refused bool
	for _, rec := range j {
		if rec["kind"] == "lease_taken_back" && rec["agent"] == "rogue" && rec["attempt"] == held.Attempt.ID && rec["queued_as"] == c.Attempt.ID &&
			strings.Contains(stringOf(rec["why"]), "cluster.ack_wait") {
			taken = true
		}
		if rec["kind"] == "report_refused" && rec["agent"] == "rogue" {
			refused = true
		}
	}
	if !taken || !refused {
		t.Errorf("journal: taken back naming rogue %v, rogue's late result refused %v:\n%v", taken, refused, j)
	}
}

// A holder that names its lease but makes no progress (no model request,
// no event, its phase still) loses the attempt after the stall timeout
// (controls: TestDispatchTakesBackAHolderWithoutProgress).
func TestClusterTakesBackAHolderWithoutProgress(t *testing.T) {
	t.Parallel() // its own server and repository
	r := newClusterRig(t, cluster.StreamsConfig{AckWait: 5 * time.Second, MaxDeliver: 4, HeartbeatTTL: time.Second}, "")
	a := r.agent("a1")
	if err := r.d.start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := r.launchStalling(ctx, "T2", time.Second)
	r.ready(a)
	c := a.claim(t)
	if !eventually(func() bool { _, still := r.d.disp.Held(c.Attempt.ID); return !still }) {
		t.Fatal("a holder without progress kept its attempt 10 s past a 1 s stall timeout")
	}
	var why string
	for _, rec := range journalRecords(t, r.d.Journal) {
		if rec["kind"] == "lease_taken_back" && rec["agent"] == "a1" {
			why = stringOf(rec["why"])
		}
	}
	if !strings.Contains(why, "no progress") || !strings.Contains(why, "heartbeat.stall_timeout") {
		t.Errorf("the take-back's why: %q", why)
	}
	cancel()
	wait(t, ch)
}

// Agents that can never take the run's attempts (subprocess agents, a
// sandbox run) end the attempt within one AckWait as fatal, saying which
// --mode to start agents with (the control, a busy sandbox agent live
// beside them, is TestDispatchUnrunnable's).
func TestClusterNoAgentCanRun(t *testing.T) {
	t.Parallel() // its own server and repository
	r := newClusterRig(t, cluster.StreamsConfig{AckWait: time.Second, MaxDeliver: 4, HeartbeatTTL: time.Second}, "")
	r.d.Mode = "sandbox"
	weak := r.agent("weak")
	if err := r.d.start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := r.launch(ctx, "T3")
	r.ready(weak)
	go func() { _, _ = cluster.Claim(ctx, weak.nc, weak.name, cluster.Capabilities{Mode: "subprocess"}, nil) }()
	select {
	case l := <-ch:
		if l.err != nil || l.v.Class != outcome.Fatal || l.v.Reason != outcome.ReasonNoAgent ||
			!strings.Contains(l.v.Detail, "--mode sandbox") || !strings.Contains(l.v.Detail, "agent weak: the run needs mode sandbox and this agent runs subprocess") {
			t.Fatalf("verdict %+v (%v)", l.v, l.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no verdict 10 s after the attempt waited with only subprocess agents (AckWait 1 s)")
	}
}

// eventually polls cond for up to 10 s.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}

func journalRecords(t *testing.T, file string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}
