package claude

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// streamLines reads a captured stream-json file from testdata/streams.
func streamLines(t testing.TB, name string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "streams", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		out = append(out, l)
	}
	return out
}

// findLine returns the first captured line of a stream containing all subs.
func findLine(t *testing.T, name string, subs ...string) []byte {
	t.Helper()
next:
	for _, l := range streamLines(t, name) {
		for _, s := range subs {
			if !bytes.Contains(l, []byte(s)) {
				continue next
			}
		}
		return l
	}
	t.Fatalf("no line in %s with %q", name, subs)
	return nil
}

func TestParseLineReal(t *testing.T) {
	t.Run("init", func(t *testing.T) {
		ev := ParseLine(findLine(t, "happy", `"subtype":"init"`))
		if ev.Type != TypeSystem || ev.Subtype != SubtypeInit || ev.Init == nil || ev.Err != nil {
			t.Fatalf("%+v", ev)
		}
		if ev.Init.Model != "claude-opus-4-8[1m]" || ev.Init.ClaudeCodeVersion != "2.1.197" || ev.Init.PermissionMode != "acceptEdits" ||
			ev.Init.APIKeySource != "ANTHROPIC_API_KEY" || len(ev.Init.Tools) != 4 || ev.SessionID == "" || ev.Init.Cwd == "" {
			t.Fatalf("init %+v", ev.Init)
		}
	})
	t.Run("assistant tool_use", func(t *testing.T) {
		ev := ParseLine(findLine(t, "happy", `"type":"assistant"`, `"name":"Write"`))
		a := ev.Assistant
		if a == nil || ev.Err != nil || len(a.Message.Content) != 1 {
			t.Fatalf("%+v", ev)
		}
		b := a.Message.Content[0]
		if b.Type != "tool_use" || b.Name != "Write" || !strings.HasPrefix(b.ID, "toolu_") || !bytes.Contains(b.Input, []byte(`"file_path":"hello.txt"`)) {
			t.Fatalf("block %+v", b)
		}
		if a.Message.Model != "claude-opus-4-8" || a.Message.StopReason != "" || a.Message.Usage.OutputTokens != 1 || a.RequestID == "" || a.Error != "" {
			t.Fatalf("message %+v", a)
		}
	})
	t.Run("assistant text", func(t *testing.T) {
		ev := ParseLine(findLine(t, "happy", `"type":"assistant"`, `"type":"text"`))
		if ev.Assistant == nil || ev.Assistant.Message.Content[0].Text != "Done: hello.txt says hello." {
			t.Fatalf("%+v", ev.Assistant)
		}
	})
	t.Run("user tool_result", func(t *testing.T) {
		ev := ParseLine(findLine(t, "happy", `"type":"user"`, `"tool_result"`, `File created`))
		u := ev.User
		if u == nil || ev.Err != nil || u.Message.Role != "user" || len(u.Message.Content) != 1 {
			t.Fatalf("%+v", ev)
		}
		if b := u.Message.Content[0]; b.Type != "tool_result" || b.ToolUseID == "" || b.IsError || !bytes.Contains(b.Content, []byte("File created")) {
			t.Fatalf("block %+v", b)
		}
		if !bytes.Contains(u.ToolUseResult, []byte(`"type":"create"`)) {
			t.Fatalf("tool_use_result %s", u.ToolUseResult)
		}
	})
	t.Run("user tool_result denied by hook", func(t *testing.T) {
		ev := ParseLine(findLine(t, "hook", `"type":"user"`, `"is_error":true`))
		if ev.User == nil || !ev.User.Message.Content[0].IsError || !bytes.Contains(ev.User.Message.Content[0].Content, []byte("PreToolUse:Write hook error")) {
			t.Fatalf("%+v", ev.User)
		}
	})
	t.Run("api_retry with a fractional delay", func(t *testing.T) {
		ev := ParseLine(findLine(t, "401", `"subtype":"api_retry"`))
		r := ev.APIRetry
		if r == nil || ev.Err != nil || r.Attempt != 1 || r.MaxRetries != 1 || r.ErrorStatus != 401 || r.Error != "authentication_failed" || r.RetryDelayMS <= 0 {
			t.Fatalf("%+v err %v", r, ev.Err)
		}
	})
	t.Run("api_retry timeout has null status", func(t *testing.T) {
		ev := ParseLine(findLine(t, "stall", `"subtype":"api_retry"`))
		if ev.APIRetry == nil || ev.APIRetry.ErrorStatus != 0 {
			t.Fatalf("%+v", ev.APIRetry)
		}
	})
	t.Run("synthetic assistant", func(t *testing.T) {
		ev := ParseLine(findLine(t, "429", `"<synthetic>"`))
		if ev.Assistant == nil || ev.Assistant.Error != "rate_limit" || ev.Assistant.Message.Model != SyntheticModel {
			t.Fatalf("%+v", ev.Assistant)
		}
	})
	t.Run("result success", func(t *testing.T) {
		ev := ParseLine(findLine(t, "happy", `"type":"result"`))
		r := ev.Result
		if r == nil || ev.Err != nil {
			t.Fatalf("%+v", ev)
		}
		if r.Subtype != ResultSuccess || r.IsError || r.NumTurns != 5 || r.Result != "Done: hello.txt says hello." || r.StopReason != "end_turn" ||
			r.TotalCostUSD <= 0 || r.Usage.InputTokens <= 0 || r.Usage.OutputTokens <= 0 || r.TerminalReason != "completed" || r.APIErrorStatus != 0 {
			t.Fatalf("%+v", r)
		}
		mu, ok := r.ModelUsage["claude-opus-4-8[1m]"]
		if !ok || mu.CostUSD != r.TotalCostUSD || mu.InputTokens <= 0 || mu.ContextWindow != 1000000 {
			t.Fatalf("modelUsage %+v", r.ModelUsage)
		}
	})
	t.Run("result max turns has errors and no result", func(t *testing.T) {
		ev := ParseLine(findLine(t, "maxturns", `"type":"result"`))
		if r := ev.Result; r == nil || r.Subtype != ResultMaxTurns || len(r.Errors) != 1 || r.Result != "" || !strings.Contains(r.Errors[0], "maximum number of turns") {
			t.Fatalf("%+v", ev.Result)
		}
	})
	t.Run("result with permission denials", func(t *testing.T) {
		ev := ParseLine(findLine(t, "hook", `"type":"result"`))
		if r := ev.Result; r == nil || len(r.PermissionDenials) != 1 || r.PermissionDenials[0].ToolName != "Write" || r.PermissionDenials[0].ToolUseID == "" {
			t.Fatalf("%+v", ev.Result)
		}
	})
	t.Run("unknown system subtype kept raw", func(t *testing.T) {
		line := findLine(t, "refusal", `"model_refusal_no_fallback"`)
		ev := ParseLine(line)
		if ev.Type != TypeSystem || ev.Subtype != "model_refusal_no_fallback" || !bytes.Equal(ev.Raw, line) ||
			ev.Init != nil || ev.Assistant != nil || ev.Result != nil || ev.Err != nil {
			t.Fatalf("%+v", ev)
		}
	})
}

