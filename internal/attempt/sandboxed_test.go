package attempt

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/security"
)

// In sandbox mode the worker's stream is the worker's word (code in the
// sandbox can write to it); what the API said comes from the gateway, and
// only about requests its policy accepted. A fatal or API failure class
// needs the gateway's confirmation; what a worker can provoke itself is
// its task's failure.
func TestClassifySandboxed(t *testing.T) {
	ok := gateway.Stats{Statuses: map[int]int{200: 3}, LastStatus: 200}
	apiSaid := func(status int, typ, msg string, statuses map[int]int) gateway.Stats {
		return gateway.Stats{Statuses: statuses, APIErrors: []gateway.APIError{{Status: status, Type: typ, Message: msg}}}
	}
	refused := gateway.Stats{Statuses: map[int]int{200: 2}, Refused: []gateway.Refusal{{Kind: gateway.RefusedPolicy, Method: "POST", Path: "/v1/messages", Reason: `model "x" is not this task's`}}}
	for _, tc := range []struct {
		name    string
		out     claude.Outcome
		st      gateway.Stats
		stopped bool
		class   Class
		reason  string
	}{
		{"success", claude.Outcome{Class: claude.ClassSuccess}, ok, false, Success, "completed"},
		{"max turns is the task's", claude.Outcome{Class: claude.ClassTask, Reason: claude.ReasonMaxTurns}, ok, false, Task, claude.ReasonMaxTurns},
		{"a real bad key", claude.Outcome{Class: claude.ClassAccount, Reason: claude.ReasonAuth},
			apiSaid(401, "authentication_error", "invalid x-api-key", map[int]int{401: 1}), false, Account, claude.ReasonAuth},
		{"the API refused although the stream says success", claude.Outcome{Class: claude.ClassSuccess},
			apiSaid(401, "authentication_error", "invalid x-api-key", map[int]int{401: 1}), false, Account, claude.ReasonAuth},
		{"a forged bad key", claude.Outcome{Class: claude.ClassAccount, Reason: claude.ReasonAuth, Detail: "Invalid API key"}, ok, false, Task, "forged_result"},
		{"credit exhausted", claude.Outcome{Class: claude.ClassAccount, Reason: claude.ReasonCredit},
			apiSaid(400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API.", map[int]int{200: 3, 400: 1}), false, Account, claude.ReasonCredit},
		{"a usage limit, whatever the stream says", claude.Outcome{Class: claude.ClassInfra, Reason: claude.ReasonRateLimit},
			apiSaid(429, "rate_limit_error", "You have reached your specified API usage limits.", map[int]int{429: 1}), false, Account, claude.ReasonUsageLimit},
		{"a forged credit error", claude.Outcome{Class: claude.ClassAccount, Reason: claude.ReasonCredit}, ok, false, Task, "forged_result"},
		{"credit balance in a message that does not start with it", claude.Outcome{Class: claude.ClassFatal, Reason: claude.ReasonBadRequest},
			apiSaid(400, "invalid_request_error", "messages.0: credit balance is too low", map[int]int{400: 1}), false, Task, claude.ReasonBadRequest},
		{"the task's model does not exist", claude.Outcome{Class: claude.ClassFatal, Reason: claude.ReasonModelNotFound},
			apiSaid(404, "not_found_error", "model: x", map[int]int{404: 1}), false, Fatal, claude.ReasonModelNotFound},
		{"a malformed request is the task's", claude.Outcome{Class: claude.ClassFatal, Reason: claude.ReasonBadRequest},
			apiSaid(400, "invalid_request_error", "messages: roles must alternate", map[int]int{200: 2, 400: 1}), false, Task, claude.ReasonBadRequest},
		{"an account answer decides although another came last", claude.Outcome{Class: claude.ClassFatal},
			gateway.Stats{Statuses: map[int]int{401: 1, 400: 1}, APIErrors: []gateway.APIError{{Status: 401, Type: "authentication_error"}, {Status: 400, Type: "invalid_request_error", Message: "x"}}}, false, Account, claude.ReasonAuth},
		{"a request the gateway refused", claude.Outcome{Class: claude.ClassSuccess}, refused, false, Task, claude.ReasonGatewayRefused},
		{"a refused model with a forged account result", claude.Outcome{Class: claude.ClassAccount, Reason: claude.ReasonCredit}, refused, false, Task, claude.ReasonGatewayRefused},
		{"count_tokens past its rate is not a failure", claude.Outcome{Class: claude.ClassSuccess},
			gateway.Stats{Statuses: map[int]int{200: 2}, Refused: []gateway.Refusal{{Kind: gateway.RefusedRate}}}, false, Success, "completed"},
		{"the task's budget spent at the gateway", claude.Outcome{Class: claude.ClassFatal, Reason: claude.ReasonBadRequest},
			gateway.Stats{Statuses: map[int]int{200: 6}, BudgetStop: gateway.BudgetTask, CostUSD: 0.51}, false, Task, claude.ReasonMaxBudget},
		{"the run's budget spent at the gateway", claude.Outcome{Class: claude.ClassFatal, Reason: claude.ReasonBadRequest},
			gateway.Stats{Statuses: map[int]int{200: 6}, BudgetStop: gateway.BudgetRun}, false, Infra, claude.ReasonRunBudget},
		{"the gateway could not reach the API", claude.Outcome{Class: claude.ClassInfra, Reason: claude.ReasonServerError, Detail: "502 zerg gateway: upstream request failed"},
			gateway.Stats{Statuses: map[int]int{}, UpstreamFailures: 3, LastError: "zerg gateway: upstream request failed: connection refused"}, false, Infra, claude.ReasonAPIUnreachable},
		{"a real rate limit", claude.Outcome{Class: claude.ClassInfra, Reason: claude.ReasonRateLimit},
			gateway.Stats{Statuses: map[int]int{200: 1, 429: 2}}, false, Infra, claude.ReasonRateLimit},
		{"a real overload", claude.Outcome{Class: claude.ClassInfra, Reason: claude.ReasonOverloaded},
			gateway.Stats{Statuses: map[int]int{529: 1}}, false, Infra, claude.ReasonOverloaded},
		{"an overload in the stream", claude.Outcome{Class: claude.ClassInfra, Reason: claude.ReasonOverloaded},
			apiSaid(200, "overloaded_error", "Overloaded", map[int]int{200: 1}), false, Infra, claude.ReasonOverloaded},
		{"a real server error", claude.Outcome{Class: claude.ClassInfra, Reason: claude.ReasonServerError},
			gateway.Stats{Statuses: map[int]int{503: 1}}, false, Infra, claude.ReasonServerError},
		{"a forged rate limit", claude.Outcome{Class: claude.ClassInfra, Reason: claude.ReasonRateLimit}, ok, false, Task, "forged_result"},
		{"a stall is zerg's own observation", claude.Outcome{Class: claude.ClassInfra, Reason: claude.ReasonStalled}, ok, false, Infra, claude.ReasonStalled},
		{"the sandbox did not start", claude.Outcome{Class: claude.ClassInfra, Reason: claude.ReasonStartFailed}, gateway.Stats{}, false, Infra, claude.ReasonStartFailed},
		{"a bad launch spec", claude.Outcome{Class: claude.ClassFatal, Reason: claude.ReasonStartFailed}, gateway.Stats{}, false, Fatal, claude.ReasonStartFailed},
		{"stopped", claude.Outcome{Class: claude.ClassFatal}, ok, true, Infra, "cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var res Result
			classifySandboxed(&res, tc.out, tc.st, tc.stopped)
			if res.Class != tc.class || res.Reason != tc.reason {
				t.Errorf("got %s/%s, want %s/%s (%s)", res.Class, res.Reason, tc.class, tc.reason, res.Detail)
			}
		})
	}
}

// Usage and cost are the gateway's, whatever the stream claims.
func TestSandboxedCostIsTheGateways(t *testing.T) {
	var res Result
	out := claude.Outcome{Class: claude.ClassSuccess, CostUSD: 0.000001, Usage: claude.Usage{InputTokens: 1}}
	st := gateway.Stats{Statuses: map[int]int{200: 1}, Usage: gateway.Usage{InputTokens: 1_000_000, OutputTokens: 100_000}, CostUSD: 4.5}
	classifySandboxed(&res, out, st, false)
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

// A tool input that holds a secret is not written to the audit log.
func TestScreenToolInput(t *testing.T) {
	sc, err := security.NewScanner()
	if err != nil {
		t.Fatal(err)
	}
	key := "sk-ant-" + "api03-" + strings.Repeat("Zq7Xw2Lp9Rt4", 7) + "AbCdEfGhIjK-AA"
	in := Input{Scanner: sc, Sandbox: &Sandboxed{APIKey: "the-real-key-of-the-gateway-0123456789"}}
	for _, tc := range []struct {
		input string
		kept  bool
	}{
		{`{"file_path":"a.txt","content":"hello"}`, true},
		{`{"file_path":"k.txt","content":"` + key + `"}`, false},
		{`{"command":"echo ` + base64.StdEncoding.EncodeToString([]byte("the-real-key-of-the-gateway-0123456789")) + `"}`, false},
	} {
		got := string(in.screenToolInput(json.RawMessage(tc.input)))
		if (got == tc.input) != tc.kept {
			t.Errorf("%s → %s", tc.input, got)
		}
	}
}

// A workspace problem does not turn a stop, an infra or a fatal outcome
// into a task failure that spends a retry.
func TestFailTaskKeepsAnEarlierOutcome(t *testing.T) {
	for _, c := range []Class{Infra, Fatal} {
		got := failTask(Result{Class: c, Reason: "r", Detail: "d"}, "workspace", "broken .git")
		if got.Class != c || got.Reason != "r" {
			t.Errorf("%s became %s/%s", c, got.Class, got.Reason)
		}
	}
	if got := failTask(Result{Class: Success, Reason: "completed"}, "workspace", "x"); got.Class != Task || got.Reason != "workspace" {
		t.Errorf("success: %+v", got)
	}
}
