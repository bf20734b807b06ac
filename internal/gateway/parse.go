package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"
)

// MaxToolInput bounds ToolCall.Input in bytes.
const MaxToolInput = 2048

const (
	maxEventData = 16 << 20 // one SSE event's data; larger events are skipped
	maxJSONBody  = 16 << 20 // a non-streamed answer parsed for usage and tool calls
	maxErrorBody = 64 << 10 // an error answer parsed for its type and message
	maxLastError = 512
)

// usageJSON is the API's usage object; absent fields stay nil, because a
// message_delta carries only the counts that changed.
type usageJSON struct {
	Input      *int64 `json:"input_tokens"`
	Output     *int64 `json:"output_tokens"`
	CacheWrite *int64 `json:"cache_creation_input_tokens"`
	CacheRead  *int64 `json:"cache_read_input_tokens"`
}

func (u *usageJSON) applyTo(dst *Usage) {
	if u == nil {
		return
	}
	for _, f := range []struct {
		dst *int64
		v   *int64
	}{{&dst.InputTokens, u.Input}, {&dst.OutputTokens, u.Output}, {&dst.CacheWriteTokens, u.CacheWrite}, {&dst.CacheReadTokens, u.CacheRead}} {
		if f.v != nil && *f.v >= 0 {
			*f.dst = *f.v
		}
	}
}

type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// event is the part of an SSE data payload (or a non-streamed Message) the
// parser reads.
type event struct {
	Type    string `json:"type"`
	Message *struct {
		Usage *usageJSON `json:"usage"`
	} `json:"message"`
	Usage        *usageJSON `json:"usage"`
	Index        int        `json:"index"`
	ContentBlock *struct {
		Type  string          `json:"type"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		PartialJSON string `json:"partial_json"`
	} `json:"delta"`
	Error   *apiError `json:"error"`
	Content []struct {
		Type  string          `json:"type"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
}

// toolBlock is a tool_use block being streamed.
type toolBlock struct {
	name  string
	input []byte // the first bytes of the input (up to 2*MaxToolInput)
	total int    // input length so far
	start json.RawMessage
}

// parser reads one model-API response as it streams past and reports
// usage, tool calls and errors to the gateway. It never changes the bytes.
type parser struct {
	g      *Gateway
	status int
	sse    bool
	model  string // the model the request named, for pricing

	// SSE state
	line    []byte // unfinished line
	data    []byte // data lines of the current event
	skip    bool   // the current event's data exceeded maxEventData
	inMsg   bool
	msg     Usage // the current message's usage
	blocks  map[int]*toolBlock
	lineCap bool

	// non-streamed body (success: a Message; failure: an error object)
	body     []byte
	bodyOver bool

	done bool
}

func newParser(g *Gateway, status int, contentType, model string) *parser {
	p := &parser{g: g, status: status, model: model, blocks: map[int]*toolBlock{}}
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && mt == "text/event-stream" {
		p.sse = status/100 == 2
	}
	return p
}

func (p *parser) write(b []byte) {
	if p.done || len(b) == 0 {
		return
	}
	if !p.sse {
		limit := maxJSONBody
		if p.status/100 != 2 {
			limit = maxErrorBody
		}
		if len(p.body)+len(b) > limit {
			b = b[:max(0, limit-len(p.body))]
			p.bodyOver = true
		}
		p.body = append(p.body, b...)
		return
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.appendLine(b)
			return
		}
		p.appendLine(b[:i])
		p.endLine()
		b = b[i+1:]
	}
}

func (p *parser) appendLine(b []byte) {
	if len(p.line)+len(b) > maxEventData {
		p.lineCap = true
		return
	}
	p.line = append(p.line, b...)
}

// endLine handles one complete SSE line.
func (p *parser) endLine() {
	line := bytes.TrimSuffix(p.line, []byte("\r"))
	capped := p.lineCap
	p.line, p.lineCap = p.line[:0], false
	switch {
	case len(line) == 0:
		p.dispatch()
	case capped:
		p.skip = true
	case bytes.HasPrefix(line, []byte("data:")):
		v := bytes.TrimPrefix(line[len("data:"):], []byte(" "))
		if len(p.data)+len(v)+1 > maxEventData {
			p.skip = true
			return
		}
		if len(p.data) > 0 {
			p.data = append(p.data, '\n')
		}
		p.data = append(p.data, v...)
	}
	// event:, id:, retry: and comments: the payload's "type" says it all.
}