func TestParseLineEdgeCases(t *testing.T) {
	cases := []struct {
		name, line  string
		typ, sub    string
		json, typed bool
		err         bool
	}{
		{"empty", "", "", "", false, false, false},
		{"plain text", "Warning: no stdin data received in 3s", "", "", false, false, false},
		{"json array", `[1,2]`, "", "", false, false, false},
		{"json string", `"x"`, "", "", false, false, false},
		{"broken json", `{"type":"result",`, "", "", false, false, false},
		{"object without type", `{"a":1}`, "unknown", "", true, false, false},
		{"type not a string", `{"type":5}`, "unknown", "", true, false, false},
		{"unknown type", `{"type":"rate_limit_event","x":{}}`, "rate_limit_event", "", true, false, false},
		{"stream_event", `{"type":"stream_event","event":{"type":"message_delta"}}`, "stream_event", "", true, false, false},
		{"user with string content", `{"type":"user","message":{"role":"user","content":"[Request interrupted by user]"}}`, "user", "", true, true, false},
		{"result with a float where an int was", `{"type":"result","subtype":"success","is_error":false,"num_turns":2.5,"total_cost_usd":0.5,"result":"ok"}`, "result", "success", true, true, true},
		{"result with garbage usage", `{"type":"result","subtype":"success","usage":"lots","result":"ok"}`, "result", "success", true, true, true},
		{"assistant with wrong content", `{"type":"assistant","message":{"id":"m","content":"oops"}}`, "assistant", "", true, true, true},
		{"leading spaces and CR", "  {\"type\":\"system\",\"subtype\":\"init\",\"model\":\"m\"}\r", "system", "init", true, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := ParseLine([]byte(tc.line))
			if ev.Type != tc.typ || ev.Subtype != tc.sub || ev.IsJSON() != tc.json || (ev.Err != nil) != tc.err || string(ev.Raw) != tc.line {
				t.Fatalf("ParseLine(%q) = type %q sub %q json %v err %v raw %q", tc.line, ev.Type, ev.Subtype, ev.IsJSON(), ev.Err, ev.Raw)
			}
			typed := ev.Init != nil || ev.Assistant != nil || ev.User != nil || ev.Result != nil || ev.APIRetry != nil || ev.HookResponse != nil
			if typed != tc.typed {
				t.Fatalf("typed = %v, want %v", typed, tc.typed)
			}
		})
	}
	// The lenient fallback keeps the fields that do decode.
	ev := ParseLine([]byte(`{"type":"result","subtype":"success","is_error":false,"num_turns":2.5,"total_cost_usd":0.5,"result":"ok"}`))
	if ev.Result.Result != "ok" || ev.Result.TotalCostUSD != 0.5 || ev.Result.Subtype != "success" {
		t.Fatalf("lenient result %+v", ev.Result)
	}
	ev = ParseLine([]byte(`{"type":"user","message":{"role":"user","content":"[Request interrupted by user]"}}`))
	if c := ev.User.Message.Content; len(c) != 1 || c[0].Text != "[Request interrupted by user]" {
		t.Fatalf("string content %+v", c)
	}
}

