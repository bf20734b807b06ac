package cluster

import (
	"fmt"
	"sync"
)

// Lease is one delivery of an attempt to an agent: JetStream's delivery
// number (NumDelivered) of the attempt's message when that agent claimed it.
type Lease struct {
	AttemptID string `json:"attempt"`
	Agent     string `json:"agent"`
	Delivery  uint64 `json:"delivery"`
}

func (l Lease) String() string { return fmt.Sprintf("%s@%s#%d", l.AttemptID, l.Agent, l.Delivery) }

// Verdict is the lease book's answer about a lease.
type Verdict int

const (
	// Current: the lease is the one the coordinator handed out last.
	Current Verdict = iota
	// Accepted: the result is taken; the attempt is finished (Accept).
	Accepted
	// Duplicate: the accepted lease's result again; drop it.
	Duplicate
	// Revoked: a newer delivery of the attempt replaced this lease; its
	// result comes from a run the coordinator gave up on.
	Revoked
	// Finished: the attempt already has an accepted result from another
	// lease.
	Finished
	// Dead: the attempt was dead-lettered after MaxDeliver deliveries.
	Dead
	// Unknown: the coordinator did not register this attempt.
	Unknown
	// Conflict: another agent already holds this very delivery number; one
	// of the two reports is false.
	Conflict
	// Invalid: the delivery number is 0, above MaxDeliver, or one the
	// coordinator never handed out.
	Invalid
)

var verdictNames = [...]string{"current", "accepted", "duplicate", "revoked", "finished", "dead", "unknown", "conflict", "invalid"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("verdict(%d)", int(v))
}

// Refused reports whether the lease's report is to be audited and dropped.
func (v Verdict) Refused() bool { return v != Current && v != Accepted }

// LeaseBook is the coordinator's record of who holds which attempt. It is
// fed the leases the coordinator hands out (Observe, from the Dispatcher)
// and the results agents send (Accept), and decides which result counts:
// exactly one per attempt, from the lease handed out last. A newer lease
// revokes older ones. Delivery numbers are the coordinator's own, so a
// lease it did not hand out (a newer number, another agent's number) is
// refused, whatever an agent reports.
//
// It is pure (no NATS) and safe for concurrent use.
type LeaseBook struct {
	mu         sync.Mutex
	maxDeliver uint64
	attempts   map[string]*attemptState
}

type attemptState struct {
	current  Lease // Delivery 0: no delivery seen yet
	revoked  []Lease
	accepted *Lease
	dead     bool
}

// NewLeaseBook makes a book for a consumer with the given MaxDeliver.
func NewLeaseBook(maxDeliver int) *LeaseBook {
	if maxDeliver <= 0 {
		maxDeliver = 5
	}
	return &LeaseBook{maxDeliver: uint64(maxDeliver), attempts: map[string]*attemptState{}}
}

// Register records an attempt the coordinator enqueued. Reports about
// unregistered attempts are refused as Unknown.
func (b *LeaseBook) Register(attemptID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.attempts[attemptID]; !ok {
		b.attempts[attemptID] = &attemptState{}
	}
}

// Forget drops an attempt the coordinator is done with (after it was
// accepted or dead-lettered and audited).
func (b *LeaseBook) Forget(attemptID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.attempts, attemptID)
}

// Observe records that l was handed out. It returns Current when l is
// (now) the attempt's newest lease, with the leases this revoked; otherwise
// the reason l is not current.
func (b *LeaseBook) Observe(l Lease) (Verdict, []Lease) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, v := b.check(l, true)
	if v != Current {
		return v, nil
	}
	return Current, b.advance(st, l)
}

// Check says what the book thinks of a lease an agent names (in a
// heartbeat): Current when it is the attempt's newest, else why not. It
// changes nothing.
func (b *LeaseBook) Check(l Lease) Verdict {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, v := b.check(l, false)
	return v
}

// Accept decides about the result of lease l. Accepted means: take it, the
// attempt is finished. Any other verdict means drop it (and audit).
func (b *LeaseBook) Accept(l Lease) (Verdict, []Lease) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, v := b.check(l, false)
	if v != Current {
		return v, nil
	}
	acc := l
	st.accepted = &acc
	return Accepted, nil
}

// DeadLetter marks the attempt as dead-lettered (it reached MaxDeliver) and
// returns its last known lease. Later results for it are refused as Dead.
func (b *LeaseBook) DeadLetter(attemptID string) (last Lease, known bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.attempts[attemptID]
	if !ok {
		return Lease{}, false
	}
	st.dead = true
	return st.current, true
}

// Current returns the attempt's newest known lease.
func (b *LeaseBook) Current(attemptID string) (Lease, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.attempts[attemptID]
	if !ok || st.current.Delivery == 0 {
		return Lease{}, false
	}
	return st.current, true
}

// check classifies l against the attempt's state; Current means l is the
// current lease, or (newer) a newer one being handed out. The caller holds
// b.mu.
func (b *LeaseBook) check(l Lease, newer bool) (*attemptState, Verdict) {
	st, ok := b.attempts[l.AttemptID]
	if !ok {
		return nil, Unknown
	}
	if l.Delivery == 0 || l.Delivery > b.maxDeliver || l.Agent == "" {
		return st, Invalid
	}
	if st.accepted != nil {
		if *st.accepted == l {
			return st, Duplicate
		}
		if l.Delivery < st.accepted.Delivery || b.wasRevoked(st, l) {
			return st, Revoked
		}
		return st, Finished
	}
	if st.dead {
		return st, Dead
	}
	switch {
	case l.Delivery < st.current.Delivery:
		if b.wasRevoked(st, l) {
			return st, Revoked
		}
		return st, Invalid
	case l.Delivery == st.current.Delivery && l.Agent != st.current.Agent:
		return st, Conflict
	case l.Delivery > st.current.Delivery && !newer:
		return st, Invalid
	}
	return st, Current
}

func (b *LeaseBook) wasRevoked(st *attemptState, l Lease) bool {
	for _, r := range st.revoked {
		if r == l {
			return true
		}
	}
	return false
}

// advance makes l current if it is newer, returning the lease it revoked.
func (b *LeaseBook) advance(st *attemptState, l Lease) []Lease {
	if l.Delivery == st.current.Delivery {
		return nil
	}
	var revoked []Lease
	if st.current.Delivery != 0 {
		revoked = []Lease{st.current}
		st.revoked = append(st.revoked, st.current)
	}
	st.current = l
	return revoked
}
