package run

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/preflight"
	"github.com/zergrush/zerg/internal/textx"
)

// When one worker meets a problem of the machine (no network, a missing
// tool, a full disk, a gateway that cannot reach the API), every other
// worker meets it too: retrying tasks cannot fix it, and cycling the
// breaker for minutes only hides it. The coordinator tells such faults
// from the task's own: a verification failure the diagnostics engine
// calls an environment problem spends no task retry, and the same one in
// two attempts, or the same non-transient infrastructure fault in three,
// stops the launching once, with the evidence and the fix. "Attempts" are
// of different tasks (different workers), or twice as many of the same.

// Thresholds of the correlation.
const (
	envAttempts   = 2   // the same environment diagnosis in this many attempts stops the launching
	infraAttempts = 3   // the same non-transient infrastructure fault in this many
	envConfidence = 0.6 // below it, a diagnosis is not sure enough to spare the task
	// cliAttempts: the gateway refusing the CLI's own request the same way
	// in this many attempts, of any tasks (the task plays no part in the
	// CLI's request before the model's first answer), stops the launching.
	cliAttempts = 2
)

// transient are infrastructure reasons that pass by themselves (the
// breaker and backpressure handle them) or that zerg caused.
var transient = map[string]bool{
	outcome.ReasonRateLimit: true, outcome.ReasonOverloaded: true, outcome.ReasonServerError: true,
	outcome.ReasonStalled: true, outcome.ReasonKilled: true, outcome.ReasonTimeout: true,
	outcome.ReasonCancelled: true, outcome.ReasonAbandoned: true, outcome.ReasonZerg: true, outcome.ReasonRunBudget: true,
	outcome.ReasonEnvironment: true,
}

// environmental makes an attempt whose verification failed for want of
// something in the environment an infrastructure failure: no task retry
// is spent on it. A missing test runner (the interpreter without pytest,
// a toolchain's program not on PATH: preflight.MissingRunner) is certain,
// not the engine's guess: it stops the launching at once.
func environmental(res *attempt.Result, command string) {
	// Only an output the engine read: zerg's own verdicts (a workspace
	// that grew too large, a refused request) are the task's by what zerg
	// saw, however their pattern is classed.
	if res.Class != outcome.Task || res.Reason != outcome.ReasonVerificationFailed {
		return
	}
	if p, ok := preflight.MissingRunner(command, res.VerifyOutput); ok {
		what := "tool"
		if p.Kind == preflight.MissingModule {
			what = "module"
		}
		d := diagnose.Verdict(diagnose.CommandNotFound, fmt.Sprintf("missing %s %s: %s", what, p.Name, textx.Clip(textx.OneLine(p.Detail), 300)))
		h := d.Top()
		res.Diagnosis = &h
	}
	h := res.Diagnosis
	if h == nil || h.Class != diagnose.Environment || h.Confidence < envConfidence {
		return
	}
	res.Class, res.Reason = outcome.Infra, outcome.ReasonEnvironment
	res.Detail = fmt.Sprintf("%s, not the task's doing (%s): %s", h.Pattern, strings.Join(h.Evidence, "; "), res.Detail)
}

// faults counts the faults that may be everybody's, by kind.
type faults struct {
	counts map[string]int
	tasks  map[string][]string
	said   bool // the launching was stopped: it is said once
}

// digits blurs what differs between two reports of one fault (ports,
// pids, durations).
var digits = regexp.MustCompile(`[0-9]+`)

// note records a finished attempt and returns why the launching must stop,
// nil when it goes on.
func (f *faults) note(feature, task string, res attempt.Result) *Error {
	if f.counts == nil {
		f.counts, f.tasks = map[string]int{}, map[string][]string{}
	}
	key, limit, why := "", 0, ""
	switch {
	case res.Class == outcome.Success:
		// The infrastructure works again.
		for k := range f.counts {
			if strings.HasPrefix(k, "infra:") {
				delete(f.counts, k)
				delete(f.tasks, k)
			}
		}
		return nil
	case res.Reason == outcome.ReasonEnvironment && res.Diagnosis != nil:
		h := res.Diagnosis
		key, limit = "env:"+h.Pattern, envAttempts
		if h.Certain {
			// A rule, not a guess: the next worker would meet it too.
			limit = 1
		}
		why = fmt.Sprintf("%s in %%s: %s; %s", h.Pattern, strings.Join(h.Evidence, "; "), h.Fix)
	case res.Reason == outcome.ReasonCLIRefused:
		key, limit = "cli:"+digits.ReplaceAllString(textx.OneLine(res.Detail), "#"), cliAttempts
		why = fmt.Sprintf("the same refusal in %%s: %s", textx.Clip(textx.OneLine(res.Detail), 600))
	case res.Class == outcome.Infra && !transient[res.Reason]:
		key, limit = "infra:"+res.Reason+":"+digits.ReplaceAllString(textx.OneLine(res.Detail), "#"), infraAttempts
		why = fmt.Sprintf("the same infrastructure failure in %%s: %s", textx.Clip(textx.OneLine(res.Detail), 300))
	default:
		return nil
	}
	f.counts[key]++
	if !slices.Contains(f.tasks[key], task) {
		f.tasks[key] = append(f.tasks[key], task)
	}
	// Everybody's problem: met by that many workers (tasks), or by one
	// task's attempts twice as often (a graph of one task).
	enough := len(f.tasks[key]) >= limit || f.counts[key] >= 2*limit
	if strings.HasPrefix(key, "cli:") {
		// Any attempts: the CLI's request does not depend on the task.
		enough = f.counts[key] >= limit
	}
	if !enough || f.said {
		return nil
	}
	f.said = true
	where := fmt.Sprintf("%d attempts of %s", f.counts[key], strings.Join(f.tasks[key], ", "))
	return &Error{Kind: Environment, Feature: feature, Task: task, Err: fmt.Errorf(why, where)}
}
