package driver

import (
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/outcome"
)

// In sandbox mode the worker's stream is the worker's word (code in the
// sandbox can write to it); what the API said comes from the gateway, and
// only about requests its policy accepted. A fatal or API failure class
// needs the gateway's confirmation; what a worker can provoke itself is
// its task's failure.
func TestJudgeGateway(t *testing.T) {
	ok := gateway.Stats{Statuses: map[int]int{200: 3}, LastStatus: 200}
	apiSaid := func(status int, typ, msg string, statuses map[int]int) gateway.Stats {
		return gateway.Stats{Statuses: statuses, APIErrors: []gateway.APIError{{Status: status, Type: typ, Message: msg}}}
	}
	refused := gateway.Stats{Statuses: map[int]int{200: 2}, Refused: []gateway.Refusal{{Kind: gateway.RefusedPolicy, Method: "POST", Path: "/v1/messages", Reason: `model "x" is not this task's`}}}
	cliOwn := gateway.Refusal{Kind: gateway.RefusedPolicy, Method: "POST", Path: "/v1/messages", First: true,
		Reason: "max_tokens 128000 is above the cap of 64000 (gateway.max_tokens)", Fix: "set gateway.max_tokens in .zerg/config.yaml to at least 128000"}
	cliRefused := gateway.Stats{Statuses: map[int]int{}, Refused: []gateway.Refusal{cliOwn, cliOwn}}
	both := gateway.Stats{Statuses: map[int]int{200: 1}, Refused: []gateway.Refusal{cliOwn, refused.Refused[0]}}
	for _, tc := range []struct {
		name    string
		out     claude.Outcome
		st      gateway.Stats
		stopped bool
		class   outcome.Class
		reason  string
	}{
		{"success", claude.Outcome{Class: outcome.Success}, ok, false, outcome.Success, "completed"},
		{"max turns is the task's", claude.Outcome{Class: outcome.Task, Reason: outcome.ReasonMaxTurns}, ok, false, outcome.Task, outcome.ReasonMaxTurns},
		{"a real bad key", claude.Outcome{Class: outcome.Account, Reason: outcome.ReasonAuth},
			apiSaid(401, "authentication_error", "invalid x-api-key", map[int]int{401: 1}), false, outcome.Account, outcome.ReasonAuth},
		{"the API refused although the stream says success", claude.Outcome{Class: outcome.Success},
			apiSaid(401, "authentication_error", "invalid x-api-key", map[int]int{401: 1}), false, outcome.Account, outcome.ReasonAuth},
		{"a forged bad key", claude.Outcome{Class: outcome.Account, Reason: outcome.ReasonAuth, Detail: "Invalid API key"}, ok, false, outcome.Task, "forged_result"},
		{"credit exhausted", claude.Outcome{Class: outcome.Account, Reason: outcome.ReasonCredit},
			apiSaid(400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API.", map[int]int{200: 3, 400: 1}), false, outcome.Account, outcome.ReasonCredit},
		{"a usage limit, whatever the stream says", claude.Outcome{Class: outcome.Infra, Reason: outcome.ReasonRateLimit},
			apiSaid(429, "rate_limit_error", "You have reached your specified API usage limits.", map[int]int{429: 1}), false, outcome.Account, outcome.ReasonUsageLimit},
		{"a forged credit error", claude.Outcome{Class: outcome.Account, Reason: outcome.ReasonCredit}, ok, false, outcome.Task, "forged_result"},
		{"credit balance in a message that does not start with it", claude.Outcome{Class: outcome.Fatal, Reason: outcome.ReasonBadRequest},
			apiSaid(400, "invalid_request_error", "messages.0: credit balance is too low", map[int]int{400: 1}), false, outcome.Task, outcome.ReasonBadRequest},
		// The 403 class (outcome.ClassifyAPIError): the API's
		// permission_error is the key's, as a 401 (it was fatal/forbidden
		// here); any other 403 is something in front of the API, fatal.
		{"a 403 permission_error is the account's", claude.Outcome{Class: outcome.Account, Reason: outcome.ReasonAuth},
			apiSaid(403, "permission_error", "Your API key does not have permission to use the specified resource.", map[int]int{403: 1}), false, outcome.Account, outcome.ReasonAuth},
		{"a 403 that is not the API's is fatal", claude.Outcome{Class: outcome.Fatal, Reason: outcome.ReasonForbidden},
			apiSaid(403, "", "<html>403 Forbidden</html>", map[int]int{403: 1}), false, outcome.Fatal, outcome.ReasonForbidden},
		// A 400 naming a usage limit is the account's, as docs/cost.md says
		// (it was the task's bad request here).
		{"a 400 usage limit", claude.Outcome{Class: outcome.Account, Reason: outcome.ReasonUsageLimit},
			apiSaid(400, "invalid_request_error", "You have reached your specified API usage limits. You will regain access on 2030-07-01 at 00:00 UTC.", map[int]int{400: 1}), false, outcome.Account, outcome.ReasonUsageLimit},
		{"the task's model does not exist", claude.Outcome{Class: outcome.Fatal, Reason: outcome.ReasonModelNotFound},
			apiSaid(404, "not_found_error", "model: x", map[int]int{404: 1}), false, outcome.Fatal, outcome.ReasonModelNotFound},
		{"a malformed request is the task's", claude.Outcome{Class: outcome.Fatal, Reason: outcome.ReasonBadRequest},
			apiSaid(400, "invalid_request_error", "messages: roles must alternate", map[int]int{200: 2, 400: 1}), false, outcome.Task, outcome.ReasonBadRequest},
		{"an account answer decides although another came last", claude.Outcome{Class: outcome.Fatal},
			gateway.Stats{Statuses: map[int]int{401: 1, 400: 1}, APIErrors: []gateway.APIError{{Status: 401, Type: "authentication_error"}, {Status: 400, Type: "invalid_request_error", Message: "x"}}}, false, outcome.Account, outcome.ReasonAuth},
		{"a request the gateway refused", claude.Outcome{Class: outcome.Success}, refused, false, outcome.Task, outcome.ReasonGatewayRefused},
		{"a refused model with a forged account result", claude.Outcome{Class: outcome.Account, Reason: outcome.ReasonCredit}, refused, false, outcome.Task, outcome.ReasonGatewayRefused},
		{"the CLI's own request refused before any answer is the run's settings", claude.Outcome{Class: outcome.Fatal, Reason: outcome.ReasonBadRequest}, cliRefused, false, outcome.Infra, outcome.ReasonCLIRefused},
		{"the CLI's own request refused, and it went on to finish", claude.Outcome{Class: outcome.Success}, cliRefused, false, outcome.Success, outcome.ReasonCompleted},
		{"a refusal after the model's answer is the task's, whatever came first", claude.Outcome{Class: outcome.Success}, both, false, outcome.Task, outcome.ReasonGatewayRefused},
		{"count_tokens past its rate is not a failure", claude.Outcome{Class: outcome.Success},
			gateway.Stats{Statuses: map[int]int{200: 2}, Refused: []gateway.Refusal{{Kind: gateway.RefusedRate}}}, false, outcome.Success, "completed"},
		{"the task's budget spent at the gateway", claude.Outcome{Class: outcome.Fatal, Reason: outcome.ReasonBadRequest},
			gateway.Stats{Statuses: map[int]int{200: 6}, BudgetStop: gateway.BudgetTask, CostUSD: 0.51}, false, outcome.Task, outcome.ReasonMaxBudget},
		{"the run's budget spent at the gateway", claude.Outcome{Class: outcome.Fatal, Reason: outcome.ReasonBadRequest},
			gateway.Stats{Statuses: map[int]int{200: 6}, BudgetStop: gateway.BudgetRun}, false, outcome.Infra, outcome.ReasonRunBudget},
		{"the gateway could not reach the API", claude.Outcome{Class: outcome.Infra, Reason: outcome.ReasonServerError, Detail: "502 zerg gateway: upstream request failed"},
			gateway.Stats{Statuses: map[int]int{}, UpstreamFailures: 3, LastError: "zerg gateway: upstream request failed: connection refused"}, false, outcome.Infra, outcome.ReasonAPIUnreachable},
		{"the API answered nothing within the worker's timeout", claude.Outcome{Class: outcome.Infra, Reason: outcome.ReasonTimeout, Detail: "Request timed out"},
			gateway.Stats{Statuses: map[int]int{200: 4}, UpstreamTimeouts: 3, LastError: "zerg gateway: the model API sent no answer in 30s, the worker's API timeout"}, false, outcome.Infra, outcome.ReasonTimeout},
		{"the API answered nothing in time, and the worker says it failed", claude.Outcome{Class: outcome.Fatal, Reason: outcome.ReasonAPIError, Detail: "API Error: Request was aborted."},
			gateway.Stats{Statuses: map[int]int{200: 4}, UpstreamTimeouts: 1, LastError: "zerg gateway: the model API sent no answer in 30s, the worker's API timeout"}, false, outcome.Infra, outcome.ReasonTimeout},
		{"a real rate limit", claude.Outcome{Class: outcome.Infra, Reason: outcome.ReasonRateLimit},
			gateway.Stats{Statuses: map[int]int{200: 1, 429: 2}}, false, outcome.Infra, outcome.ReasonRateLimit},
		{"a real overload", claude.Outcome{Class: outcome.Infra, Reason: outcome.ReasonOverloaded},
			gateway.Stats{Statuses: map[int]int{529: 1}}, false, outcome.Infra, outcome.ReasonOverloaded},
		{"an overload in the stream", claude.Outcome{Class: outcome.Infra, Reason: outcome.ReasonOverloaded},
			apiSaid(200, "overloaded_error", "Overloaded", map[int]int{200: 1}), false, outcome.Infra, outcome.ReasonOverloaded},
		{"a real server error", claude.Outcome{Class: outcome.Infra, Reason: outcome.ReasonServerError},
			gateway.Stats{Statuses: map[int]int{503: 1}}, false, outcome.Infra, outcome.ReasonServerError},
		{"a forged rate limit", claude.Outcome{Class: outcome.Infra, Reason: outcome.ReasonRateLimit}, ok, false, outcome.Task, "forged_result"},
		{"a stall is zerg's own observation", claude.Outcome{Class: outcome.Infra, Reason: outcome.ReasonStalled}, ok, false, outcome.Infra, outcome.ReasonStalled},
		{"the sandbox did not start", claude.Outcome{Class: outcome.Infra, Reason: outcome.ReasonStartFailed}, gateway.Stats{}, false, outcome.Infra, outcome.ReasonStartFailed},
		{"a bad launch spec", claude.Outcome{Class: outcome.Fatal, Reason: outcome.ReasonStartFailed}, gateway.Stats{}, false, outcome.Fatal, outcome.ReasonStartFailed},
		{"stopped", claude.Outcome{Class: outcome.Fatal}, ok, true, outcome.Infra, "cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var res Verdict
			judgeGateway(&res, tc.out, tc.st, tc.stopped)
			if res.Class != tc.class || res.Reason != tc.reason {
				t.Errorf("got %s/%s, want %s/%s (%s)", res.Class, res.Reason, tc.class, tc.reason, res.Detail)
			}
		})
	}
}

// Usage and cost are the gateway's, whatever the stream claims.
func TestSandboxedCostIsTheGateways(t *testing.T) {
	var res Verdict
	out := claude.Outcome{Class: outcome.Success, CostUSD: 0.000001, Usage: claude.Usage{InputTokens: 1}}
	st := gateway.Stats{Statuses: map[int]int{200: 1}, Usage: gateway.Usage{InputTokens: 1_000_000, OutputTokens: 100_000}, CostUSD: 4.5}
	judgeGateway(&res, out, st, false)
	if res.Worker.Usage.InputTokens != 1_000_000 || res.Worker.CostUSD != 4.5 {
		t.Errorf("usage %+v cost $%.4f, want the gateway's 1M in and $4.50", res.Worker.Usage, res.Worker.CostUSD)
	}
	if got := priceUsage("claude-sonnet-5", gateway.Usage{InputTokens: 1_000_000, OutputTokens: 100_000}); got < 4.49 || got > 4.51 {
		t.Errorf("priceUsage at sonnet: $%.4f, want $4.50", got)
	}
	if got := priceUsage("claude-opus-4-8", gateway.Usage{InputTokens: 1_000_000}); got != 5 {
		t.Errorf("priceUsage at opus: $%.4f, want $5 (the requested model's price)", got)
	}
}

// The CLI's own refused request names the setting and the fix, and is
// not blamed on the worker.
func TestJudgeCLIRefusedSaysTheFix(t *testing.T) {
	st := gateway.Stats{Statuses: map[int]int{}, Refused: []gateway.Refusal{{Kind: gateway.RefusedPolicy, Method: "POST", Path: "/v1/messages", First: true,
		Reason: `beta feature "x-2027-01-01" is not one zerg has reviewed (gateway.strict)`, Fix: `add "x-2027-01-01" to gateway.betas`}}}
	var res Verdict
	judgeGateway(&res, claude.Outcome{Class: outcome.Fatal, Reason: outcome.ReasonBadRequest}, st, false)
	for _, want := range []string{"CLI's own request", "gateway.strict", `add "x-2027-01-01" to gateway.betas`} {
		if !strings.Contains(res.Detail, want) {
			t.Errorf("detail %q does not say %q", res.Detail, want)
		}
	}
	if strings.Contains(res.Detail, "the worker may only") {
		t.Errorf("detail blames the worker: %q", res.Detail)
	}
}
