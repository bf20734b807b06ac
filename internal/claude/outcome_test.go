package claude

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/sandbox"
)

// replay folds captured lines into a state the way Run does and classifies.
func replay(lines [][]byte, pf procFacts, signalAfter int) Outcome {
	st := newState(time.Now())
	for i, l := range lines {
		if i == signalAfter {
			st.markSignalled()
		}
		ev := ParseLine(l)
		ev.Time = time.Now()
		st.observe(ev)
	}
	if signalAfter >= len(lines) {
		st.markSignalled()
	}
	return st.outcome(pf)
}

func TestClassifyCapturedStreams(t *testing.T) {
	cases := []struct {
		stream string
		exit   int
		class  outcome.Class
		reason string
		detail string
	}{
		{"happy", 0, outcome.Success, outcome.ReasonCompleted, "Done: hello.txt says hello."},
		{"hook", 0, outcome.Success, outcome.ReasonCompleted, "done"},
		{"429", 1, outcome.Infra, outcome.ReasonRateLimit, "Request rejected (429)"},
		{"500", 1, outcome.Infra, outcome.ReasonServerError, "500 Internal server error"},
		{"529", 1, outcome.Infra, outcome.ReasonOverloaded, "529 Overloaded"},
		{"stall", 1, outcome.Infra, outcome.ReasonTimeout, "Request timed out"},
		{"malformed", 1, outcome.Infra, outcome.ReasonMalformed, "Failed to parse JSON"},
		{"401", 1, outcome.Account, outcome.ReasonAuth, "Invalid API key"},
		{"notloggedin", 1, outcome.Account, outcome.ReasonAuth, "Not logged in"},
		{"404", 1, outcome.Fatal, outcome.ReasonModelNotFound, "issue with the selected model"},
		{"400", 1, outcome.Fatal, outcome.ReasonBadRequest, "400 scripted bad request"},
		{"413", 1, outcome.Task, outcome.ReasonTooLarge, "Request too large"},
		{"maxtokens", 1, outcome.Task, outcome.ReasonMaxOutputTokens, "output token maximum"},
		{"refusal", 1, outcome.Task, outcome.ReasonRefusal, "Usage Policy"},
		{"maxturns", 1, outcome.Task, outcome.ReasonMaxTurns, "maximum number of turns"},
		{"budget", 1, outcome.Task, outcome.ReasonMaxBudget, "maximum budget"},
	}
	for _, tc := range cases {
		t.Run(tc.stream, func(t *testing.T) {
			lines := streamLines(t, tc.stream)
			o := replay(lines, procFacts{exitCode: tc.exit}, len(lines)+1)
			if o.Class != tc.class || o.Reason != tc.reason {
				t.Fatalf("class %s/%s, want %s/%s (detail %q)", o.Class, o.Reason, tc.class, tc.reason, o.Detail)
			}
			if !strings.Contains(o.Detail, tc.detail) {
				t.Fatalf("detail %q does not contain %q", o.Detail, tc.detail)
			}
			if o.Result == nil || o.SessionID == "" || o.NumTurns == 0 {
				t.Fatalf("outcome lacks result facts: %+v", o)
			}
		})
	}
}

func TestOutcomeAccounting(t *testing.T) {
	o := replay(streamLines(t, "happy"), procFacts{}, 1<<30)
	if o.CostUSD != o.Result.TotalCostUSD || o.CostUSD <= 0 {
		t.Fatalf("cost %v", o.CostUSD)
	}
	if o.Usage.OutputTokens != 350 || o.Usage.InputTokens <= 5000 {
		t.Fatalf("usage %+v", o.Usage)
	}
	if mu := o.ModelUsage["claude-opus-4-8[1m]"]; mu.CostUSD != o.CostUSD {
		t.Fatalf("modelUsage %+v", o.ModelUsage)
	}
	if o.NumTurns != 5 || o.StopReason != "end_turn" || o.Model != "claude-opus-4-8" || o.APIErrorStatus != 0 {
		t.Fatalf("%+v", o)
	}
	o = replay(streamLines(t, "hook"), procFacts{}, 1<<30)
	if len(o.PermissionDenials) != 1 || o.PermissionDenials[0].ToolName != "Write" {
		t.Fatalf("denials %+v", o.PermissionDenials)
	}
	o = replay(streamLines(t, "429"), procFacts{exitCode: 1}, 1<<30)
	if o.APIErrorStatus != 429 || o.APIRetries != 1 || o.SyntheticError != "rate_limit" || o.ExitCode != 1 {
		t.Fatalf("%+v", o)
	}
}

