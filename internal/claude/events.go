package claude

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"time"
)

// Event types and the system subtypes the driver interprets. Everything else
// is kept as a raw event (claude-cli.md §3: parsers must ignore unknown
// types and fields).
const (
	TypeSystem    = "system"
	TypeAssistant = "assistant"
	TypeUser      = "user"
	TypeResult    = "result"

	SubtypeInit         = "init"
	SubtypeAPIRetry     = "api_retry"
	SubtypeHookResponse = "hook_response"
)

// knownEvents are the stream events ("type" or "type/subtype") the
// releases of zerg's tested range print in its launches (docs/claude-code.md).
// Any other is kept raw and counted (Progress.UnknownEvents), never fatal.
var knownEvents = map[string]bool{
	"system/init": true, "system/api_retry": true, "system/hook_started": true, "system/hook_response": true,
	"system/status": true, "system/compact_boundary": true, "system/model_fallback": true,
	"system/model_refusal_no_fallback": true, "system/informational": true, // 2.1.266 and 2.1.332, after a refusal
	"assistant": true, "user": true, "result": true, "stream_event": true, "rate_limit_event": true,
}

// KnownEvent reports whether the driver knows a stream event.
func KnownEvent(typ, subtype string) bool {
	if subtype != "" && knownEvents[typ+"/"+subtype] {
		return true
	}
	return knownEvents[typ] && (typ != TypeSystem || subtype == "")
}

// Event is one stdout line of a stream-json run. Exactly one of the typed
// pointers is set for the kinds the driver understands; the rest keep only
// Type, Subtype and Raw.
type Event struct {
	Type      string // "" for a line that is not a JSON object
	Subtype   string
	SessionID string
	UUID      string
	Time      time.Time // when the line was read
	// Raw is the line without its newline. The event owns it.
	Raw []byte
	// Truncated is set when the line exceeded MaxLineSize; Raw holds its start.
	Truncated bool
	// Err is set when the line is JSON of a known type whose fields could
	// not be decoded; the typed pointer is then nil.
	Err error

	Init         *InitEvent
	Assistant    *AssistantEvent
	User         *UserEvent
	APIRetry     *APIRetryEvent
	HookResponse *HookResponseEvent
	Result       *ResultEvent
}

// IsJSON reports whether the line was a JSON object.
func (e Event) IsJSON() bool { return e.Type != "" }

// InitEvent is system/init, the first line of a run after SessionStart hooks.
type InitEvent struct {
	Cwd               string      `json:"cwd"`
	Tools             []string    `json:"tools"`
	MCPServers        []MCPServer `json:"mcp_servers"`
	Model             string      `json:"model"`
	PermissionMode    string      `json:"permissionMode"`
	APIKeySource      string      `json:"apiKeySource"`
	ClaudeCodeVersion string      `json:"claude_code_version"`
}

// MCPServer is one entry of init.mcp_servers.
type MCPServer struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// AssistantEvent is one content block of an API answer (one line per block;
// blocks of one message share Message.ID). A synthetic error message has
// Message.Model "<synthetic>" and Error set.
type AssistantEvent struct {
	Message         AssistantMessage `json:"message"`
	ParentToolUseID string           `json:"parent_tool_use_id"`
	RequestID       string           `json:"request_id"`
	// Error is the synthetic error kind: rate_limit, authentication_failed,
	// server_error, unknown, model_not_found, max_output_tokens,
	// invalid_request, billing_error.
	Error string `json:"error"`
}

// SyntheticModel is the model name of error messages the CLI makes up.
const SyntheticModel = "<synthetic>"

// AssistantMessage is the API message of an assistant line. Usage is the
// message_start usage (output_tokens is the start value): never sum it.
type AssistantMessage struct {
	ID         string         `json:"id"`
	Model      string         `json:"model"`
	Role       string         `json:"role"`
	Content    []ContentBlock `json:"content"`
	StopReason string         `json:"stop_reason"`
	Usage      Usage          `json:"usage"`
}

