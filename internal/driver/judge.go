package driver

import (
	"fmt"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/textx"
)

// judgeGateway decides the attempt's class. The CLI's own word comes
// from its stream, which code in the sandbox can forge; what the API said
// comes from the gateway, which it cannot. Every answer the gateway
// recorded is to a request its policy accepted (the task's model, zerg's
// betas, no server tools), so a fatal or account answer among them is
// everybody's problem, whichever answer came last; what a worker can
// provoke on its own (a malformed request, a refused one, its own budget)
// is its task's failure. Usage and cost are the gateway's.
func judgeGateway(res *Verdict, out claude.Outcome, st gateway.Stats, stopped bool) {
	res.Worker.Usage = claude.Usage{InputTokens: st.Usage.InputTokens, OutputTokens: st.Usage.OutputTokens,
		CacheReadInputTokens: st.Usage.CacheReadTokens, CacheCreationInputTokens: st.Usage.CacheWriteTokens}
	res.Worker.CostUSD = st.CostUSD
	v := judgeAPI(st)
	// A policy refusal before any answer of the model reached the sandbox
	// refused the CLI's own request (nothing else had run there): the
	// run's settings against this CLI release, never the task's doing.
	refused, cliRefused := 0, 0
	var cliFirst gateway.Refusal
	for _, r := range st.Refused {
		switch {
		case r.Kind != gateway.RefusedPolicy:
		case r.First:
			if cliRefused == 0 {
				cliFirst = r
			}
			cliRefused++
		default:
			refused++
		}
	}
	forged := func(what string) {
		res.Class, res.Reason = outcome.Task, outcome.ReasonForgedResult
		res.Detail = fmt.Sprintf("the worker's result claimed %s the API never gave: %s", what, textx.Clip(textx.OneLine(out.Detail), 200))
	}
	switch {
	case stopped:
		res.Class, res.Reason, res.Detail = outcome.Infra, outcome.ReasonCancelled, "the run was stopped"
	case out.Reason == outcome.ReasonStartFailed:
		// zerg's own observation: the sandbox or the CLI did not start.
		res.Class, res.Reason, res.Detail = outcome.Infra, out.Reason, WorkerDetail(out)
		if out.Class == outcome.Fatal {
			res.Class = outcome.Fatal
		}
	case v.account.reason != "":
		res.Class, res.Reason, res.Detail = outcome.Account, v.account.reason, v.account.detail()
		res.Reset = st.Reset
		if res.Reset == "" {
			res.Reset = claude.ResetFromText(v.account.err.Message)
		}
	case v.fatal.reason != "":
		res.Class, res.Reason, res.Detail = outcome.Fatal, v.fatal.reason, v.fatal.detail()
	case st.BudgetStop == gateway.BudgetTask:
		res.Class, res.Reason = outcome.Task, outcome.ReasonMaxBudget
		res.Detail = fmt.Sprintf("the gateway refused further requests: the task's budget is spent ($%.4f at the API's usage); do the task in fewer turns", st.CostUSD)
	case st.BudgetStop == gateway.BudgetRun:
		res.Class, res.Reason = outcome.Infra, outcome.ReasonRunBudget
		res.Detail = "the gateway refused further requests: budget.run_usd is spent"
	case refused > 0:
		// After the model's first answer: code the model had run may have
		// sent them.
		var r gateway.Refusal
		for _, r = range st.Refused {
			if r.Kind == gateway.RefusedPolicy && !r.First {
				break
			}
		}
		res.Class, res.Reason = outcome.Task, outcome.ReasonGatewayRefused
		res.Detail = fmt.Sprintf("the gateway refused %d request(s) from the sandbox after the model's first answer, first %s %s: %s; the worker may only use the model API as its CLI does",
			refused+st.RefusedOmitted, r.Method, r.Path, textx.Clip(r.Reason, 200))
	case cliRefused > 0 && out.Class != outcome.Success:
		// (When the CLI went on and finished, the refused request was not
		// one it needed.)
		res.Class, res.Reason = outcome.Infra, outcome.ReasonCLIRefused
		res.Detail = CLIRefusedDetail(cliFirst)
	case v.task.reason != "":
		// A request the API refused on its own (malformed, too large): the
		// worker's request, the worker's task.
		res.Class, res.Reason, res.Detail = outcome.Task, v.task.reason, v.task.detail()
	case st.UpstreamFailures > 0 && out.Class != outcome.Success && out.Class != outcome.Task:
		// The gateway could not reach the API: the run's infrastructure.
		res.Class, res.Reason = outcome.Infra, outcome.ReasonAPIUnreachable
		res.Detail = "the gateway could not reach the model API: " + textx.Clip(st.LastError, 300)
	case st.UpstreamTimeouts > 0 && out.Class != outcome.Success && out.Class != outcome.Task:
		// The API sent nothing for as long as the worker waits: the API's
		// slowness, not the worker's and not an unreachable API.
		res.Class, res.Reason = outcome.Infra, outcome.ReasonTimeout
		res.Detail = fmt.Sprintf("the model API did not answer %d request(s) within the worker's API timeout: %s", st.UpstreamTimeouts, textx.Clip(st.LastError, 300))
	case out.Class == outcome.Fatal || out.Class == outcome.Account:
		forged("a fatal or account error")
	case out.Class == outcome.Infra && apiReasons[out.Reason] && !v.trouble:
		// Rate limits, overloads and server errors are the API's to report.
		forged("an API failure (" + out.Reason + ")")
	case out.Class == outcome.Infra:
		res.Class, res.Reason, res.Detail = outcome.Infra, out.Reason, WorkerDetail(out)
	case out.Class == outcome.Task:
		res.Class, res.Reason, res.Detail = outcome.Task, out.Reason, WorkerDetail(out)
	case out.Class == outcome.Success:
		res.Class, res.Reason = outcome.Success, outcome.ReasonCompleted
	default:
		res.Class, res.Reason, res.Detail = outcome.Infra, outcome.ReasonUnknown, WorkerDetail(out)
	}
}

