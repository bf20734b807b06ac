package run

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/runstate"
)

// fakeClock is a settable clock for the governor.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type recorder struct {
	mu     sync.Mutex
	events []string
	data   []any
}

func (r *recorder) emit(typ string, d any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, typ)
	r.data = append(r.data, d)
}

func newTestGovernor(workers int) (*Governor, *fakeClock, *recorder) {
	cfg := config.Default()
	cfg.Breaker.Failures, cfg.Breaker.Cooldown = 5, 60*time.Second
	cfg.Backpressure.Window, cfg.Backpressure.MinSamples = 10, 4
	cfg.Backpressure.Yellow, cfg.Backpressure.Red = 0.3, 0.6
	rec := &recorder{}
	g := NewGovernor(cfg, workers, rec.emit)
	clk := &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	g.now = clk.now
	return g, clk, rec
}

// tryAcquire reports whether Acquire succeeds without waiting.
func tryAcquire(g *Governor) (ok, probe bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ok, probe, _ = g.decide()
	if ok {
		g.running++
		if probe {
			g.probing = true
		}
	}
	return ok, probe
}

// cycle runs one attempt through the governor.
func cycle(t *testing.T, g *Governor, o Outcome) {
	t.Helper()
	ok, probe := tryAcquire(g)
	if !ok {
		t.Fatal("launch refused")
	}
	g.Release(probe, o)
}

func TestBreakerOpensAfterFiveAndProbeCloses(t *testing.T) {
	g, clk, rec := newTestGovernor(4)
	g.windowSize, g.minSamples = 100, 100 // keep backpressure out of this test
	infra := Outcome{Infra: true, Reason: "server_error"}
	for i := 0; i < 4; i++ {
		cycle(t, g, infra)
		if g.breaker != runstate.BreakerClosed {
			t.Fatalf("opened after %d failures", i+1)
		}
	}
	cycle(t, g, infra)
	if g.breaker != runstate.BreakerOpen {
		t.Fatal("5 consecutive infra failures did not open the breaker")
	}
	// No launch during the cooldown.
	for _, step := range []time.Duration{0, 30 * time.Second, 29 * time.Second} {
		clk.add(step)
		if ok, _ := tryAcquire(g); ok {
			t.Fatalf("launch allowed inside the cooldown")
		}
	}
	clk.add(2 * time.Second) // 61 s after opening
	ok, probe := tryAcquire(g)
	if !ok || !probe || g.breaker != runstate.BreakerHalfOpen {
		t.Fatalf("after the cooldown: ok=%v probe=%v state=%s", ok, probe, g.breaker)
	}
	// Only one probe at a time.
	if ok, _ := tryAcquire(g); ok {
		t.Fatal("a second launch while the probe runs")
	}
	g.Release(true, Outcome{})
	if g.breaker != runstate.BreakerClosed {
		t.Fatal("a successful probe did not close the breaker")
	}
	if ok, probe := tryAcquire(g); !ok || probe {
		t.Fatal("closed breaker does not allow normal launches")
	}
	want := []string{runstate.EvBreaker, runstate.EvBreaker, runstate.EvBreaker}
	var got []string
	for i, e := range rec.events {
		if e == runstate.EvBreaker {
			got = append(got, rec.data[i].(runstate.BreakerChange).State)
		}
	}
	if len(got) != 3 || got[0] != runstate.BreakerOpen || got[1] != runstate.BreakerHalfOpen || got[2] != runstate.BreakerClosed {
		t.Fatalf("breaker events %v (want %v of open, half_open, closed)", got, want)
	}
}

func TestFailedProbeReopens(t *testing.T) {
	g, clk, _ := newTestGovernor(2)
	g.windowSize, g.minSamples = 100, 100
	for i := 0; i < 5; i++ {
		cycle(t, g, Outcome{Infra: true})
	}
	clk.add(61 * time.Second)
	_, probe := tryAcquire(g)
	g.Release(probe, Outcome{Infra: true})
	if g.breaker != runstate.BreakerOpen || !g.openUntil.Equal(clk.now().Add(60*time.Second)) {
		t.Fatalf("failed probe: state %s until %s", g.breaker, g.openUntil)
	}
}

