package run

import (
	"context"
	"sync"
	"time"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/runstate"
)

// Outcome is what the governor learns from one finished attempt.
type Outcome struct {
	Infra bool // an infrastructure failure (rate limit, overload, 5xx, stall, crash)
	// Overload marks 429/529: concurrency is halved.
	Overload bool
	// RetryAfter is the wait the API asked for, when known (rate limits).
	RetryAfter time.Duration
	Reason     string
}

// Governor decides when an attempt may launch: a circuit breaker over
// consecutive infra failures, backpressure zones over the recent failure
// rate, pauses for rate limits, and adaptive concurrency (halved after an
// overload, raised again after a run of successes). Every change is reported
// through emit, so it lands in the run log.
type Governor struct {
	mu      sync.Mutex
	now     func() time.Time
	after   func(time.Duration) <-chan time.Time
	emit    func(typ string, data any)
	changed chan struct{} // closed and replaced on every state change

	maxWorkers int
	limit      int // adaptive concurrency, 1..maxWorkers
	running    int

	failuresToOpen int
	cooldown       time.Duration
	breaker        string
	consecutive    int
	openUntil      time.Time
	probing        bool // a half-open or red-zone probe is in flight

	window     []bool // recent outcomes, true = infra failure
	windowSize int
	minSamples int
	yellow     float64
	red        float64
	zone       string

	pausedUntil   time.Time
	defaultPause  time.Duration
	successStreak int
}

// NewGovernor builds a governor from the config for maxWorkers workers.
func NewGovernor(cfg config.Config, maxWorkers int, emit func(string, any)) *Governor {
	if maxWorkers < 1 {
		maxWorkers = 1
	}
	g := &Governor{
		now: time.Now, after: time.After, emit: emit, changed: make(chan struct{}),
		maxWorkers: maxWorkers, limit: maxWorkers,
		failuresToOpen: cfg.Breaker.Failures, cooldown: cfg.Breaker.Cooldown, breaker: runstate.BreakerClosed,
		windowSize: cfg.Backpressure.Window, minSamples: cfg.Backpressure.MinSamples,
		yellow: cfg.Backpressure.Yellow, red: cfg.Backpressure.Red, zone: runstate.ZoneGreen,
		defaultPause: cfg.Retry.InfraBackoffMax,
	}
	// A zero is an option left out: the config's defaults, not others.
	def := config.Default()
	if g.failuresToOpen < 1 {
		g.failuresToOpen = def.Breaker.Failures
	}
	if g.cooldown <= 0 {
		g.cooldown = def.Breaker.Cooldown
	}
	if g.windowSize < 1 {
		g.windowSize = def.Backpressure.Window
	}
	if g.minSamples < 1 {
		g.minSamples = min(def.Backpressure.MinSamples, g.windowSize)
	}
	if g.red <= 0 || g.red > 1 {
		g.red = def.Backpressure.Red
	}
	if g.yellow <= 0 || g.yellow >= g.red {
		g.yellow = min(def.Backpressure.Yellow, g.red/2)
	}
	if g.defaultPause <= 0 || g.defaultPause > time.Minute {
		g.defaultPause = 30 * time.Second
	}
	if emit == nil {
		g.emit = func(string, any) {}
	}
	return g
}

// Snapshot returns the current state.
func (g *Governor) Snapshot() runstate.GovernorSnapshot {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := runstate.GovernorSnapshot{Breaker: g.breaker, Zone: g.zone, Limit: g.limit, Running: g.running}
	if g.pausedUntil.After(g.now()) {
		s.PausedUntil = g.pausedUntil
	}
	if g.breaker == runstate.BreakerOpen {
		s.OpenUntil = g.openUntil
	}
	return s
}

// Acquire blocks until an attempt may launch and returns whether it is a
// probe (the single attempt allowed while the breaker is half-open or the
// zone is red). Every Acquire must be followed by one Release.
func (g *Governor) Acquire(ctx context.Context) (probe bool, err error) {
	for {
		g.mu.Lock()
		ok, probe, wait := g.decide()
		if ok {
			g.running++
			if probe {
				g.probing = true
			}
			g.mu.Unlock()
			return probe, nil
		}
		ch := g.changed
		g.mu.Unlock()
		var fired <-chan time.Time
		if wait > 0 {
			fired = g.after(wait)
		}
		select {
		case <-ctx.Done():
			return false, context.Cause(ctx)
		case <-ch:
		case <-fired:
		}
	}
}