// ContentBlock is a text, thinking, tool_use or tool_result block.
type ContentBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Thinking string `json:"thinking,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// ToolResultText is a tool_result block's content as text: the string, or
// its text blocks joined by newlines; ok is false for content that is
// neither (the caller may show the raw JSON or nothing).
func ToolResultText(raw json.RawMessage) (text string, ok bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var blocks []ContentBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return "", false
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n"), true
}

// ToolResultDisplay is ToolResultText for a person: content of another
// shape is shown as it came.
func ToolResultDisplay(raw json.RawMessage) string {
	if t, ok := ToolResultText(raw); ok {
		return t
	}
	return string(raw)
}

// UserEvent is a user line: tool results, interruptions, hook feedback.
type UserEvent struct {
	Message         UserMessage     `json:"message"`
	ParentToolUseID string          `json:"parent_tool_use_id"`
	ToolUseResult   json.RawMessage `json:"tool_use_result"`
	IsSynthetic     bool            `json:"isSynthetic"`
	IsReplay        bool            `json:"isReplay"`
}

// UserMessage is the message of a user line; string content becomes one
// text block.
type UserMessage struct {
	Role    string
	Content []ContentBlock
}

// UnmarshalJSON accepts content as a string or a block list.
func (m *UserMessage) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	m.Role = raw.Role
	m.Content = nil
	c := bytes.TrimSpace(raw.Content)
	switch {
	case len(c) == 0 || string(c) == "null":
	case c[0] == '"':
		var s string
		if err := json.Unmarshal(c, &s); err != nil {
			return err
		}
		m.Content = []ContentBlock{{Type: "text", Text: s}}
	default:
		return json.Unmarshal(c, &m.Content)
	}
	return nil
}

// APIRetryEvent is system/api_retry, printed before each retry's sleep.
type APIRetryEvent struct {
	Attempt      int     `json:"attempt"`
	MaxRetries   int     `json:"max_retries"`
	RetryDelayMS float64 `json:"retry_delay_ms"` // fractional in 2.1.197
	ErrorStatus  int     `json:"error_status"`   // 0 for connection errors and timeouts
	Error        string  `json:"error"`
}

// HookResponseEvent is system/hook_response.
type HookResponseEvent struct {
	HookID    string `json:"hook_id"`
	HookName  string `json:"hook_name"`
	HookEvent string `json:"hook_event"`
	Output    string `json:"output"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	ExitCode  int    `json:"exit_code"`
	Outcome   string `json:"outcome"`
}

// ResultEvent is the last line of a normal run (claude-cli.md §4).
type ResultEvent struct {
	Subtype        string  `json:"subtype"`
	IsError        bool    `json:"is_error"`
	APIErrorStatus int     `json:"api_error_status"` // 0 when null
	DurationMS     float64 `json:"duration_ms"`
	DurationAPIMS  float64 `json:"duration_api_ms"`
	NumTurns       int     `json:"num_turns"`
	Result         string  `json:"result"`
	StopReason     string  `json:"stop_reason"`
	SessionID      string  `json:"session_id"`
	TotalCostUSD   float64 `json:"total_cost_usd"`
	Usage          Usage   `json:"usage"`
	// ModelUsage covers every API call (side requests included), keyed by
	// the resolved model name; the authoritative token and cost account.
	ModelUsage        map[string]ModelUsage `json:"modelUsage"`
	PermissionDenials []PermissionDenial    `json:"permission_denials"`
	TerminalReason    string                `json:"terminal_reason"`
	// Errors is set on error_* subtypes, which have no Result text.
	Errors []string `json:"errors"`
}

// Result subtypes.
const (
	ResultSuccess        = "success"
	ResultMaxTurns       = "error_max_turns"
	ResultMaxBudget      = "error_max_budget_usd"
	ResultDuringExec     = "error_during_execution"
	ResultMaxStructRetry = "error_max_structured_output_retries"
)

