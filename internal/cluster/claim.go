package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// The claim protocol on the wire (the Dispatcher decides, dispatch.go):
//
//	zerg.claim.<agent>              agent → coordinator: give me an attempt I can run (request, long-polled)
//	zerg.giveback.<agent>.<attempt> agent → coordinator: I give back the attempt I hold (request)
//
// Both are requests on subjects the server lets only that agent publish,
// so the coordinator knows who asks; the answers come back on the agent's
// own inbox. An attempt's result is its PublishResult; an agent that stops
// naming a lease in its heartbeat loses it after AckWait.
const (
	SubjectClaim    = "zerg.claim"
	SubjectGiveBack = "zerg.giveback"
)

// claimWait is how long the coordinator holds one claim request for an
// attempt; the agent waits claimMargin longer for the answer, so that an
// attempt handed out at the end of the wait still reaches it.
const (
	claimWait   = 4 * time.Second
	claimMargin = 5 * time.Second
	maxWait     = 30 * time.Second
)

type claimRequest struct {
	Capabilities
	WaitMS int64 `json:"wait_ms"`
}

// ClaimReply answers a claim: an attempt and the delivery number of its
// lease, or (Attempt nil) none now.
type ClaimReply struct {
	Attempt  *Attempt `json:"attempt,omitempty"`
	Delivery uint64   `json:"delivery,omitempty"`
}

type giveBackRequest struct {
	Delivery uint64 `json:"delivery"`
	Retry    bool   `json:"retry"`
	DelayMS  int64  `json:"delay_ms,omitempty"`
	Why      string `json:"why,omitempty"`
}

type giveBackReply struct {
	Error string `json:"error,omitempty"`
}

// GaveBack is an attempt its holder gave back, for the coordinator to
// record and act on (an attempt Exhausted or Dropped waits for nobody).
type GaveBack struct {
	Lease      Lease
	Result     GiveBackResult
	Deliveries uint64
	// Why is the agent's word, as it sent it.
	Why string
}

// ServeDispatch answers the agents' claims and give-backs with d
// (coordinator side) until stop is called. gave, if set, hears of each
// attempt given back.
func ServeDispatch(nc *nats.Conn, d *Dispatcher, gave func(GaveBack)) (stop func(), err error) {
	claims, err := nc.Subscribe(SubjectClaim+".*", func(m *nats.Msg) {
		agent := strings.TrimPrefix(m.Subject, SubjectClaim+".")
		var req claimRequest
		if ValidAgentName(agent) != nil || json.Unmarshal(m.Data, &req) != nil || m.Reply == "" {
			return
		}
		wait := min(max(time.Duration(req.WaitMS)*time.Millisecond, 0), maxWait)
		d.Claim(agent, req.Capabilities, wait, time.Now(), func(r ClaimReply) {
			if b, err := json.Marshal(r); err == nil {
				_ = m.Respond(b)
			}
		})
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: claims: %w", err)
	}
	gives, err := nc.Subscribe(SubjectGiveBack+".*.*", func(m *nats.Msg) {
		parts := strings.Split(m.Subject, ".")
		agent, attemptID := parts[2], parts[3]
		var req giveBackRequest
		answer := giveBackReply{}
		if err := json.Unmarshal(m.Data, &req); err != nil {
			answer.Error = "not a give-back: " + err.Error()
		} else if res, n, ok := d.GiveBack(agent, attemptID, req.Delivery, req.Retry, time.Duration(req.DelayMS)*time.Millisecond, time.Now()); !ok {
			answer.Error = fmt.Sprintf("agent %s does not hold delivery %d of %s", agent, req.Delivery, attemptID)
		} else if gave != nil {
			gave(GaveBack{Lease: Lease{AttemptID: attemptID, Agent: agent, Delivery: req.Delivery}, Result: res, Deliveries: n, Why: req.Why})
		}
		if b, err := json.Marshal(answer); err == nil && m.Reply != "" {
			_ = m.Respond(b)
		}
	})
	if err != nil {
		claims.Unsubscribe()
		return nil, fmt.Errorf("cluster: give-backs: %w", err)
	}
	if err := nc.Flush(); err != nil {
		claims.Unsubscribe()
		gives.Unsubscribe()
		return nil, err
	}
	return func() { _ = claims.Unsubscribe(); _ = gives.Unsubscribe() }, nil
}

// Claimed is an attempt this agent holds: it names the lease in its
// heartbeat while it runs it, then publishes a result (PublishResult) or
// gives it back (GiveBack). An agent that does neither loses it after the
// coordinator's AckWait.
type Claimed struct {
	Attempt Attempt
	Lease   Lease
	nc      *nats.Conn
}

// Claim asks the coordinator for an attempt agent can run with caps until
// it gets one or ctx ends (agent side). coordinator, if set, hears whether
// a coordinator answers: false while none listens (no run yet, or between
// runs: Claim keeps asking), true once one does.
func Claim(ctx context.Context, nc *nats.Conn, agent string, caps Capabilities, coordinator func(bool)) (*Claimed, error) {
	if err := ValidAgentName(agent); err != nil {
		return nil, err
	}
	body, err := json.Marshal(claimRequest{Capabilities: caps, WaitMS: claimWait.Milliseconds()})
	if err != nil {
		return nil, err
	}
	say := func(up bool) {
		if coordinator != nil {
			coordinator(up)
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rctx, cancel := context.WithTimeout(ctx, claimWait+claimMargin)
		m, err := nc.RequestWithContext(rctx, SubjectClaim+"."+agent, body)
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil && nc.IsClosed():
			return nil, fmt.Errorf("cluster: claim: %w", err)
		case errors.Is(err, nats.ErrNoResponders) || (err != nil && !nc.IsConnected()):
			// No coordinator, or no server (an embedded one ends with its
			// coordinator): the connection reconnects by itself.
			say(false)
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(2 * time.Second):
			}
			continue
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout):
			continue // a reply lost, or a server restarting: ask again
		case err != nil:
			return nil, fmt.Errorf("cluster: claim: %w", err)
		}
		say(true)
		var r ClaimReply
		if json.Unmarshal(m.Data, &r) != nil || r.Attempt == nil {
			continue
		}
		if !tokenRe.MatchString(r.Attempt.ID) || r.Delivery == 0 {
			continue // not one the coordinator makes; it takes it back
		}
		return &Claimed{Attempt: *r.Attempt, Lease: Lease{AttemptID: r.Attempt.ID, Agent: agent, Delivery: r.Delivery}, nc: nc}, nil
	}
}

// GiveBack hands the attempt back to the coordinator: with retry it waits
// for an agent again, not before delay (another agent may run it, or this
// one later); without, nobody is to run it (its job cannot be read). why
// goes to the coordinator's journal.
func (c *Claimed) GiveBack(ctx context.Context, retry bool, delay time.Duration, why string) error {
	body, err := json.Marshal(giveBackRequest{Delivery: c.Lease.Delivery, Retry: retry, DelayMS: delay.Milliseconds(), Why: why})
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	m, err := c.nc.RequestWithContext(rctx, SubjectGiveBack+"."+c.Lease.Agent+"."+c.Attempt.ID, body)
	if err != nil {
		return fmt.Errorf("cluster: give back %s: %w", c.Attempt.ID, err)
	}
	var r giveBackReply
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return fmt.Errorf("cluster: give back %s: %w", c.Attempt.ID, err)
	}
	if r.Error != "" {
		return fmt.Errorf("cluster: give back %s: %s", c.Attempt.ID, r.Error)
	}
	return nil
}