// CLIRefusedDetail says that the gateway refused the CLI's own request,
// why, and what to change.
func CLIRefusedDetail(r gateway.Refusal) string {
	d := fmt.Sprintf("zerg's gateway refused the CLI's own request (%s %s, before the model had answered anything): %s", r.Method, r.Path, textx.Clip(r.Reason, 300))
	if r.Fix != "" {
		d += "; " + textx.Clip(r.Fix, 300)
	}
	return d
}

// apiVerdict is what the API's own answers of an attempt say: the first
// answer of each severity, and whether any was passing trouble.
type apiVerdict struct {
	account, fatal, task apiAnswer
	trouble              bool // a rate limit, an overload or a server error
}

// apiAnswer is one of the API's error answers and the reason it gives.
type apiAnswer struct {
	reason string // "" when there is none
	err    gateway.APIError
}

func (a apiAnswer) detail() string {
	return fmt.Sprintf("the API answered %d: %s", a.err.Status, textx.Clip(formatAPIError(a.err), 300))
}

// judgeAPI reads the gateway's record of the API's error answers. The
// most severe one decides (an account answer over a fatal one over a
// task's), not the last: code in the sandbox can choose which answer
// comes last, not what the API says to the CLI's requests.
func judgeAPI(st gateway.Stats) apiVerdict {
	var v apiVerdict
	for code, n := range st.Statuses {
		if n > 0 && (code == 429 || code == 529 || code >= 500) {
			v.trouble = true
		}
	}
	set := func(a *apiAnswer, reason string, e gateway.APIError) {
		if a.reason == "" {
			*a = apiAnswer{reason, e}
		}
	}
	for _, e := range st.APIErrors {
		class, reason := outcome.ClassifyAPIError(outcome.APIError{Status: e.Status, Type: e.Type, Message: e.Message})
		switch {
		case class == outcome.Account:
			set(&v.account, reason, e)
		case reason == outcome.ReasonBadRequest:
			// Fatal for the CLI's own request, but code in the sandbox can
			// send a request the policy accepts and the API finds
			// malformed: here it is the task's.
			set(&v.task, reason, e)
		case class == outcome.Fatal:
			set(&v.fatal, reason, e)
		case class == outcome.Task:
			set(&v.task, reason, e)
		case apiReasons[reason]:
			v.trouble = true
		}
	}
	return v
}

func formatAPIError(e gateway.APIError) string {
	if e.Type == "" {
		return e.Message
	}
	return e.Type + ": " + e.Message
}

// priceUsage prices what the gateway saw at the model the request named.
func priceUsage(model string, u gateway.Usage) float64 {
	return claude.CostUSD(model, claude.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadInputTokens: u.CacheReadTokens, CacheCreationInputTokens: u.CacheWriteTokens})
}

// apiReasons are the infra reasons only the API can cause: in sandbox mode
// the gateway must have seen them. (Stalls, crashes and kills are zerg's
// own observations.)
var apiReasons = map[string]bool{outcome.ReasonRateLimit: true, outcome.ReasonOverloaded: true, outcome.ReasonServerError: true}
