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
// sandbox can write to it); what the API said comes from the gateway. A
// fatal or API failure class needs the gateway's confirmation.
func TestClassifySandboxed(t *testing.T) {
	ok := gateway.Stats{Statuses: map[int]int{200: 3}, LastStatus: 200}
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
			gateway.Stats{Statuses: map[int]int{401: 1}, LastStatus: 401, LastError: "authentication_error"}, false, Account, claude.ReasonAuth},
		{"the API refused although the stream says success", claude.Outcome{Class: claude.ClassSuccess},
			gateway.Stats{Statuses: map[int]int{401: 1}, LastStatus: 401}, false, Account, claude.ReasonAuth},
		{"a forged bad key", claude.Outcome{Class: claude.ClassAccount, Reason: claude.ReasonAuth, Detail: "Invalid API key"}, ok, false, Task, "forged_result"},
		{"credit exhausted", claude.Outcome{Class: claude.ClassAccount, Reason: claude.ReasonCredit},
			gateway.Stats{Statuses: map[int]int{200: 3, 400: 1}, LastStatus: 400, LastError: "invalid_request_error: Your credit balance is too low to access the Anthropic API."}, false, Account, claude.ReasonCredit},
		{"a usage limit, whatever the stream says", claude.Outcome{Class: claude.ClassInfra, Reason: claude.ReasonRateLimit},
			gateway.Stats{Statuses: map[int]int{429: 1}, LastStatus: 429, LastError: "rate_limit_error: You have reached your specified API usage limits.", Reset: "2030-07-01T00:00:00Z"}, false, Account, claude.ReasonUsageLimit},
		{"a forged credit error", claude.Outcome{Class: claude.ClassAccount, Reason: claude.ReasonCredit}, ok, false, Task, "forged_result"},
		{"a model that does not exist", claude.Outcome{Class: claude.ClassFatal, Reason: claude.ReasonModelNotFound},
			gateway.Stats{Statuses: map[int]int{404: 1}, LastStatus: 404, LastError: "not_found_error: model: x"}, false, Fatal, claude.ReasonModelNotFound},
		{"a real rate limit", claude.Outcome{Class: claude.ClassInfra, Reason: claude.ReasonRateLimit},
			gateway.Stats{Statuses: map[int]int{200: 1, 429: 2}}, false, Infra, claude.ReasonRateLimit},
		{"a real overload", claude.Outcome{Class: claude.ClassInfra, Reason: claude.ReasonOverloaded},
			gateway.Stats{Statuses: map[int]int{529: 1}}, false, Infra, claude.ReasonOverloaded},
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
			classifySandboxed(&res, tc.out, tc.st, "sonnet", tc.stopped)
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
	st := gateway.Stats{Statuses: map[int]int{200: 1}, Usage: gateway.Usage{InputTokens: 1_000_000, OutputTokens: 100_000}}
	classifySandboxed(&res, out, st, "claude-sonnet-5", false)
	if res.Worker.Usage.InputTokens != 1_000_000 || res.Worker.CostUSD < 4.49 || res.Worker.CostUSD > 4.51 {
		t.Errorf("usage %+v cost $%.4f, want the gateway's 1M in / 100k out at sonnet prices ($4.50)", res.Worker.Usage, res.Worker.CostUSD)
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