func TestProgressFromStream(t *testing.T) {
	lines := streamLines(t, "happy")
	st := newState(time.Now())
	var before Progress
	for _, l := range lines {
		ev := ParseLine(l)
		ev.Time = time.Now()
		if ev.Result != nil {
			before = st.progress()
		}
		st.observe(ev)
	}
	if before.TokensFinal || before.Turns != 5 || before.ToolCalls["Write"] != 1 || before.ToolCalls["Edit"] != 1 ||
		before.ToolCalls["Read"] != 1 || before.ToolCalls["Bash"] != 1 || before.Model != "claude-opus-4-8" || before.SessionID == "" {
		t.Fatalf("progress before result %+v", before)
	}
	// The estimate counts each message's start usage once, not per block.
	if before.Tokens.InputTokens <= 0 || before.Tokens.OutputTokens <= 0 {
		t.Fatalf("estimate %+v", before.Tokens)
	}
	after := st.progress()
	if !after.TokensFinal || after.Tokens.OutputTokens != 350 || after.CostUSD <= 0 || after.LastEvent.IsZero() || after.Events != len(lines) {
		t.Fatalf("progress after result %+v", after)
	}
	// Snapshots are copies.
	after.ToolCalls["Write"] = 99
	if st.progress().ToolCalls["Write"] != 1 {
		t.Fatal("Progress shares its map")
	}
	rp := replayProgress(streamLines(t, "401"))
	if rp.APIRetries != 1 || rp.LastRetryStatus != 401 || rp.LastRetryError != "authentication_failed" {
		t.Fatalf("retries %+v", rp)
	}
}

func replayProgress(lines [][]byte) Progress {
	st := newState(time.Now())
	for _, l := range lines {
		st.observe(ParseLine(l))
	}
	return st.progress()
}

func TestClassifyProcessEnds(t *testing.T) {
	initOnly := streamLines(t, "happy")[:1]
	cases := []struct {
		name        string
		lines       [][]byte
		pf          procFacts
		signalAfter int
		class       outcome.Class
		reason      string
	}{
		// §6: SIGTERM during an API call prints only init and exits 143.
		{"sigterm from outside", initOnly, procFacts{exitCode: -1, signal: "terminated"}, 1 << 30, outcome.Infra, outcome.ReasonKilled},
		{"exit 143 no result", initOnly, procFacts{exitCode: 143}, 1 << 30, outcome.Infra, outcome.ReasonNoResult},
		{"nothing at all", nil, procFacts{exitCode: 0}, 1 << 30, outcome.Infra, outcome.ReasonNoResult},
		{"usage error", nil, procFacts{exitCode: 1, stderr: "error: unknown option '--bogus'\n"}, 1 << 30, outcome.Fatal, outcome.ReasonUsage},
		{"root bypass refused", nil, procFacts{exitCode: 1, stderr: "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n"}, 1 << 30, outcome.Fatal, outcome.ReasonUsage},
		// The sandbox's init could not exec the CLI: every worker would
		// fail the same way, so the run stops instead of retrying.
		{"no CLI in the sandbox", nil, procFacts{exitCode: 127, stderr: sandbox.StartFailureLine(errors.New("exec /x/.bin/claude: no such file or directory")) + "\n"}, 1 << 30, outcome.Fatal, outcome.ReasonStartFailed},
		{"exit 127 of the CLI itself", nil, procFacts{exitCode: 127, stderr: "sh: git: not found\n"}, 1 << 30, outcome.Infra, outcome.ReasonNoResult},
		{"bad session id", nil, procFacts{exitCode: 1, stderr: "Error: Invalid session ID. Must be a valid UUID.\n"}, 1 << 30, outcome.Fatal, outcome.ReasonUsage},
		{"stopped by us", initOnly, procFacts{exitCode: -1, signal: "terminated", stopCause: "stopped"}, 0, outcome.Infra, outcome.ReasonStopped},
		{"stalled", initOnly, procFacts{exitCode: -1, signal: "killed", stopCause: "stalled"}, 0, outcome.Infra, outcome.ReasonStalled},
		{"killed", initOnly, procFacts{exitCode: -1, signal: "killed", stopCause: "killed"}, 0, outcome.Infra, outcome.ReasonKilled},
		// A success printed after our signal raced the kill: do not trust it.
		{"result after our signal", streamLines(t, "happy"), procFacts{exitCode: 143, stopCause: "stopped"}, 3, outcome.Infra, outcome.ReasonStopped},
		// A result that arrived before we signalled stands.
		{"result before our signal", streamLines(t, "happy"), procFacts{exitCode: -1, signal: "terminated", stopCause: "stopped"}, 1 << 30, outcome.Success, outcome.ReasonCompleted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newState(time.Now())
			for i, l := range tc.lines {
				if i == tc.signalAfter {
					st.markSignalled()
				}
				st.observe(ParseLine(l))
			}
			if tc.signalAfter == 0 && len(tc.lines) == 0 {
				st.markSignalled()
			}
			o := st.outcome(tc.pf)
			if o.Class != tc.class || o.Reason != tc.reason {
				t.Fatalf("class %s/%s, want %s/%s (detail %q)", o.Class, o.Reason, tc.class, tc.reason, o.Detail)
			}
			if o.Stopped != (tc.pf.stopCause != "") {
				t.Fatalf("Stopped = %v", o.Stopped)
			}
		})
	}
}

