package runstate

// The launch governor's events (internal/run's Governor emits them; the
// state and the view read them).

// Breaker states.
const (
	BreakerClosed   = "closed"
	BreakerOpen     = "open"
	BreakerHalfOpen = "half_open"
)

// Backpressure zones.
const (
	ZoneGreen  = "green"  // full concurrency
	ZoneYellow = "yellow" // half
	ZoneRed    = "red"    // launches paused until a probe succeeds
)

// Governor event types (in the run log).
const (
	EvBreaker     = "breaker" // BreakerChange
	EvZone        = "zone"    // ZoneChange
	EvPaused      = "launches_paused"
	EvConcurrency = "concurrency"
)

// BreakerChange records a circuit breaker transition.
type BreakerChange struct {
	State    string `json:"state"`
	Failures int    `json:"failures,omitempty"` // consecutive infra failures that opened it
	Until    string `json:"until,omitempty"`    // open: when the probe may run (RFC 3339)
}

// ZoneChange records a backpressure zone transition.
type ZoneChange struct {
	Zone        string  `json:"zone"`
	FailureRate float64 `json:"failure_rate"`
	Samples     int     `json:"samples"`
}

// LaunchPause records a pause of all launches (a rate limit).
type LaunchPause struct {
	Until  string `json:"until"`
	Reason string `json:"reason"`
}

// ConcurrencyChange records an adaptive concurrency change.
type ConcurrencyChange struct {
	From   int    `json:"from"`
	To     int    `json:"to"`
	Reason string `json:"reason"`
}
