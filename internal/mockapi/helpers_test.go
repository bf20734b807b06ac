package mockapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// startServer parses yamlText, starts a server on loopback and closes it
// when the test ends.
func startServer(t *testing.T, yamlText string, opts ...Option) (*Server, string) {
	t.Helper()
	var sc *Scenario
	if yamlText != "" {
		var err error
		sc, err = ParseScenario([]byte(yamlText))
		if err != nil {
			t.Fatalf("ParseScenario: %v", err)
		}
	}
	srv := NewServer(sc, opts...)
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, url
}

// convo builds request bodies shaped like Claude Code's: a <system-reminder>
// block before the prompt, a role:"system" message, and history appended turn
// by turn.
type convo struct {
	prompt   string
	messages []map[string]any
}

func newConvo(prompt string) *convo {
	return &convo{prompt: prompt, messages: []map[string]any{
		{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "<system-reminder>\nToday's date is 2026-11-21.\n</system-reminder>\n\n"},
			map[string]any{"type": "text", "text": prompt, "cache_control": map[string]string{"type": "ephemeral"}},
		}},
		{"role": "system", "content": "Available agent types for the Agent tool: …"},
	}}
}

// body returns the JSON body; stream=false gives the non-streaming fallback shape.
func (c *convo) body(stream bool) []byte {
	m := map[string]any{
		"model":      "claude-opus-4-8",
		"messages":   c.messages,
		"system":     []any{map[string]any{"type": "text", "text": "You are a Claude agent."}},
		"tools":      []any{map[string]any{"name": "Write", "input_schema": map[string]any{}}},
		"max_tokens": 64000,
		"thinking":   map[string]string{"type": "adaptive"},
		"metadata":   map[string]string{"user_id": `{"device_id":"x","session_id":"y"}`},
	}
	if stream {
		m["stream"] = true
	}
	b, _ := json.Marshal(m)
	return b
}

// answer appends the assistant message with the given tool_use blocks and a
// user message with one tool_result per tool_use, like the CLI does.
func (c *convo) answer(toolUses []map[string]any) {
	var content, results []any
	for _, tu := range toolUses {
		content = append(content, tu)
		results = append(results, map[string]any{"type": "tool_result", "tool_use_id": tu["id"], "content": "ok"})
	}
	c.messages = append(c.messages, map[string]any{"role": "assistant", "content": content},
		map[string]any{"role": "user", "content": results},
		map[string]any{"role": "system", "content": "a budget notice"})
}

func post(t *testing.T, url, session string, body []byte) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/v1/messages?beta=true", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "secret-key")
	req.Header.Set("X-Claude-Code-Session-Id", session)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type sseEvent struct {
	Name string
	Data map[string]any
}

// parseSSE reads an event stream and fails unless every data line follows an
// event line (the CLI rejects data-only streams).
func parseSSE(t testing.TB, r io.Reader) []sseEvent {
	t.Helper()
	var evs []sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			name = ""
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if name == "" {
				t.Fatalf("data line without event line: %q", line)
			}
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("bad JSON in data line %q: %v", line, err)
			}
			if d["type"] != name {
				t.Fatalf("event %q carries data of type %v", name, d["type"])
			}
			evs = append(evs, sseEvent{name, d})
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return evs
}

// assembled rebuilds the assistant message from SSE events: tool input only
// from input_json_delta, as the CLI does.
type assembledMsg struct {
	Start    map[string]any
	Blocks   []map[string]any
	Stop     string
	Output   float64
	Complete bool
}

func assemble(t testing.TB, evs []sseEvent) assembledMsg {
	t.Helper()
	var m assembledMsg
	partial := map[int]string{}
	for _, e := range evs {
		switch e.Name {
		case "message_start":
			m.Start = e.Data["message"].(map[string]any)
		case "content_block_start":
			cb := map[string]any{}
			for k, v := range e.Data["content_block"].(map[string]any) {
				cb[k] = v
			}
			m.Blocks = append(m.Blocks, cb)
		case "content_block_delta":
			i := int(e.Data["index"].(float64))
			d := e.Data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				m.Blocks[i]["text"] = m.Blocks[i]["text"].(string) + d["text"].(string)
			case "input_json_delta":
				partial[i] += d["partial_json"].(string)
			}
		case "content_block_stop":
			i := int(e.Data["index"].(float64))
			if m.Blocks[i]["type"] == "tool_use" {
				var in map[string]any
				if err := json.Unmarshal([]byte(partial[i]), &in); err != nil {
					t.Fatalf("tool input from input_json_delta is not JSON: %q", partial[i])
				}
				m.Blocks[i]["input"] = in
			}
		case "message_delta":
			m.Stop = e.Data["delta"].(map[string]any)["stop_reason"].(string)
			m.Output = e.Data["usage"].(map[string]any)["output_tokens"].(float64)
		case "message_stop":
			m.Complete = true
		}
	}
	return m
}

func toolUses(blocks []map[string]any) []map[string]any {
	var out []map[string]any
	for _, b := range blocks {
		if b["type"] == "tool_use" {
			out = append(out, b)
		}
	}
	return out
}

func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return string(b)
}

// fatalTB turns Fatalf into a panic so helpers can run off the test goroutine.
type fatalTB struct{ testing.TB }

type fatal string

func (fatalTB) Helper() {}

func (fatalTB) Fatalf(format string, args ...any) { panic(fatal(fmt.Sprintf(format, args...))) }

// tryAssemble parses and assembles an SSE body, reporting problems as an error.
func tryAssemble(data []byte) (m assembledMsg, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fatal)
			if !ok {
				panic(r)
			}
			err = errors.New(string(f))
		}
	}()
	tb := fatalTB{}
	return assemble(tb, parseSSE(tb, bytes.NewReader(data))), nil
}
