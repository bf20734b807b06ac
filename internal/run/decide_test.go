package run

import (
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
)

func TestDecide(t *testing.T) {
	p := Policy{TaskRetries: 2, InfraMaxAttempts: 4, BackoffInitial: time.Second, BackoffMax: 10 * time.Second}
	for _, tc := range []struct {
		name     string
		task     runstate.TaskState
		class    outcome.Class
		reason   string
		streak   int
		stopping bool
		want     Decision
	}{
		{"success", runstate.TaskState{}, outcome.Success, "completed", 0, false, Decision{Action: ActDone}},
		{"success while stopping still counts", runstate.TaskState{}, outcome.Success, "completed", 0, true, Decision{Action: ActDone}},
		{"first task failure retries", runstate.TaskState{TaskFailures: 1}, outcome.Task, "verification_failed", 0, false, Decision{Action: ActRetry}},
		{"last retry", runstate.TaskState{TaskFailures: 2}, outcome.Task, "ownership", 0, false, Decision{Action: ActRetry}},
		{"retries spent", runstate.TaskState{TaskFailures: 3}, outcome.Task, "max_turns", 0, false, Decision{Action: ActFail}},
		{"infra waits", runstate.TaskState{InfraFailures: 1}, outcome.Infra, "rate_limit", 1, false, Decision{Action: ActWait, Wait: time.Second}},
		{"infra backoff doubles", runstate.TaskState{InfraFailures: 3}, outcome.Infra, "overloaded", 3, false, Decision{Action: ActWait, Wait: 4 * time.Second}},
		{"infra backoff is capped", runstate.TaskState{InfraFailures: 3}, outcome.Infra, "overloaded", 9, false, Decision{Action: ActWait, Wait: 10 * time.Second}},
		{"infra limit", runstate.TaskState{InfraFailures: 4}, outcome.Infra, "stall", 4, false, Decision{Action: ActFail}},
		{"infra does not spend task retries", runstate.TaskState{TaskFailures: 3, InfraFailures: 1}, outcome.Infra, "stall", 1, false, Decision{Action: ActWait, Wait: time.Second}},
		{"fatal stops the run", runstate.TaskState{}, outcome.Fatal, "invalid_api_key", 0, false, Decision{Action: ActStopRun}},
		{"an account refusal stops the launching", runstate.TaskState{}, outcome.Account, "credit", 0, false, Decision{Action: ActStopLaunch}},
		{"cancelled by the stop", runstate.TaskState{InfraFailures: 9}, outcome.Infra, outcome.ReasonCancelled, 0, false, Decision{Action: ActStopped}},
		{"a failure while stopping is not judged", runstate.TaskState{TaskFailures: 9}, outcome.Task, "verification_failed", 0, true, Decision{Action: ActStopped}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(p, tc.task, tc.class, tc.reason, tc.streak, tc.stopping); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	unlimited := p
	unlimited.InfraMaxAttempts = 0
	if got := Decide(unlimited, runstate.TaskState{InfraFailures: 1000}, outcome.Infra, "stall", 1, false); got.Action != ActWait {
		t.Errorf("no infra limit: %+v", got)
	}
}

func TestJitterStaysWithinAQuarter(t *testing.T) {
	for _, r := range []float64{0, 0.5, 0.999} {
		d := Jitter(time.Second, r)
		if d < 750*time.Millisecond || d >= 1250*time.Millisecond {
			t.Errorf("Jitter(1s, %v) = %s", r, d)
		}
	}
}
