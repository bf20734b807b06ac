package mockapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

const threeTurns = `
usage: {input_tokens: 111}
tasks:
  - name: greet
    match: "create hello"
    turns:
      - text: "Writing it."
        tools:
          - name: Write
            input: {file_path: hello.txt, content: "hi ✓ \"quoted\"\n"}
          - {name: Bash, input: {command: "echo ok"}}
      - tools: [{name: Read, input: {file_path: hello.txt, limit: 10}}]
      - text: "All done."
        usage: {input_tokens: 5000, output_tokens: 300, cache_read_input_tokens: 7}
`

func TestSSEShapeAndToolInput(t *testing.T) {
	_, url := startServer(t, threeTurns)
	c := newConvo("please create hello.txt")
	resp := post(t, url, "s1", c.body(true))
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content-type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp.Header.Get("request-id") == "" {
		t.Error("no request-id header")
	}
	evs := parseSSE(t, resp.Body)
	var names []string
	for _, e := range evs {
		names = append(names, e.Name)
	}
	want := "message_start ping content_block_start content_block_delta content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	m := assemble(t, evs)
	if m.Start["model"] != "claude-opus-4-8" {
		t.Errorf("model not echoed: %v", m.Start["model"])
	}
	if u := m.Start["usage"].(map[string]any); u["input_tokens"] != 111.0 || u["output_tokens"] != 1.0 {
		t.Errorf("message_start usage %v", u)
	}
	if m.Stop != "tool_use" || !m.Complete {
		t.Errorf("stop %q complete %v", m.Stop, m.Complete)
	}
	if m.Blocks[0]["text"] != "Writing it." {
		t.Errorf("text block %v", m.Blocks[0])
	}
	tus := toolUses(m.Blocks)
	if len(tus) != 2 || tus[0]["name"] != "Write" || tus[1]["name"] != "Bash" {
		t.Fatalf("tool uses %v", tus)
	}
	wantIn := map[string]any{"file_path": "hello.txt", "content": "hi ✓ \"quoted\"\n"}
	if !reflect.DeepEqual(tus[0]["input"], wantIn) {
		t.Errorf("Write input from input_json_delta = %v, want %v", tus[0]["input"], wantIn)
	}
	if tus[0]["id"] == tus[1]["id"] || !strings.HasPrefix(tus[0]["id"].(string), "toolu_") {
		t.Errorf("tool ids %v %v", tus[0]["id"], tus[1]["id"])
	}
	// content_block_start must carry an empty input: the CLI ignores it anyway.
	for _, e := range evs {
		if e.Name == "content_block_start" {
			if cb := e.Data["content_block"].(map[string]any); cb["type"] == "tool_use" && len(cb["input"].(map[string]any)) != 0 {
				t.Errorf("tool_use start carries input %v", cb["input"])
			}
		}
	}
}

func TestTurnsFollowToolResults(t *testing.T) {
	srv, url := startServer(t, threeTurns)
	c := newConvo("please create hello.txt")
	m := assemble(t, parseSSE(t, post(t, url, "s1", c.body(true)).Body))
	c.answer(toolUses(m.Blocks))
	m = assemble(t, parseSSE(t, post(t, url, "s1", c.body(true)).Body))
	if tus := toolUses(m.Blocks); len(tus) != 1 || tus[0]["name"] != "Read" {
		t.Fatalf("turn 2 = %v, want Read", m.Blocks)
	}
	// A nudge or system message between turns must not move the script.
	c.answer(toolUses(m.Blocks))
	c.messages = append(c.messages, map[string]any{"role": "user", "content": "[Your previous response had no visible output.]"})
	m = assemble(t, parseSSE(t, post(t, url, "s1", c.body(true)).Body))
	if m.Stop != "end_turn" || m.Blocks[0]["text"] != "All done." || m.Output != 300 {
		t.Fatalf("turn 3 = %+v", m)
	}
	if u := m.Start["usage"].(map[string]any); u["input_tokens"] != 5000.0 || u["cache_read_input_tokens"] != 7.0 {
		t.Errorf("turn 3 usage %v", u)
	}
	// Past the end: the final text again.
	c.messages = append(c.messages, map[string]any{"role": "assistant", "content": "All done."},
		map[string]any{"role": "user", "content": "Stop hook feedback: keep going"})
	m = assemble(t, parseSSE(t, post(t, url, "s1", c.body(true)).Body))
	if m.Blocks[0]["text"] != "All done." {
		t.Errorf("past the end: %v", m.Blocks)
	}
	var turns []int
	for _, r := range srv.Requests() {
		turns = append(turns, r.Turn)
	}
	if !reflect.DeepEqual(turns, []int{1, 2, 3, 3}) {
		t.Errorf("logged turns %v", turns)
	}
}

