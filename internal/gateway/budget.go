package gateway

import "sync"

// Meter is a run's budget, shared by the gateways of its attempts: each
// adds what its attempt spends as the API reports it, and every gateway
// refuses new requests once the total reaches the limit. The budget is
// enforced where the key is, so no code in a sandbox can go around it.
// What a request admitted just before the limit goes on to cost is spent
// anyway: the overshoot is at most one request per attempt in flight.
type Meter struct {
	mu    sync.Mutex
	limit float64
	spent float64
}

// NewMeter returns a meter of limit dollars (0: no limit) that has already
// spent spent (what earlier attempts of the run cost).
func NewMeter(limit, spent float64) *Meter { return &Meter{limit: limit, spent: spent} }

// Add records usd spent.
func (m *Meter) Add(usd float64) {
	if m == nil || usd <= 0 {
		return
	}
	m.mu.Lock()
	m.spent += usd
	m.mu.Unlock()
}

// Spent is what the run has spent so far.
func (m *Meter) Spent() float64 {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.spent
}

// Limit is the run's budget; 0: none.
func (m *Meter) Limit() float64 {
	if m == nil {
		return 0
	}
	return m.limit
}

// Exhausted reports whether the run has spent its budget.
func (m *Meter) Exhausted() bool {
	if m == nil || m.limit <= 0 {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.spent >= m.limit
}
