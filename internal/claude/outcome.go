package claude

import (
	"encoding/json"
	"io"
	"maps"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/sandbox"
)

// Outcome is everything known about a finished run.
type Outcome struct {
	Class  outcome.Class
	Reason string
	// Detail is the human-readable cause: the result text, errors[], or
	// the stderr tail; secrets redacted.
	Detail string

	SessionID string
	Model     string // the model of the last real assistant message
	// Result is the result event, nil when the process died without one.
	Result *ResultEvent

	// Accounting, from the result event (zero without one).
	CostUSD           float64
	Usage             Usage
	ModelUsage        map[string]ModelUsage
	NumTurns          int
	ResultText        string
	StopReason        string
	APIErrorStatus    int    // 0 when null
	SyntheticError    string // the "error" of the last synthetic assistant line
	PermissionDenials []PermissionDenial

	// Process facts.
	ExitCode   int    // -1 when killed by a signal
	Signal     string // "killed", "terminated", … when killed by a signal
	Stderr     string // bounded tail, redacted
	Duration   time.Duration
	APIRetries int
	// Stopped is set when the driver signalled the run (Stop, Kill, context
	// cancellation or the idle watchdog); StopCause says which.
	Stopped   bool
	StopCause string
	// Leftover lists processes of the run still alive after the final sweep
	// (normally empty).
	Leftover []Proc
	// Err is a launch or wait error, if any.
	Err error
}

// Progress is a snapshot of a running worker, for heartbeats and status.
type Progress struct {
	SessionID string
	Model     string
	Started   time.Time
	LastEvent time.Time // zero before the first stdout line
	Events    int
	// UnknownEvents counts JSON events of a type the driver does not know
	// (KnownEvent): kept raw, never fatal.
	UnknownEvents int
	// Turns counts distinct main-loop API messages seen so far; the final
	// number is Outcome.NumTurns.
	Turns     int
	ToolCalls map[string]int
	// LastTool is the name of the latest tool call: what a live view shows
	// a worker doing.
	LastTool        string
	APIRetries      int
	LastRetryStatus int
	LastRetryError  string
	HookDenials     int
	// Tokens is an estimate until the result arrives (TokensFinal): input
	// and cache tokens of each distinct message counted once, output ≈
	// content chars/4. Never use it for billing.
	Tokens      Usage
	TokensFinal bool
	CostUSD     float64
	Done        bool
}

// state folds events into progress and the facts the classifier needs. It
// is shared by Run and the tests that replay captured streams.
type state struct {
	mu sync.Mutex
	p  Progress

	seenMsg     map[string]bool // message ids whose usage was counted
	result      *ResultEvent
	synthetic   string
	synthText   string
	signalled   bool // the driver sent a signal
	resultFirst bool // the result arrived before any signal from us
}

func newState(start time.Time) *state {
	return &state{p: Progress{Started: start, ToolCalls: map[string]int{}}, seenMsg: map[string]bool{}}
}

func (s *state) observe(ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.Events++
	if ev.IsJSON() && !KnownEvent(ev.Type, ev.Subtype) {
		s.p.UnknownEvents++
	}
	if !ev.Time.IsZero() {
		s.p.LastEvent = ev.Time
	}
	if ev.SessionID != "" {
		s.p.SessionID = ev.SessionID
	}
	switch {
	case ev.Init != nil:
		if ev.Init.Model != "" {
			s.p.Model = ev.Init.Model
		}
	case ev.Assistant != nil:
		s.observeAssistant(ev.Assistant)
	case ev.APIRetry != nil:
		s.p.APIRetries++
		s.p.LastRetryStatus = ev.APIRetry.ErrorStatus
		s.p.LastRetryError = ev.APIRetry.Error
	case ev.HookResponse != nil:
		if ev.HookResponse.HookEvent == "PreToolUse" && ev.HookResponse.ExitCode == 2 {
			s.p.HookDenials++
		}
	case ev.Result != nil:
		s.result = ev.Result
		s.resultFirst = !s.signalled
		s.p.Tokens = ev.Result.Usage
		s.p.TokensFinal = true
		s.p.CostUSD = ev.Result.TotalCostUSD
		if ev.Result.SessionID != "" {
			s.p.SessionID = ev.Result.SessionID
		}
	}
}

func (s *state) observeAssistant(a *AssistantEvent) {
	m := a.Message
	if m.Model == SyntheticModel || a.Error != "" {
		s.synthetic = a.Error
		for _, b := range m.Content {
			if b.Type == "text" {
				s.synthText = b.Text
			}
		}
		return
	}
	if m.Model != "" {
		s.p.Model = m.Model
	}
	if m.ID != "" && !s.seenMsg[m.ID] {
		s.seenMsg[m.ID] = true
		if a.ParentToolUseID == "" {
			s.p.Turns++
		}
		if !s.p.TokensFinal {
			s.p.Tokens.InputTokens += m.Usage.InputTokens
			s.p.Tokens.CacheReadInputTokens += m.Usage.CacheReadInputTokens
			s.p.Tokens.CacheCreationInputTokens += m.Usage.CacheCreationInputTokens
		}
	}
	for _, b := range m.Content {
		if b.Type == "tool_use" {
			s.p.ToolCalls[b.Name]++
			s.p.LastTool = b.Name
		}
		if !s.p.TokensFinal {
			n := len(b.Text) + len(b.Thinking) + len(b.Input)
			s.p.Tokens.OutputTokens += int64((n + 3) / 4)
		}
	}
}