// decide says whether a launch may happen now, whether it is a probe, and
// otherwise how long until the answer may change by time alone (0: wait for
// a state change). Called with mu held.
func (g *Governor) decide() (ok, probe bool, wait time.Duration) {
	now := g.now()
	if now.Before(g.pausedUntil) {
		return false, false, g.pausedUntil.Sub(now)
	}
	if g.breaker == runstate.BreakerOpen {
		if now.Before(g.openUntil) {
			return false, false, g.openUntil.Sub(now)
		}
		g.setBreaker(runstate.BreakerHalfOpen, 0)
	}
	if g.breaker == runstate.BreakerHalfOpen || g.zone == runstate.ZoneRed {
		if g.probing || g.running > 0 {
			return false, false, 0
		}
		return true, true, 0
	}
	limit := g.limit
	if g.zone == runstate.ZoneYellow {
		limit = max(1, limit/2)
	}
	if g.running >= limit {
		return false, false, 0
	}
	return true, false, 0
}

// Release records the outcome of an attempt that Acquire let through.
func (g *Governor) Release(probe bool, o Outcome) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running--
	if probe {
		g.probing = false
	}
	now := g.now()
	g.window = append(g.window, o.Infra)
	if len(g.window) > g.windowSize {
		g.window = g.window[len(g.window)-g.windowSize:]
	}
	if o.Infra {
		g.consecutive++
		g.successStreak = 0
		if o.Overload {
			if g.limit > 1 {
				from := g.limit
				g.limit = max(1, g.limit/2)
				g.emit(runstate.EvConcurrency, runstate.ConcurrencyChange{From: from, To: g.limit, Reason: o.Reason})
			}
			pause := o.RetryAfter
			if pause <= 0 && o.Reason == "rate_limit" {
				pause = g.defaultPause
			}
			if until := now.Add(pause); pause > 0 && until.After(g.pausedUntil) {
				g.pausedUntil = until
				g.emit(runstate.EvPaused, runstate.LaunchPause{Until: until.UTC().Format(time.RFC3339Nano), Reason: o.Reason})
			}
		}
		switch {
		case g.breaker == runstate.BreakerHalfOpen && probe:
			g.open(now)
		case g.breaker == runstate.BreakerClosed && g.consecutive >= g.failuresToOpen:
			g.open(now)
		}
	} else {
		g.consecutive = 0
		if probe && g.breaker == runstate.BreakerHalfOpen {
			g.setBreaker(runstate.BreakerClosed, 0)
		}
		if probe && g.zone == runstate.ZoneRed {
			// The probe got through: forget the failures that made the zone red.
			g.window = g.window[:0]
		}
		g.successStreak++
		if g.limit < g.maxWorkers && g.successStreak >= g.limit {
			from := g.limit
			g.limit++
			g.successStreak = 0
			g.emit(runstate.EvConcurrency, runstate.ConcurrencyChange{From: from, To: g.limit, Reason: "successes"})
		}
	}
	g.updateZone()
	g.broadcast()
}

func (g *Governor) open(now time.Time) {
	g.openUntil = now.Add(g.cooldown)
	g.setBreaker(runstate.BreakerOpen, g.consecutive)
}

func (g *Governor) setBreaker(state string, failures int) {
	if g.breaker == state {
		return
	}
	g.breaker = state
	bc := runstate.BreakerChange{State: state, Failures: failures}
	if state == runstate.BreakerOpen {
		bc.Until = g.openUntil.UTC().Format(time.RFC3339Nano)
	}
	g.emit(runstate.EvBreaker, bc)
	g.broadcast()
}

func (g *Governor) updateZone() {
	zone := runstate.ZoneGreen
	rate := 0.0
	if n := len(g.window); n >= g.minSamples {
		fails := 0
		for _, f := range g.window {
			if f {
				fails++
			}
		}
		rate = float64(fails) / float64(n)
		switch {
		case rate >= g.red:
			zone = runstate.ZoneRed
		case rate >= g.yellow:
			zone = runstate.ZoneYellow
		}
	}
	if zone != g.zone {
		g.zone = zone
		g.emit(runstate.EvZone, runstate.ZoneChange{Zone: zone, FailureRate: rate, Samples: len(g.window)})
	}
}

func (g *Governor) broadcast() {
	close(g.changed)
	g.changed = make(chan struct{})
}