func FuzzParseLine(f *testing.F) {
	for _, name := range []string{"happy", "hook", "401", "maxturns", "refusal"} {
		for _, l := range streamLines(f, name) {
			f.Add(l)
		}
	}
	for _, s := range []string{"", "{", `{"type":"result","usage":{"input_tokens":"x"}}`, `{"type":"user","message":{"content":[1,2]}}`,
		`{"type":"assistant","message":null}`, `{"type":"system","subtype":"api_retry","attempt":"1"}`, "\x00\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		ev := ParseLine(line)
		if !bytes.Equal(ev.Raw, line) {
			t.Fatalf("raw not kept")
		}
		// Folding any event into the state must not panic either.
		st := newState(ev.Time)
		st.observe(ev)
		_ = st.outcome(procFacts{})
	})
}

func readAllLines(t *testing.T, r io.Reader, max int) (lines []string, truncated []bool) {
	t.Helper()
	lr := newLineReader(r, max)
	for {
		l, tr, err := lr.next()
		if err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			return
		}
		lines = append(lines, string(l))
		truncated = append(truncated, tr)
	}
}

func TestLineReader(t *testing.T) {
	huge := strings.Repeat("a", 3<<20) // larger than bufio's buffer and Scanner's default
	input := "one\r\ntwo\n\n" + huge + "\n" + "tail-without-newline"
	lines, tr := readAllLines(t, strings.NewReader(input), 4<<20)
	want := []string{"one", "two", "", huge, "tail-without-newline"}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d", len(lines), len(want))
	}
	for i := range want {
		if lines[i] != want[i] || tr[i] {
			t.Fatalf("line %d: len %d truncated %v, want len %d", i, len(lines[i]), tr[i], len(want[i]))
		}
	}
	// Over the limit: the first max bytes, flagged, and the next line intact.
	lines, tr = readAllLines(t, iotest.OneByteReader(strings.NewReader(strings.Repeat("b", 100)+"\nnext\n")), 10)
	if len(lines) != 2 || lines[0] != strings.Repeat("b", 10) || !tr[0] || lines[1] != "next" || tr[1] {
		t.Fatalf("lines %q truncated %v", lines, tr)
	}
	// Exactly at the limit is not truncated.
	lines, tr = readAllLines(t, strings.NewReader("0123456789\n"), 10)
	if len(lines) != 1 || tr[0] {
		t.Fatalf("lines %q truncated %v", lines, tr)
	}
	// Lines past a 64 KiB Scanner default survive the real reader path too.
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	w.WriteString(`{"type":"user","message":{"role":"user","content":"` + strings.Repeat("z", 200<<10) + `"}}` + "\n")
	w.Flush()
	lines, _ = readAllLines(t, &buf, MaxLineSize)
	if ev := ParseLine([]byte(lines[0])); ev.User == nil || len(ev.User.Message.Content[0].Text) != 200<<10 {
		t.Fatal("large user line not parsed")
	}
}

func TestToolResultText(t *testing.T) {
	for _, c := range []struct {
		raw, want string
		ok        bool
	}{
		{`"exit 1"`, "exit 1", true},
		{`[{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"b"}]`, "a\nb", true},
		{`{"odd":true}`, "", false},
	} {
		got, ok := ToolResultText(json.RawMessage(c.raw))
		if got != c.want || ok != c.ok {
			t.Errorf("ToolResultText(%s) = %q, %v; want %q, %v", c.raw, got, ok, c.want, c.ok)
		}
	}
	if got := ToolResultDisplay(json.RawMessage(`{"odd":true}`)); got != `{"odd":true}` {
		t.Errorf("ToolResultDisplay of another shape = %q, want it as it came", got)
	}
}