func (s *state) markSignalled() {
	s.mu.Lock()
	s.signalled = true
	s.mu.Unlock()
}

func (s *state) progress() Progress {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.p
	p.ToolCalls = maps.Clone(s.p.ToolCalls)
	return p
}

// procFacts is how the process ended.
type procFacts struct {
	exitCode  int
	signal    string
	stopCause string // "" unless the driver signalled: stopped, killed, cancelled, stalled
	stderr    string
}

// outcome classifies the run; the state must be final.
func (s *state) outcome(pf procFacts) Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := Outcome{
		SessionID:      s.p.SessionID,
		Model:          s.p.Model,
		Result:         s.result,
		SyntheticError: s.synthetic,
		ExitCode:       pf.exitCode,
		Signal:         pf.signal,
		Stderr:         pf.stderr,
		APIRetries:     s.p.APIRetries,
		Stopped:        pf.stopCause != "",
		StopCause:      pf.stopCause,
	}
	if r := s.result; r != nil {
		o.CostUSD = r.TotalCostUSD
		o.Usage = r.Usage
		o.ModelUsage = r.ModelUsage
		o.NumTurns = r.NumTurns
		o.ResultText = r.Result
		o.StopReason = r.StopReason
		o.APIErrorStatus = r.APIErrorStatus
		o.PermissionDenials = r.PermissionDenials
	}
	o.Class, o.Reason, o.Detail = classify(s.result, s.resultFirst, s.synthetic, s.synthText, pf)
	return o
}

// classify implements claude-cli.md §5.3, with one deliberate change the
// design asks for: a 401 / invalid key is Fatal, not Infra (after the CLI's
// own retries it is persistent, and every other worker would hit it too).
func classify(r *ResultEvent, resultFirst bool, synthetic, synthText string, pf procFacts) (outcome.Class, string, string) {
	// After we signalled, trust the exit, not a result printed in the race
	// (§6): only a result that arrived before the signal counts.
	if pf.stopCause != "" && (r == nil || !resultFirst) {
		reason := outcome.ReasonStopped
		switch pf.stopCause {
		case "stalled":
			reason = outcome.ReasonStalled
		case "killed":
			reason = outcome.ReasonKilled
		}
		return outcome.Infra, reason, "stopped by zerg (" + pf.stopCause + ")"
	}
	if r == nil {
		if isUsageError(pf.stderr) && pf.signal == "" {
			return outcome.Fatal, outcome.ReasonUsage, lastLine(pf.stderr)
		}
		if line := sandbox.StartFailure(pf.exitCode, pf.stderr); line != "" {
			return outcome.Fatal, outcome.ReasonStartFailed, "the CLI could not start inside the sandbox (" + line + "); check that the claude binary and the directories its links lead to are readable by the worker user"
		}
		if pf.signal != "" {
			return outcome.Infra, outcome.ReasonKilled, "claude killed by signal " + pf.signal + tail(pf.stderr)
		}
		return outcome.Infra, outcome.ReasonNoResult, "claude exited without a result" + tail(pf.stderr)
	}
	detail := r.Result
	if detail == "" && len(r.Errors) > 0 {
		detail = strings.Join(r.Errors, "; ")
	}
	switch r.Subtype {
	case ResultSuccess:
		if !r.IsError {
			reason := outcome.ReasonCompleted
			if r.TerminalReason != "" && r.TerminalReason != "completed" {
				reason = r.TerminalReason
			}
			return outcome.Success, reason, detail
		}
		if detail == "" {
			detail = synthText
		}
		c, reason := classifyAPIError(r, synthetic, detail)
		return c, reason, detail
	case ResultMaxTurns:
		return outcome.Task, outcome.ReasonMaxTurns, detail
	case ResultMaxBudget:
		return outcome.Task, outcome.ReasonMaxBudget, detail
	case ResultMaxStructRetry:
		return outcome.Task, outcome.ReasonStructuredOut, detail
	case ResultDuringExec:
		return outcome.Infra, outcome.ReasonAborted, detail
	}
	return outcome.Infra, outcome.ReasonUnknownResult, r.Subtype + ": " + detail
}

