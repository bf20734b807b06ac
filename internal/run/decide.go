package run

import (
	"time"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
)

// Action is what the coordinator does after an attempt.
type Action string

const (
	ActDone    Action = "done"     // committed: the task waits for its level's merge
	ActRetry   Action = "retry"    // a task failure with retries left: try again now
	ActWait    Action = "wait"     // an infrastructure failure: try again after Wait
	ActFail    Action = "fail"     // failed for good
	ActStopRun Action = "stop_run" // a fatal error: no attempt of any task can succeed
	// ActStopLaunch: the account refused; no attempt starts any more, the
	// task is not failed, committed work stays.
	ActStopLaunch Action = "stop_launch"
	// ActStopBudget: the gateway refused a request because budget.run_usd
	// is spent; no attempt starts any more, the task is not failed.
	ActStopBudget Action = "stop_budget"
	ActStopped    Action = "stopped" // the run itself is stopping; nothing to decide
)

// Decision is the retry policy's answer for one finished attempt.
type Decision struct {
	Action Action
	// Wait is the backoff before the next attempt (ActWait), before jitter.
	Wait time.Duration
}

// Policy is the retry policy: how many task failures a task may have and
// how infrastructure failures back off.
type Policy struct {
	TaskRetries      int // task failures allowed beyond the first attempt
	InfraMaxAttempts int // infra failures before a task fails for good; 0: no limit
	BackoffInitial   time.Duration
	BackoffMax       time.Duration
}

// PolicyFrom reads the retry policy from the config.
func PolicyFrom(r config.Retry) Policy {
	return Policy{TaskRetries: r.TaskRetries, InfraMaxAttempts: r.InfraMaxAttempts,
		BackoffInitial: r.InfraBackoffInitial, BackoffMax: r.InfraBackoffMax}
}

// Decide is the one decision after an attempt, a pure function of the
// policy, the task's counts after the attempt was recorded, the attempt's
// class and reason, the task's current streak of infra failures and whether
// the run is stopping.
func Decide(p Policy, t runstate.TaskState, class outcome.Class, reason string, infraStreak int, stopping bool) Decision {
	switch {
	case class == outcome.Success:
		return Decision{Action: ActDone}
	case stopping || reason == outcome.ReasonCancelled:
		// The attempt ended because the run is stopping: not the task's fault.
		return Decision{Action: ActStopped}
	case class == outcome.Fatal:
		return Decision{Action: ActStopRun}
	case class == outcome.Account:
		return Decision{Action: ActStopLaunch}
	case reason == outcome.ReasonRunBudget:
		return Decision{Action: ActStopBudget}
	case class == outcome.Task:
		if t.TaskFailures > p.TaskRetries {
			return Decision{Action: ActFail}
		}
		return Decision{Action: ActRetry}
	default: // infra, and anything unknown
		if p.InfraMaxAttempts > 0 && t.InfraFailures >= p.InfraMaxAttempts {
			return Decision{Action: ActFail}
		}
		return Decision{Action: ActWait, Wait: Backoff(p.BackoffInitial, p.BackoffMax, infraStreak)}
	}
}

// Backoff is exponential: initial, doubled for each failure in the streak,
// capped at maxWait. Jitter is applied by the caller.
func Backoff(initial, maxWait time.Duration, streak int) time.Duration {
	// A zero is an option left out: the config's defaults, not others.
	def := config.Default().Retry
	if initial <= 0 {
		initial = def.InfraBackoffInitial
	}
	if maxWait <= 0 {
		maxWait = def.InfraBackoffMax
	}
	d := initial
	for i := 1; i < streak && d < maxWait; i++ {
		d *= 2
	}
	return min(d, maxWait)
}

// Jitter spreads d by ±25 % with r in [0, 1), so workers that failed
// together do not retry together.
func Jitter(d time.Duration, r float64) time.Duration {
	return time.Duration(float64(d) * (0.75 + 0.5*r))
}

// governorOutcome is what the launch governor learns from an attempt.
func governorOutcome(class outcome.Class, reason string, retryAfter time.Duration) Outcome {
	o := Outcome{Infra: class == outcome.Infra && reason != outcome.ReasonCancelled, Reason: reason, RetryAfter: retryAfter}
	o.Overload = o.Infra && (reason == outcome.ReasonRateLimit || reason == outcome.ReasonOverloaded)
	return o
}