func TestNonStreamingFallbackIsJSON(t *testing.T) {
	srv, url := startServer(t, threeTurns)
	c := newConvo("please create hello.txt")
	resp := post(t, url, "s1", c.body(false))
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content-type %q", ct)
	}
	var msg struct {
		Type       string           `json:"type"`
		Content    []map[string]any `json:"content"`
		StopReason string           `json:"stop_reason"`
		Usage      map[string]int   `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatalf("fallback body is not JSON: %v", err)
	}
	if msg.Type != "message" || msg.StopReason != "tool_use" || len(msg.Content) != 3 {
		t.Fatalf("fallback message %+v", msg)
	}
	if in := msg.Content[1]["input"].(map[string]any); in["file_path"] != "hello.txt" {
		t.Errorf("fallback tool input %v", in)
	}
	if msg.Usage["input_tokens"] != 111 {
		t.Errorf("usage %v", msg.Usage)
	}
	if r := srv.Requests()[0]; r.Kind != KindFallback || r.Stream {
		t.Errorf("kind %q stream %v", r.Kind, r.Stream)
	}
}

func TestDefaultScriptAndSpecialRequests(t *testing.T) {
	srv, url := startServer(t, `
title: "Greeting work"
classifier: block
tasks: [{name: t, match: zzz, turns: [{text: x}]}]
`)
	// Unmatched prompt → default "done".
	m := assemble(t, parseSSE(t, post(t, url, "s", newConvo("something else").body(true)).Body))
	if m.Blocks[0]["text"] != "done" || m.Stop != "end_turn" {
		t.Errorf("default answer %+v", m)
	}
	// Title request: no tools, json_schema output format.
	title, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "tools": []any{},
		"messages":      []any{map[string]any{"role": "user", "content": "<session>\nhi\n</session>"}},
		"output_config": map[string]any{"format": map[string]any{"type": "json_schema", "schema": map[string]any{"properties": map[string]any{"title": map[string]string{"type": "string"}}}}}})
	m = assemble(t, parseSSE(t, post(t, url, "s", title).Body))
	if m.Blocks[0]["text"] != `{"title":"Greeting work"}` {
		t.Errorf("title answer %v", m.Blocks)
	}
	// Classifier: non-streaming, stop sequence </block>.
	cls, _ := json.Marshal(map[string]any{"model": "m", "stop_sequences": []string{"</block>"}, "max_tokens": 64,
		"messages": []any{map[string]any{"role": "user", "content": "<transcript>…</transcript>"}}})
	body := readAll(t, post(t, url, "s", cls).Body)
	if !strings.Contains(body, `<block>yes</block>`) {
		t.Errorf("classifier answer %s", body)
	}
	// HEAD on any path, count_tokens under a prefix, unknown path.
	resp, err := http.Head(url + "/some/prefix")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("HEAD: %v %v", err, resp)
	}
	resp, err = http.Post(url+"/some/prefix/v1/messages/count_tokens?beta=true", "application/json", strings.NewReader(strings.Repeat("x", 400)))
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp.Body); got != `{"input_tokens":100}` {
		t.Errorf("count_tokens = %s", got)
	}
	resp, err = http.Get(url + "/v1/models")
	if err != nil || resp.StatusCode != 404 {
		t.Fatalf("GET /v1/models: %v %v", err, resp)
	}
	var kinds []string
	for _, r := range srv.Requests() {
		kinds = append(kinds, r.Kind)
	}
	if want := []string{"main", "title", "classifier", "head", "count_tokens", "other"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
}

func TestPathPrefixAbsoluteFormAndBigBody(t *testing.T) {
	_, url := startServer(t, threeTurns)
	c := newConvo("please create hello.txt")
	c.messages = append(c.messages, map[string]any{"role": "system", "content": strings.Repeat("padding ", 20000)}) // ≈160 KB
	body := c.body(true)
	if len(body) < 128<<10 {
		t.Fatalf("body only %d bytes", len(body))
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/gateway/anthropic/v1/messages?beta=true", bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if m := assemble(t, parseSSE(t, resp.Body)); m.Stop != "tool_use" {
		t.Errorf("prefixed big request: %+v", m)
	}
	resp.Body.Close()

	// Absolute-form request target, as sent to a proxy.
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s/v1/messages?beta=true HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		url, strings.TrimPrefix(url, "http://"), len(body), body)
	resp, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := assemble(t, parseSSE(t, resp.Body)); m.Stop != "tool_use" {
		t.Errorf("absolute-form request: %+v", m)
	}
}

func TestSessionsAreCountedSeparately(t *testing.T) {
	srv, url := startServer(t, `
tasks:
  - name: a
    match: "task A"
    turns: [{text: "A done"}]
    faults: [{http: 429, retry_after: 1, first: 1}]
`)
	for _, s := range []string{"s1", "s2"} {
		if resp := post(t, url, s, newConvo("task A").body(true)); resp.StatusCode != 429 || resp.Header.Get("retry-after") != "1" {
			t.Fatalf("%s first request: %d retry-after %q", s, resp.StatusCode, resp.Header.Get("retry-after"))
		}
		if resp := post(t, url, s, newConvo("task A").body(true)); resp.StatusCode != 200 {
			t.Fatalf("%s second request: %d", s, resp.StatusCode)
		}
	}
	var got []string
	for _, r := range srv.Requests() {
		got = append(got, fmt.Sprintf("%s/%d/%d/%s", r.SessionID, r.Attempt, r.Status, r.Fault))
	}
	want := []string{"s1/1/429/http 429", "s1/2/200/", "s2/1/429/http 429", "s2/2/200/"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("log %v, want %v", got, want)
	}
}

func TestConcurrentSessions(t *testing.T) {
	srv, url := startServer(t, threeTurns+`
faults: [{rate: 0.2, http: 500}]
`)
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			session := fmt.Sprintf("sess-%d", i)
			c := newConvo("please create hello.txt")
			for turn := 1; turn <= 3; {
				req, _ := http.NewRequest(http.MethodPost, url+"/v1/messages?beta=true", bytes.NewReader(c.body(true)))
				req.Header.Set("X-Claude-Code-Session-Id", session)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- err
					return
				}
				if resp.StatusCode == 500 {
					resp.Body.Close()
					continue // retry like the CLI
				}
				var b bytes.Buffer
				_, _ = b.ReadFrom(resp.Body)
				resp.Body.Close()
				m, err := tryAssemble(b.Bytes())
				if err != nil {
					errs <- fmt.Errorf("%s: %v", session, err)
					return
				}
				if turn == 3 {
					if m.Blocks[0]["text"] != "All done." {
						errs <- fmt.Errorf("%s: turn 3 = %v", session, m.Blocks)
					}
					break
				}
				c.answer(toolUses(m.Blocks))
				turn++
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := len(srv.Requests()); got < 3*n {
		t.Errorf("only %d requests logged", got)
	}
}

func TestRequestLog(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "req.jsonl")
	srv, url := startServer(t, threeTurns, WithLogFile(logPath))
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/messages?beta=true", bytes.NewReader(newConvo("please create hello.txt").body(true)))
	req.Header.Set("X-Api-Key", "secret-key")
	req.Header.Set("Authorization", "Bearer secret-token")
	req.Header.Set("X-Claude-Code-Session-Id", "sess-1")
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp.Body)
	resp.Body.Close()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/v1/messages" || r.Query != "beta=true" || r.SessionID != "sess-1" ||
		!r.APIKey || !r.Authorization || r.Kind != KindMain || r.Task != "greet" || r.Turn != 1 || r.Attempt != 1 ||
		r.Status != 200 || r.Answer != "text + tool_use Write,Bash (tool_use)" || r.Model != "claude-opus-4-8" ||
		r.Prompt != "please create hello.txt" || r.BodyBytes == 0 || r.TokenEstimate != r.BodyBytes/4 || r.Time.IsZero() {
		t.Errorf("record %+v", r)
	}
	if r.Headers.Get("Anthropic-Version") != "2023-06-01" {
		t.Errorf("headers %v", r.Headers)
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("secret")) {
		t.Errorf("log leaks a secret: %s", data)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d log lines", len(lines))
	}
	var back Request
	if err := json.Unmarshal([]byte(lines[0]), &back); err != nil {
		t.Fatal(err)
	}
	if back.Task != "greet" || back.Kind != "main" || !back.APIKey || back.BodyBytes != r.BodyBytes {
		t.Errorf("JSONL record %+v", back)
	}
}

func TestStartAndClose(t *testing.T) {
	srv := NewServer(nil)
	if srv.URL() != "" {
		t.Error("URL before Start")
	}
	url, err := srv.Start("127.0.0.1:0")
	if err != nil || url != srv.URL() || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("Start = %q, %v; URL %q", url, err, srv.URL())
	}
	if _, err := srv.Start("127.0.0.1:0"); err == nil {
		t.Error("second Start succeeded")
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := http.Head(url); err == nil {
		t.Error("server still answers after Close")
	}
	if _, err := NewServer(nil, WithLogFile(filepath.Join(t.TempDir(), "no", "dir", "x.jsonl"))).Start("127.0.0.1:0"); err == nil {
		t.Error("Start with an unwritable log succeeded")
	}
}

func TestCloseEndsStalls(t *testing.T) {
	srv, url := startServer(t, `default: {turns: [{text: x}], faults: [{stall: before_headers}]}`)
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(url+"/v1/messages", "application/json", bytes.NewReader(newConvo("p").body(true)))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	_ = srv.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a stalled request got a response")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the stall")
	}
}