// classifyAPIError sorts a success/is_error result: the final API call
// failed. The CLI's own words come first (its synthetic error kinds and the
// texts it writes itself); what the API answered goes through the one
// table, outcome.ClassifyAPIError, read back from the CLI's rendering.
func classifyAPIError(r *ResultEvent, synthetic, text string) (outcome.Class, string) {
	if synthetic == "billing_error" {
		return outcome.Account, outcome.ReasonCredit
	}
	class, reason := outcome.ClassifyAPIError(renderedAPIError(r.APIErrorStatus, text))
	if class == outcome.Account {
		return class, reason
	}
	switch {
	// Credentials: nothing else will work either.
	case synthetic == "authentication_failed" ||
		strings.HasPrefix(text, "Invalid API key") || strings.Contains(text, "Not logged in"):
		return outcome.Account, outcome.ReasonAuth
	case synthetic == "model_not_found":
		return outcome.Fatal, outcome.ReasonModelNotFound
	// Request/model problems tied to this task's conversation.
	case r.StopReason == "refusal":
		return outcome.Task, outcome.ReasonRefusal
	case synthetic == "max_output_tokens" || strings.Contains(text, "output token maximum"):
		return outcome.Task, outcome.ReasonMaxOutputTokens
	case reason != outcome.ReasonAPIError:
		return class, reason
	// The CLI's words for failures without a status the table knows.
	case synthetic == "invalid_request":
		return outcome.Fatal, outcome.ReasonBadRequest
	case synthetic == "rate_limit":
		return outcome.Infra, outcome.ReasonRateLimit
	case strings.Contains(text, "Repeated 529") || strings.Contains(text, "Overloaded"):
		return outcome.Infra, outcome.ReasonOverloaded
	case strings.HasPrefix(text, "API Error: Unable to connect"):
		return outcome.Infra, outcome.ReasonConnection
	case strings.HasPrefix(text, "Request timed out") || strings.HasPrefix(text, "API Error: The operation timed out"):
		return outcome.Infra, outcome.ReasonTimeout
	case strings.Contains(text, "empty or malformed response") || strings.HasPrefix(text, "API Error: Failed to parse JSON"):
		return outcome.Infra, outcome.ReasonMalformed
	case synthetic == "server_error":
		return outcome.Infra, outcome.ReasonServerError
	}
	return outcome.Infra, outcome.ReasonAPIError
}

// renderedAPIError reads the API's answer back from the CLI's rendering of
// it: "API Error: 403 permission_error: …", "API Error: Request rejected
// (429) · …", "API Error: 400 {"type":"error","error":{…}}", or the CLI's
// own sentence ("Credit balance is too low").
func renderedAPIError(status int, text string) outcome.APIError {
	m := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(m, "API Error: "); ok {
		m = rest
		if rest, ok := strings.CutPrefix(m, "Request rejected ("); ok {
			if _, after, ok := strings.Cut(rest, ") · "); ok {
				m = after
			}
		} else if code, after, ok := strings.Cut(m, " "); ok && len(code) == 3 && strings.Trim(code, "0123456789") == "" {
			m = after
		}
	}
	e := outcome.APIError{Status: status, Message: m}
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if strings.HasPrefix(m, "{") && json.Unmarshal([]byte(m), &body) == nil && body.Error.Type != "" {
		e.Type, e.Message = body.Error.Type, body.Error.Message
	} else if typ, msg, ok := strings.Cut(m, ": "); ok && strings.HasSuffix(typ, "_error") && !strings.ContainsAny(typ, " \t") {
		e.Type, e.Message = typ, msg
	}
	return e
}

// resetRE finds the time a usage-limit message says access comes back:
// "You will regain access on 2030-07-01 at 00:00 UTC."
var resetRE = regexp.MustCompile(`(?i)regain access (?:on|at) (.+?)(?:\.\s|\.$|$)`)

// ResetFromText returns the reset time an account error's message names, or "".
func ResetFromText(text string) string {
	m := resetRE.FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return ""
	}
	return strings.TrimSpace(m[1])
}

// usageErrors are the CLI's own messages for a bad invocation (exit 1, no
// result): our bug or a broken install, never fixed by retrying.
var usageErrors = []string{
	"error: unknown option",
	"error: option '",
	"error: missing required argument",
	"Invalid session ID",
	"cannot be used with root",
	"requires --verbose",
	"Input must be provided",
}

func isUsageError(stderr string) bool {
	for _, u := range usageErrors {
		if strings.Contains(stderr, u) {
			return true
		}
	}
	return false
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func tail(stderr string) string {
	if l := lastLine(stderr); l != "" {
		return ": " + l
	}
	return ""
}

// Recorded is the outcome of a run zerg did not see end (its coordinator
// died while the worker ran), read back from the stream zerg recorded: ok
// is false unless the stream holds the CLI's result event, which the CLI
// prints last. Process facts are unknown: the run is taken as having
// exited after its result.
func Recorded(stream io.Reader) (Outcome, bool) {
	s := newState(time.Time{})
	lr := newLineReader(stream, MaxLineSize)
	for {
		line, truncated, err := lr.next()
		if err != nil {
			break
		}
		ev := ParseLine(line)
		ev.Truncated = truncated
		s.observe(ev)
	}
	if s.result == nil {
		return Outcome{}, false
	}
	return s.outcome(procFacts{}), true
}