// Lines the doc records (claude-cli.md §3, §5.2) for cases the scripted API
// does not produce the same way.
func TestClassifyDocumentedResults(t *testing.T) {
	res := func(status, text, stop string) string {
		st := "null"
		if status != "" {
			st = status
		}
		return `{"type":"result","subtype":"success","is_error":true,"api_error_status":` + st + `,"num_turns":1,"result":"` + text + `","stop_reason":"` + stop + `","session_id":"s","total_cost_usd":0}`
	}
	synth := func(kind, text string) string {
		return `{"type":"assistant","message":{"id":"x","model":"<synthetic>","role":"assistant","stop_reason":"stop_sequence","content":[{"type":"text","text":"` + text + `"}],"usage":{"input_tokens":0,"output_tokens":0}},"parent_tool_use_id":null,"session_id":"s","error":"` + kind + `"}`
	}
	cases := []struct {
		name   string
		lines  []string
		class  outcome.Class
		reason string
	}{
		{"repeated 529", []string{synth("server_error", "API Error: Repeated 529 Overloaded errors."), res("", "API Error: Repeated 529 Overloaded errors. The API is at capacity", "stop_sequence")}, outcome.Infra, outcome.ReasonOverloaded},
		{"connection refused", []string{synth("server_error", "x"), res("", "API Error: Unable to connect to API (ConnectionRefused)", "stop_sequence")}, outcome.Infra, outcome.ReasonConnection},
		{"stream idle timeout", []string{synth("unknown", "x"), res("", "API Error: The operation timed out.", "stop_sequence")}, outcome.Infra, outcome.ReasonTimeout},
		{"empty or malformed", []string{synth("unknown", "x"), res("", "API Error: API returned an empty or malformed response (HTTP 200) — check for a proxy", "stop_sequence")}, outcome.Infra, outcome.ReasonMalformed},
		{"502", []string{res("502", "API Error: 502 Bad Gateway", "stop_sequence")}, outcome.Infra, outcome.ReasonServerError},
		// A 403 that is not the API's permission_error: a proxy's refusal,
		// fatal (it was infra, retried for every task).
		{"403 from a proxy", []string{res("403", "API Error: 403 forbidden", "stop_sequence")}, outcome.Fatal, outcome.ReasonForbidden},
		{"403 permission_error as JSON", []string{res("403", `API Error: 403 {\"type\":\"error\",\"error\":{\"type\":\"permission_error\",\"message\":\"Your API key does not have permission to use the specified resource.\"}}`, "stop_sequence")}, outcome.Account, outcome.ReasonAuth},
		// Credit is the API's sentence at the start, not quoted inside
		// another answer (it was found anywhere).
		{"credit balance quoted in a 400", []string{res("400", "API Error: 400 messages.0: credit balance is too low", "stop_sequence")}, outcome.Fatal, outcome.ReasonBadRequest},
		{"prompt too long", []string{res("400", "API Error: 400 prompt is too long: 210000 tokens > 200000 maximum", "stop_sequence")}, outcome.Task, outcome.ReasonContextTooLong},
		{"billing", []string{synth("billing_error", "Credit balance is too low"), res("", "Credit balance is too low", "stop_sequence")}, outcome.Account, outcome.ReasonCredit},
		{"unknown api error", []string{res("", "something new", "stop_sequence")}, outcome.Infra, outcome.ReasonAPIError},
		// As the pinned CLI renders them (captured against zerg mockapi).
		{"credit 400", []string{synth("billing_error", "Credit balance is too low"), res("400", "Credit balance is too low", "stop_sequence")}, outcome.Account, outcome.ReasonCredit},
		{"usage limit 429", []string{synth("rate_limit", "x"), res("429", "API Error: Request rejected (429) · You have reached your specified API usage limits. You will regain access on 2030-07-01 at 00:00 UTC.", "stop_sequence")}, outcome.Account, outcome.ReasonUsageLimit},
		{"plain 429 passes", []string{synth("rate_limit", "x"), res("429", "API Error: Request rejected (429) · This request would exceed the rate limit for your organization", "stop_sequence")}, outcome.Infra, outcome.ReasonRateLimit},
		{"permission 403", []string{res("403", "API Error: 403 permission_error: Your API key does not have permission", "stop_sequence")}, outcome.Account, outcome.ReasonAuth},
		{"during execution", []string{`{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":1,"errors":["[ede_diagnostic] result_type=user"]}`}, outcome.Infra, outcome.ReasonAborted},
		{"structured output retries", []string{`{"type":"result","subtype":"error_max_structured_output_retries","is_error":true}`}, outcome.Task, outcome.ReasonStructuredOut},
		{"unknown subtype", []string{`{"type":"result","subtype":"error_new_kind","is_error":true}`}, outcome.Infra, outcome.ReasonUnknownResult},
		{"hook stopped", []string{`{"type":"result","subtype":"success","is_error":false,"result":"","terminal_reason":"hook_stopped"}`}, outcome.Success, "hook_stopped"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var lines [][]byte
			for _, l := range tc.lines {
				lines = append(lines, []byte(l))
			}
			o := replay(lines, procFacts{exitCode: 1}, 1<<30)
			if o.Class != tc.class || o.Reason != tc.reason {
				t.Fatalf("class %s/%s, want %s/%s", o.Class, o.Reason, tc.class, tc.reason)
			}
		})
	}
}

