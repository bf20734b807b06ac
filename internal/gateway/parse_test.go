package gateway

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func feedAll(p *parser, s string) {
	for len(s) > 0 { // in small pieces, as a network would deliver them
		n := min(5, len(s))
		p.write([]byte(s[:n]))
		s = s[n:]
	}
	p.finish()
}

func TestParserSSE(t *testing.T) {
	g, _ := newGateway(Config{APIKey: realKey}, newFakeNet().hooks())
	stream := strings.Join([]string{
		`event: message_start`,
		`data: {"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1,"cache_creation_input_tokens":2,"cache_read_input_tokens":3}}}`,
		``,
		`: a comment`,
		`event: content_block_start`,
		`data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"Bash","input":{}}}`,
		``,
		`event: content_block_delta`,
		`data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"command\":"}}`,
		``,
		`event: content_block_delta`,
		"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\" \\\"ls\\\"}\"}}\r",
		"\r",
		`event: content_block_stop`,
		`data: {"type":"content_block_stop","index":1}`,
		``,
		`event: content_block_start`,
		`data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","name":"Read","input":{"file_path":"a"}}}`,
		``,
		`event: content_block_stop`,
		`data: {"type":"content_block_stop","index":2}`,
		``,
		`event: message_delta`,
		`data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":40,"input_tokens":11}}`,
		``,
		`event: message_stop`,
		`data: {"type":"message_stop"}`,
		``,
		// A second message cut off after message_start still counts.
		`event: message_start`,
		`data: {"type":"message_start","message":{"usage":{"input_tokens":100,"output_tokens":1}}}`,
		``,
		`event: content_block_start`,
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","name":"Write","input":{}}}`,
		``,
		`event: error`,
		`data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		``,
	}, "\n")
	feedAll(newParser(g, 200, "text/event-stream; charset=utf-8", ""), stream)
	st := g.Stats()
	want := Usage{InputTokens: 111, OutputTokens: 41, CacheWriteTokens: 2, CacheReadTokens: 3}
	if st.Usage != want {
		t.Errorf("usage %+v, want %+v", st.Usage, want)
	}
	if len(st.ToolCalls) != 2 || st.ToolCalls[0].Name != "Bash" || string(st.ToolCalls[0].Input) != `{"command":"ls"}` ||
		st.ToolCalls[1].Name != "Read" || string(st.ToolCalls[1].Input) != `{"file_path":"a"}` {
		t.Errorf("tool calls %+v (an unfinished tool_use must not count)", st.ToolCalls)
	}
	if st.LastError != "overloaded_error: Overloaded" {
		t.Errorf("LastError %q", st.LastError)
	}
}

func TestParserJSONAndErrors(t *testing.T) {
	g, _ := newGateway(Config{APIKey: realKey}, newFakeNet().hooks())
	feedAll(newParser(g, 200, "application/json", ""), `{"type":"message","content":[{"type":"text","text":"x"},{"type":"tool_use","name":"Edit","input":{"a": 1}}],"usage":{"input_tokens":7,"output_tokens":8}}`)
	feedAll(newParser(g, 200, "application/json", ""), `{"input_tokens":12}`) // count_tokens: not usage
	// Only a Message's usage is billed usage.
	feedAll(newParser(g, 200, "application/json", ""), `{"type":"message_batch","usage":{"input_tokens":5}}`)
	st := g.Stats()
	if st.Usage != (Usage{InputTokens: 7, OutputTokens: 8}) || len(st.ToolCalls) != 1 || string(st.ToolCalls[0].Input) != `{"a":1}` {
		t.Errorf("stats %+v", st)
	}
	for _, c := range []struct {
		status      int
		body, want  string
		contentType string
	}{
		{529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded_error: Overloaded", "application/json"},
		{502, "<html>bad gateway</html>\nmore", "HTTP 502: <html>bad gateway</html>", "text/html"},
		{500, "", "HTTP 500", ""},
		{401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, "authentication_error: invalid x-api-key", "application/json"},
		{503, "event: error\ndata: {}\n\n", "HTTP 503: event: error", "text/event-stream"},
	} {
		feedAll(newParser(g, c.status, c.contentType, ""), c.body)
		if le := g.Stats().LastError; !strings.HasPrefix(le, c.want) {
			t.Errorf("status %d: LastError %q, want %q", c.status, le, c.want)
		}
	}
}

func TestClipInput(t *testing.T) {
	small := []byte(`{ "a" : [1, 2] }`)
	if got := string(clipInput(small, len(small))); got != `{"a":[1,2]}` {
		t.Errorf("small input: %s", got)
	}
	for _, in := range []string{
		`{"content":"` + strings.Repeat("é", 3000) + `"}`,
		`{"content":"` + strings.Repeat(`\"<`, 3000) + `"}`,
		strings.Repeat("x", 10000),
		`{"cut":"in the middle`,
	} {
		b := []byte(in)
		got := clipInput(b[:min(len(b), 2*MaxToolInput)], len(b))
		var s string
		if len(got) > MaxToolInput || !json.Valid(got) || json.Unmarshal(got, &s) != nil || !utf8.ValidString(s) {
			t.Errorf("clipInput(%.20q…) = %d bytes, valid %v", in, len(got), json.Valid(got))
		}
		if len(in) > MaxToolInput && !strings.HasSuffix(s, "…") {
			t.Errorf("clipped input lacks the mark: …%q", s[max(0, len(s)-10):])
		}
	}
}
