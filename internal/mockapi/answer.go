package mockapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// answer is one assistant message before it is written as SSE or JSON.
type answer struct {
	blocks []block
	stop   string
	usage  usage
	model  string
	msgID  string
}

type block struct {
	kind  string // text | tool_use
	text  string
	id    string
	name  string
	input []byte // JSON object
}

type usage struct {
	Input         int64 `json:"input_tokens"`
	Output        int64 `json:"output_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
}

// turnAnswer is turn t's message; results are the texts of the tool
// results in the request's history, which a tool call's captures read.
func (s *Server) turnAnswer(t *Turn, results []string) answer {
	var a answer
	if t.Text != "" {
		a.blocks = append(a.blocks, block{kind: "text", text: t.Text})
	}
	for _, tc := range t.Tools {
		in := tc.inputJSON
		if in == nil || len(tc.Captures) > 0 { // a Scenario built in Go without ParseScenario, or captures to fill in
			in, _ = json.Marshal(tc.fill(normalize(tc.Input), results))
			if tc.Input == nil {
				in = []byte("{}")
			}
		}
		a.blocks = append(a.blocks, block{kind: "tool_use", name: tc.Name, input: in})
	}
	a.stop = "end_turn"
	if len(t.Tools) > 0 {
		a.stop = "tool_use"
	}
	return a
}

// stopAnswer rewrites a healthy answer for a stop fault.
func stopAnswer(a answer, stop string) answer {
	switch stop {
	case "max_tokens":
		// A cut-off message: some text, no tool calls (a half tool call is not useful).
		text := "Partial answer"
		for _, b := range a.blocks {
			if b.kind == "text" {
				text = b.text[:len(b.text)/2]
				for !utf8.ValidString(text) {
					text = text[:len(text)-1]
				}
				if text == "" {
					text = "Partial answer"
				}
				break
			}
		}
		return answer{blocks: []block{{kind: "text", text: text}}, stop: "max_tokens"}
	case "refusal":
		return answer{stop: "refusal"}
	default: // empty
		return answer{stop: "end_turn"}
	}
}

// usage: turn usage, then scenario usage, then a chars/4 estimate.
func (s *Server) usage(t *Turn, inEstimate int64, a answer) usage {
	out := int64(0)
	for _, b := range a.blocks {
		out += int64(utf8.RuneCountInString(b.text)+len(b.input)+len(b.name)) / 4
	}
	u := usage{Input: inEstimate, Output: max(out, 1)}
	apply := func(src *Usage) {
		if src == nil {
			return
		}
		for _, f := range []struct {
			dst *int64
			v   *int64
		}{{&u.Input, src.InputTokens}, {&u.Output, src.OutputTokens}, {&u.CacheCreation, src.CacheCreationInputTokens}, {&u.CacheRead, src.CacheReadInputTokens}} {
			if f.v != nil {
				*f.dst = *f.v
			}
		}
	}
	apply(s.sc.Usage)
	if t != nil {
		apply(t.Usage)
	}
	return u
}

func (a answer) describe() string {
	if len(a.blocks) == 0 {
		return "empty " + a.stop
	}
	var tools []string
	hasText := false
	for _, b := range a.blocks {
		if b.kind == "tool_use" {
			tools = append(tools, b.name)
		} else {
			hasText = true
		}
	}
	var parts []string
	if hasText {
		parts = append(parts, "text")
	}
	if len(tools) > 0 {
		parts = append(parts, "tool_use "+strings.Join(tools, ","))
	}
	return strings.Join(parts, " + ") + " (" + a.stop + ")"
}

func (b block) json() map[string]any {
	if b.kind == "tool_use" {
		return map[string]any{"type": "tool_use", "id": b.id, "name": b.name, "input": json.RawMessage(b.input)}
	}
	return map[string]any{"type": "text", "text": b.text}
}

// message is the non-streaming form: a complete Message with full tool inputs.
func (a answer) message() map[string]any {
	content := make([]map[string]any, 0, len(a.blocks))
	for _, b := range a.blocks {
		content = append(content, b.json())
	}
	return map[string]any{
		"id": a.msgID, "type": "message", "role": "assistant", "model": a.model,
		"content": content, "stop_reason": a.stop, "stop_sequence": nil, "usage": a.usage,
	}
}

// sseWriter writes one event: line and one data: line per event and flushes,
// the shape the CLI requires.
type sseWriter struct {
	w http.ResponseWriter
}

func (s sseWriter) event(name string, v any) {
	b := marshal(v)
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	s.flush()
}

func (s sseWriter) raw(text string) {
	_, _ = s.w.Write([]byte(text))
	s.flush()
}

func (s sseWriter) flush() {
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

func startSSE(w http.ResponseWriter) sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := sseWriter{w}
	s.flush()
	return s
}

func (s sseWriter) messageStart(a answer) {
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": a.msgID, "type": "message", "role": "assistant", "model": a.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": usage{Input: a.usage.Input, Output: 1, CacheCreation: a.usage.CacheCreation, CacheRead: a.usage.CacheRead},
	}})
}

// writeSSE streams the answer; with upto < len(blocks) it stops after the
// first delta of block upto (a message cut off mid-way).
func (s *Server) writeSSE(w http.ResponseWriter, a answer, upto int) {
	sw := startSSE(w)
	sw.messageStart(a)
	sw.event("ping", map[string]string{"type": "ping"})
	for i, b := range a.blocks {
		if b.kind == "tool_use" {
			sw.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b.id, "name": b.name, "input": map[string]any{}}})
			// Tool input only counts when it arrives as input_json_delta;
			// split it to exercise the client's concatenation.
			for _, part := range chunks(string(b.input), 2) {
				sw.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
				if i == upto {
					return
				}
			}
		} else {
			sw.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			for _, part := range chunks(b.text, 2) {
				sw.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": part}})
				if i == upto {
					return
				}
			}
		}
		sw.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	sw.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": a.stop, "stop_sequence": nil},
		"usage": map[string]int64{"output_tokens": a.usage.Output}})
	sw.event("message_stop", map[string]string{"type": "message_stop"})
}

// chunks splits s into up to n pieces on rune boundaries.
func chunks(s string, n int) []string {
	if len(s) < 2*n {
		return []string{s}
	}
	var out []string
	size := len(s) / n
	for len(s) > 0 && len(out) < n-1 {
		cut := size
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// fault writes a faulty response. It may panic with http.ErrAbortHandler to
// drop the connection; the caller's deferred record still runs.
func (s *Server) fault(w http.ResponseWriter, r *http.Request, rec *Request, e *Effect, a answer) {
	stream := rec.Stream
	switch {
	case e.HTTP != 0:
		h := http.Header{}
		if e.RetryAfter != nil {
			h.Set("retry-after", strconv.Itoa(*e.RetryAfter))
		}
		if e.ShouldRetry != nil {
			h.Set("x-should-retry", strconv.FormatBool(*e.ShouldRetry))
		}
		if e.ResetIn != 0 {
			// Whole seconds, rounded up: the reset is never before now+reset_in.
			at := time.Now().Add(time.Duration(e.ResetIn)).Add(time.Second - 1).Truncate(time.Second)
			for _, k := range ResetHeaders {
				h.Set(k, at.UTC().Format(time.RFC3339))
			}
		}
		for k, v := range e.Headers {
			h.Set(k, v)
		}
		typ, msg := e.ErrorType, e.Message
		if typ == "" {
			typ = errorType(e.HTTP)
		}
		if msg == "" {
			msg = errorMessage(e.HTTP, rec.Model)
		}
		s.writeError(w, rec, e.HTTP, typ, msg, h)

	case e.Malformed != "":
		rec.Status, rec.Answer = http.StatusOK, "malformed "+e.Malformed
		s.record(rec)
		if !stream {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("this is not a JSON message"))
			return
		}
		switch e.Malformed {
		case "garbage":
			sw := startSSE(w)
			sw.raw("this is not a server-sent event stream\n\n")
		case "bad_json":
			sw := startSSE(w)
			sw.raw("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{not json\n\n")
		case "no_message_start":
			sw := startSSE(w)
			sw.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
				"content_block": map[string]any{"type": "text", "text": ""}})
			sw.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": "no message_start"}})
			sw.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
			sw.event("message_delta", map[string]any{"type": "message_delta",
				"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]int64{"output_tokens": 1}})
			sw.event("message_stop", map[string]string{"type": "message_stop"})
		case "truncated":
			if len(a.blocks) == 0 {
				sw := startSSE(w)
				sw.messageStart(a)
				return
			}
			s.writeSSE(w, a, 0)
		case "error_event":
			sw := startSSE(w)
			sw.messageStart(a)
			sw.event("error", map[string]any{"type": "error", "error": map[string]string{"type": "overloaded_error", "message": "Overloaded"}})
		}

	case e.Stall != "":
		d := time.Duration(e.Duration)
		rec.Answer = "stall " + e.Stall
		if e.Stall == "before_headers" {
			if s.wait(r, d) {
				rec.Answer += ", then dropped the connection"
			} else {
				rec.Answer += " until the client went away"
			}
			panic(http.ErrAbortHandler)
		}
		rec.Status = http.StatusOK
		if !stream {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			sseWriter{w}.flush()
		} else {
			sw := startSSE(w)
			if e.Stall == "after_message_start" {
				sw.messageStart(a)
			}
		}
		if s.wait(r, d) {
			rec.Answer += ", then ended the body"
		} else {
			rec.Answer += " until the client went away"
		}

	case e.Drop != "":
		rec.Answer = "drop " + e.Drop
		if e.Drop == "mid_stream" {
			rec.Status = http.StatusOK
			if stream {
				s.writeSSE(w, a, 0)
			} else {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write([]byte(`{"id":"` + a.msgID + `","type":"message",`))
				sseWriter{w}.flush()
			}
		}
		panic(http.ErrAbortHandler)
	}
}

// marshal is json.Marshal without HTML escaping, so logs and streams show
// "<block>" rather than "\u003cblock\u003e"; both decode the same.
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // only our own maps and structs are encoded
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// fill replaces {{NAME}} in every string of v by what capture NAME reads
// in the tool results: the first group of its regexp's last match, the
// newest result first. A capture that matches nothing leaves a marker
// that says so, which the command it lands in shows.
func (tc *ToolCall) fill(v any, results []string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = tc.fill(e, results)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = tc.fill(e, results)
		}
		return x
	case string:
		for name := range tc.Captures {
			ph := "{{" + name + "}}"
			if strings.Contains(x, ph) {
				x = strings.ReplaceAll(x, ph, tc.capture(name, results))
			}
		}
		return x
	}
	return v
}

func (tc *ToolCall) capture(name string, results []string) string {
	re := tc.captures[name]
	if re == nil { // a Scenario built in Go without ParseScenario
		var err error
		if re, err = regexp.Compile(tc.Captures[name]); err != nil {
			return "mockapi-capture-" + name + "-does-not-compile"
		}
	}
	for i := len(results) - 1; i >= 0; i-- {
		if ms := re.FindAllStringSubmatch(results[i], -1); len(ms) > 0 && len(ms[len(ms)-1]) > 1 {
			return ms[len(ms)-1][1]
		}
	}
	return "mockapi-capture-" + name + "-matched-nothing"
}