// TestRenderedAccountErrorsAndReset: the API's answer read back from the
// CLI's rendering, bare or after "API Error: NNN ", reaches the account
// class when the table says so.
func TestRenderedAccountErrorsAndReset(t *testing.T) {
	cases := []struct {
		status int
		text   string
		want   string
	}{
		{400, "invalid_request_error: Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.", outcome.ReasonCredit},
		{429, "rate_limit_error: You have reached your specified API usage limits. You will regain access on 2030-07-01 at 00:00 UTC.", outcome.ReasonUsageLimit},
		{403, "permission_error: organization usage limit reached", outcome.ReasonUsageLimit},
		{401, "authentication_error: invalid x-api-key", outcome.ReasonAuth},
		{403, "permission_error: key revoked", outcome.ReasonAuth},
		{429, "rate_limit_error: Number of request tokens has exceeded your per-minute rate limit", ""},
		{400, "invalid_request_error: messages: field required", ""},
		{403, "forbidden", ""},
	}
	for _, c := range cases {
		for _, text := range []string{c.text, fmt.Sprintf("API Error: %d %s", c.status, c.text)} {
			got := ""
			if class, reason := outcome.ClassifyAPIError(renderedAPIError(c.status, text)); class == outcome.Account {
				got = reason
			}
			if got != c.want {
				t.Errorf("%d %q: account reason %q, want %q (read as %+v)", c.status, text, got, c.want, renderedAPIError(c.status, text))
			}
		}
	}
	if got := ResetFromText("You will regain access on 2030-07-01 at 00:00 UTC."); got != "2030-07-01 at 00:00 UTC" {
		t.Errorf("reset %q", got)
	}
	if got := ResetFromText("Credit balance is too low"); got != "" {
		t.Errorf("reset %q", got)
	}
}

// A stream zerg recorded is read back into the outcome it would have had,
// once it holds the result; a stream cut before its result is not.
func TestRecorded(t *testing.T) {
	result := `{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"done","total_cost_usd":0.01,"session_id":"s","usage":{"input_tokens":10,"output_tokens":5}}`
	stream := `{"type":"system","subtype":"init","session_id":"s","model":"claude-sonnet-5"}` + "\n" +
		`{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-5","content":[{"type":"text","text":"done"}]},"session_id":"s"}` + "\n"
	o, ok := Recorded(strings.NewReader(stream + result + "\n"))
	if !ok || o.Class != outcome.Success || o.NumTurns != 2 || o.CostUSD != 0.01 {
		t.Errorf("a finished stream: %v %+v", ok, o)
	}
	if _, ok := Recorded(strings.NewReader(stream)); ok {
		t.Error("a stream without its result was taken as finished")
	}
}

// An event of a type the driver does not know (a later release's) is
// counted and changes nothing: the same stream with two such lines before
// its result classifies the same.
func TestUnknownEventsCountedNeverFatal(t *testing.T) {
	lines := streamLines(t, "happy")
	want := replay(lines, procFacts{}, len(lines)+1)
	odd := [][]byte{[]byte(`{"type":"system","subtype":"turn_budget","remaining":3}`), []byte(`{"type":"telemetry_2027","data":{"x":1}}`)}
	with := append(append(append([][]byte{}, lines[:len(lines)-1]...), odd...), lines[len(lines)-1])
	got := replay(with, procFacts{}, len(with)+1)
	if got.Class != want.Class || got.Reason != want.Reason || got.CostUSD != want.CostUSD {
		t.Errorf("with unknown events: %s %s $%v, without: %s %s $%v", got.Class, got.Reason, got.CostUSD, want.Class, want.Reason, want.CostUSD)
	}
	if p := replayProgress(with); p.UnknownEvents != 2 {
		t.Errorf("%d unknown events counted, want 2", p.UnknownEvents)
	}
	if p := replayProgress(lines); p.UnknownEvents != 0 {
		t.Errorf("the captured stream has %d unknown events", p.UnknownEvents)
	}
}