func TestSuccessResetsConsecutiveCount(t *testing.T) {
	g, _, _ := newTestGovernor(4)
	g.windowSize, g.minSamples = 100, 100
	for i := 0; i < 20; i++ {
		cycle(t, g, Outcome{Infra: i%4 != 3}) // 3 failures, then a success
	}
	if g.breaker != runstate.BreakerClosed {
		t.Fatal("non-consecutive failures opened the breaker")
	}
}

func TestBackpressureZones(t *testing.T) {
	g, _, rec := newTestGovernor(4)
	g.failuresToOpen = 100 // keep the breaker out of this test
	// 6 successes then 4 failures = 40 %: yellow; concurrency halves to 2.
	for i := 0; i < 10; i++ {
		cycle(t, g, Outcome{Infra: i >= 6})
	}
	if g.zone != runstate.ZoneYellow {
		t.Fatalf("zone %s at 40 %% failures", g.zone)
	}
	a, _ := tryAcquire(g)
	b, _ := tryAcquire(g)
	c, _ := tryAcquire(g)
	if !a || !b || c {
		t.Fatalf("yellow zone allowed %v %v %v, want 2 launches", a, b, c)
	}
	g.Release(false, Outcome{Infra: true})
	g.Release(false, Outcome{Infra: true})
	// 6 of the last 10 failed: red — only a probe may run.
	for g.zone != runstate.ZoneRed {
		cycle(t, g, Outcome{Infra: true})
	}
	ok, probe := tryAcquire(g)
	if !ok || !probe {
		t.Fatal("red zone: no probe")
	}
	if ok, _ := tryAcquire(g); ok {
		t.Fatal("red zone: a launch beside the probe")
	}
	g.Release(true, Outcome{})
	if g.zone != runstate.ZoneGreen {
		t.Fatalf("zone %s after a successful red probe", g.zone)
	}
	zones := 0
	for _, e := range rec.events {
		if e == runstate.EvZone {
			zones++
		}
	}
	if zones < 3 {
		t.Errorf("zone changes not reported: %v", rec.events)
	}
}

func TestRateLimitPausesAllLaunchesAndHalvesConcurrency(t *testing.T) {
	g, clk, rec := newTestGovernor(8)
	g.windowSize, g.minSamples = 100, 100
	cycle(t, g, Outcome{Infra: true, Overload: true, Reason: "rate_limit", RetryAfter: 20 * time.Second})
	if g.limit != 4 {
		t.Fatalf("concurrency %d after a 429, want 4", g.limit)
	}
	if ok, _ := tryAcquire(g); ok {
		t.Fatal("launch during the rate-limit pause")
	}
	clk.add(19 * time.Second)
	if ok, _ := tryAcquire(g); ok {
		t.Fatal("launch before the reset")
	}
	clk.add(2 * time.Second)
	if ok, _ := tryAcquire(g); !ok {
		t.Fatal("no launch after the reset")
	}
	g.Release(false, Outcome{})
	// Successes raise concurrency back, one step per `limit` successes.
	for i := 0; i < 60 && g.limit < 8; i++ {
		cycle(t, g, Outcome{})
	}
	if g.limit != 8 {
		t.Fatalf("concurrency %d after successes, want back to 8", g.limit)
	}
	seen := map[string]bool{}
	for _, e := range rec.events {
		seen[e] = true
	}
	if !seen[runstate.EvPaused] || !seen[runstate.EvConcurrency] {
		t.Fatalf("events %v", rec.events)
	}
}

// TestAcquireWaitsAndWakes: a blocked Acquire wakes when a running attempt is
// released, and honours context cancellation.
func TestAcquireWaitsAndWakes(t *testing.T) {
	g, _, _ := newTestGovernor(1)
	if _, err := g.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { _, err := g.Acquire(context.Background()); got <- err }()
	select {
	case <-got:
		t.Fatal("second Acquire did not wait for the first")
	case <-time.After(50 * time.Millisecond):
	}
	g.Release(false, Outcome{})
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, err := g.Acquire(ctx); got <- err }()
	cancel()
	if err := <-got; err == nil {
		t.Fatal("Acquire ignored cancellation")
	}
}