// Usage is the token usage of a message or of the main loop.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// Total is all tokens of u.
func (u Usage) Total() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// ModelUsage is one model's entry in result.modelUsage.
type ModelUsage struct {
	InputTokens              int64   `json:"inputTokens"`
	OutputTokens             int64   `json:"outputTokens"`
	CacheReadInputTokens     int64   `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64   `json:"cacheCreationInputTokens"`
	WebSearchRequests        int64   `json:"webSearchRequests"`
	CostUSD                  float64 `json:"costUSD"`
	ContextWindow            int64   `json:"contextWindow"`
	MaxOutputTokens          int64   `json:"maxOutputTokens"`
}

// PermissionDenial is one denied tool call (hook denials included).
type PermissionDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// ParseLine turns one stdout line into an Event. It never fails: a line
// that is not a JSON object is kept as raw text, and a known type with
// undecodable fields keeps Type/Subtype with Err set.
func ParseLine(line []byte) Event {
	ev := Event{Raw: bytes.Clone(line)}
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return ev
	}
	var head struct {
		Type      json.RawMessage `json:"type"`
		Subtype   json.RawMessage `json:"subtype"`
		SessionID json.RawMessage `json:"session_id"`
		UUID      json.RawMessage `json:"uuid"`
	}
	if err := json.Unmarshal(trimmed, &head); err != nil {
		return ev // not JSON after all: raw text
	}
	ev.Type = jsonString(head.Type)
	if ev.Type == "" {
		ev.Type = "unknown" // a JSON object without a usable type
	}
	ev.Subtype = jsonString(head.Subtype)
	ev.SessionID = jsonString(head.SessionID)
	ev.UUID = jsonString(head.UUID)
	var target any
	switch {
	case ev.Type == TypeSystem && ev.Subtype == SubtypeInit:
		ev.Init = new(InitEvent)
		target = ev.Init
	case ev.Type == TypeSystem && ev.Subtype == SubtypeAPIRetry:
		ev.APIRetry = new(APIRetryEvent)
		target = ev.APIRetry
	case ev.Type == TypeSystem && ev.Subtype == SubtypeHookResponse:
		ev.HookResponse = new(HookResponseEvent)
		target = ev.HookResponse
	case ev.Type == TypeAssistant:
		ev.Assistant = new(AssistantEvent)
		target = ev.Assistant
	case ev.Type == TypeUser:
		ev.User = new(UserEvent)
		target = ev.User
	case ev.Type == TypeResult:
		ev.Result = new(ResultEvent)
		target = ev.Result
	default:
		return ev
	}
	if err := json.Unmarshal(trimmed, target); err != nil {
		// One odd field (a float where an int was, a new shape) must not
		// lose the whole event, least of all the result: decode field by
		// field and keep what fits.
		ev.Err = err
		if lerr := decodeLenient(trimmed, target); lerr != nil {
			ev.Init, ev.APIRetry, ev.HookResponse, ev.Assistant, ev.User, ev.Result = nil, nil, nil, nil, nil, nil
		}
	}
	return ev
}

// decodeLenient fills the json-tagged fields of the struct target points to
// one by one from the object in data, skipping fields that do not decode.
func decodeLenient(data []byte, target any) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return err
	}
	v := reflect.ValueOf(target).Elem()
	if v.Kind() != reflect.Struct {
		return errors.New("lenient decode: not a struct")
	}
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		raw, ok := obj[name]
		if name == "" || name == "-" || !ok || !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		tmp := reflect.New(f.Type)
		if err := json.Unmarshal(raw, tmp.Interface()); err != nil {
			// Nested structs (message, usage) get the same treatment.
			if f.Type.Kind() == reflect.Struct && decodeLenient(raw, tmp.Interface()) == nil {
				fv.Set(tmp.Elem())
			}
			continue
		}
		fv.Set(tmp.Elem())
	}
	return nil
}

// jsonString returns the value of a JSON string, or "" for anything else.
func jsonString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// MaxLineSize bounds one stdout line (tool results and persisted-output
// previews make lines of many MB).
const MaxLineSize = 64 << 20

// lineReader reads newline-terminated lines of any length, returning at most
// max bytes of each and discarding the rest.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 256<<10), max: max}
}

// next returns the next line without its newline; the slice is valid until
// the following call. truncated reports a line longer than max (its first max
// bytes are returned). A final unterminated line is returned before io.EOF.
func (lr *lineReader) next() (line []byte, truncated bool, err error) {
	lr.buf = lr.buf[:0]
	n := 0 // bytes of this line seen, newline excluded
	for {
		frag, err := lr.r.ReadSlice('\n')
		content := frag
		if err == nil {
			content = frag[:len(frag)-1]
		}
		n += len(content)
		if room := lr.max - len(lr.buf); room > 0 {
			lr.buf = append(lr.buf, content[:min(len(content), room)]...)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(lr.buf, []byte("\r")), n > lr.max, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case n > 0:
			return lr.buf, n > lr.max, nil
		default:
			return nil, false, err
		}
	}
}
