package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
)

// Waiting for a usage limit's reset (retry.wait_for_reset): instead of
// ending the run, the coordinator stops launching until the time the API
// said, stops the attempts in flight (every request of theirs would be
// refused the same way), then runs the refused and stopped tasks again.

// resetMargin is waited past the reset: the reset headers are whole
// seconds, and the API's clock is not ours.
const resetMargin = time.Second

// errResetWait is the cause of the attempts stopped for a reset wait.
var errResetWait = errors.New("stopped to wait for the usage limit's reset")

// ResetDecision says whether an account refusal is waited out.
type ResetDecision struct {
	Wait  bool
	Until time.Time // when launching resumes (Wait)
	// WhyNot says why a refusal is not waited for, when waiting is on
	// ("" when it is off: nothing to explain).
	WhyNot string
}

// DecideReset is the one decision on an account refusal: with
// retry.wait_for_reset, a usage limit whose reset time can be read, is
// ahead and within retry.wait_for_reset_max is waited for until a moment
// after it. Credit and key refusals do not pass with time.
func DecideReset(r config.Retry, reason, reset string, now time.Time) ResetDecision {
	if !r.WaitForReset {
		return ResetDecision{}
	}
	if reason != outcome.ReasonUsageLimit {
		return ResetDecision{WhyNot: fmt.Sprintf("a %s refusal does not pass with time", reason)}
	}
	if strings.TrimSpace(reset) == "" {
		return ResetDecision{WhyNot: "the API said no reset time"}
	}
	at, ok := ParseReset(reset)
	if !ok {
		return ResetDecision{WhyNot: fmt.Sprintf("its reset time %q cannot be read", reset)}
	}
	if !at.After(now) {
		// The limit should have reset: waiting again could loop on an
		// API that keeps refusing.
		return ResetDecision{WhyNot: fmt.Sprintf("its reset time %s has passed and the API still refuses", at.UTC().Format(time.RFC3339))}
	}
	maxWait := r.WaitForResetMax
	if maxWait <= 0 {
		maxWait = config.Default().Retry.WaitForResetMax
	}
	if d := at.Sub(now); d > maxWait {
		return ResetDecision{WhyNot: fmt.Sprintf("its reset (%s) is %s away, beyond retry.wait_for_reset_max (%s)",
			at.UTC().Format(time.RFC3339), roughly(d), maxWait)}
	}
	return ResetDecision{Wait: true, Until: at.Add(resetMargin)}
}

// roughly is a duration to the second under a minute, else to the minute.
func roughly(d time.Duration) time.Duration {
	if d < time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(time.Minute)
}

// resetLayouts are the forms a reset time comes in: RFC 3339 from the
// gateway (which reads the API's headers), the dates of "You will regain
// access on 2030-07-01 at 00:00 UTC." in a message.
var resetLayouts = []string{
	time.RFC3339,
	"2006-01-02 at 15:04 MST",
	"2006-01-02 at 15:04:05 MST",
	"2006-01-02 15:04 MST",
	"2006-01-02 15:04:05 MST",
	"2006-01-02T15:04:05Z",
}

// ParseReset reads a reset time as the API or the gateway gives it.
func ParseReset(s string) (time.Time, bool) {
	s = strings.TrimSuffix(strings.TrimSpace(s), ".")
	for _, l := range resetLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// waitForReset starts (or lengthens) the run's wait for a usage limit's
// reset, decided on task's refused attempt, and stops the other attempts
// in flight. Called with the launch lock held, before the refusal is
// recorded, so no attempt starts after it in the log. It reports whether
// the wait is longer than before, and so is to be announced.
func (c *Coordinator) waitForReset(task string, until time.Time) bool {
	c.mu.Lock()
	longer := until.After(c.waitUntil)
	if longer {
		c.waitUntil = until
	}
	cancels := make([]context.CancelCauseFunc, 0, len(c.cancels))
	for id, cancel := range c.cancels {
		if id != task {
			cancels = append(cancels, cancel)
		}
	}
	c.mu.Unlock()
	for _, cancel := range cancels {
		cancel(errResetWait)
	}
	return longer
}

// announceReset records and says the wait for a reset.
func (c *Coordinator) announceReset(task string, res attempt.Result, until time.Time) error {
	c.progress.resetWait(task, res.Reason, until, c.d.Clock.Now())
	return c.emit(runstate.EvResetWait, "", 0, runstate.ResetWait{Task: task, Reason: res.Reason, Reset: res.Reset, Until: until.UTC().Format(time.RFC3339)})
}

// waiting reports whether launching waits for a reset.
func (c *Coordinator) waiting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.waitUntil.IsZero()
}

// awaitReset returns once no reset is waited for (at once when none is),
// or when the run stops. The first caller past the reset says launching
// resumes.
func (c *Coordinator) awaitReset(ctx context.Context) error {
	for {
		c.mu.Lock()
		until := c.waitUntil
		now := c.d.Clock.Now()
		over := !until.IsZero() && !now.Before(until)
		if over {
			c.waitUntil = time.Time{}
		}
		c.mu.Unlock()
		if until.IsZero() {
			return nil
		}
		if over {
			c.progress.note("the usage limit's reset time passed: launching resumes")
			return nil
		}
		select {
		case <-c.d.Clock.After(until.Sub(now)):
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

func (p *progress) stoppedForReset(task string, n int) {
	p.printf("  %s: attempt %d stopped for the reset wait; it runs again after the reset (does not count against retries)", task, n)
}

func (p *progress) resetWait(task, reason string, until, now time.Time) {
	p.printf("zerg: %s (task %s): waiting until %s (in %s) for the reset; Ctrl-C stops the run (resume later with --resume)",
		strings.ReplaceAll(reason, "_", " "), task, clockTime(until, now), roughly(until.Sub(now)))
}

// clockTime is a moment as a person reads it: the local time of day, with
// the date when it is not today.
func clockTime(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	if t.Format(time.DateOnly) == now.Format(time.DateOnly) {
		return t.Format(time.TimeOnly)
	}
	return t.Format(time.DateTime)
}