func (p *parser) dispatch() {
	data, skip := p.data, p.skip
	p.data, p.skip = p.data[:0], false
	if skip || len(data) == 0 {
		return
	}
	var ev event
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	switch ev.Type {
	case "message_start":
		p.endMessage()
		p.inMsg = true
		p.msg = Usage{}
		if ev.Message != nil {
			ev.Message.Usage.applyTo(&p.msg)
		}
	case "message_delta":
		// Counts in message_delta are cumulative for the message.
		ev.Usage.applyTo(&p.msg)
	case "message_stop":
		p.endMessage()
	case "content_block_start":
		if cb := ev.ContentBlock; cb != nil && cb.Type == "tool_use" {
			p.blocks[ev.Index] = &toolBlock{name: cb.Name, start: cb.Input}
		}
	case "content_block_delta":
		if tb := p.blocks[ev.Index]; tb != nil && ev.Delta != nil && ev.Delta.Type == "input_json_delta" {
			tb.total += len(ev.Delta.PartialJSON)
			if room := 2*MaxToolInput - len(tb.input); room > 0 {
				tb.input = append(tb.input, ev.Delta.PartialJSON[:min(room, len(ev.Delta.PartialJSON))]...)
			}
		}
	case "content_block_stop":
		if tb := p.blocks[ev.Index]; tb != nil {
			delete(p.blocks, ev.Index)
			in, total := tb.input, tb.total
			if total == 0 && len(bytes.TrimSpace(tb.start)) > 0 {
				in, total = tb.start, len(tb.start)
			}
			p.g.addToolCall(ToolCall{Name: tb.name, Input: clipInput(in, total)})
		}
	case "error":
		if ev.Error != nil {
			p.g.setLastError(formatAPIError(ev.Error))
			p.g.addAPIError(APIError{Status: p.status, Type: clip(ev.Error.Type, 64), Message: clip(ev.Error.Message, maxLastError)})
		}
	}
}

// endMessage adds the current message's usage once.
func (p *parser) endMessage() {
	if p.inMsg {
		p.inMsg = false
		p.g.addUsage(p.model, p.msg)
	}
}

// finish is called once at the end of the body (or when it is closed early).
func (p *parser) finish() {
	if p.done {
		return
	}
	if p.sse {
		if len(p.line) > 0 {
			p.endLine()
		}
		p.dispatch()
		// A stream cut off after message_start was still billed.
		p.endMessage()
		p.done = true
		return
	}
	p.done = true
	if p.status/100 != 2 {
		p.g.setLastError(errorText(p.status, p.body))
		p.g.addAPIError(apiErrorOf(p.status, p.body))
		return
	}
	if p.bodyOver {
		return
	}
	var ev event
	if json.Unmarshal(p.body, &ev) != nil || ev.Type != "message" {
		return
	}
	var u Usage
	ev.Usage.applyTo(&u)
	p.g.addUsage(p.model, u)
	for _, c := range ev.Content {
		if c.Type == "tool_use" {
			p.g.addToolCall(ToolCall{Name: c.Name, Input: clipInput(c.Input, len(c.Input))})
		}
	}
}

func formatAPIError(e *apiError) string {
	switch {
	case e.Type != "" && e.Message != "":
		return e.Type + ": " + e.Message
	case e.Type != "":
		return e.Type
	}
	return e.Message
}

// errorText is LastError for a non-2xx answer: the API's "type: message",
// or the status and the first line of a body that is not an API error.
func errorText(status int, body []byte) string {
	var v struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(body, &v) == nil && v.Error != nil && (v.Error.Type != "" || v.Error.Message != "") {
		return clip(formatAPIError(v.Error), maxLastError)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
	if line == "" {
		return fmt.Sprintf("HTTP %d", status)
	}
	return clip(fmt.Sprintf("HTTP %d: %s", status, line), maxLastError)
}

// apiErrorOf is an error answer as APIError: the API's type and message,
// or no type and the first line of a body that is not an API error.
func apiErrorOf(status int, body []byte) APIError {
	var v struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(body, &v) == nil && v.Error != nil && (v.Error.Type != "" || v.Error.Message != "") {
		return APIError{Status: status, Type: clip(v.Error.Type, 64), Message: clip(v.Error.Message, maxLastError)}
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
	return APIError{Status: status, Message: clip(line, maxLastError)}
}

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// clipInput returns a tool input for ToolCall.Input: the compact JSON when it
// is valid and fits in MaxToolInput bytes, else a JSON string holding its
// beginning, cut so that the encoded string fits, ending in "…". total is the
// input's full length (in may hold only its beginning).
func clipInput(in []byte, total int) json.RawMessage {
	if total == len(in) && json.Valid(in) {
		var buf bytes.Buffer
		if json.Compact(&buf, in) == nil && buf.Len() <= MaxToolInput {
			return json.RawMessage(buf.Bytes())
		}
	}
	s := strings.ToValidUTF8(string(in), "\uFFFD")
	for n := min(len(s), MaxToolInput); ; {
		out := encodeString(clipRaw(s, n))
		if len(out) <= MaxToolInput || n == 0 {
			return out
		}
		n -= max(len(out)-MaxToolInput, 1)
		n = max(n, 0)
	}
}

// clipRaw cuts s to n bytes on a rune boundary and appends "…" when it cut.
func clipRaw(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n-len("…"), 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func encodeString(s string) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a valid UTF-8 string always encodes
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}
