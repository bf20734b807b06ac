package mockapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// faultServer serves one text turn ("hello world") with the given fault on
// the default script.
func faultServer(t *testing.T, fault string) (*Server, string) {
	return startServer(t, fmt.Sprintf("default:\n  turns: [{text: \"hello world\"}]\n  faults: [%s]\n", fault))
}

func TestHTTPFaults(t *testing.T) {
	for _, tc := range []struct {
		fault, typ, msg string
		status          int
		headers         map[string]string
	}{
		{`{http: 429, retry_after: 2}`, "rate_limit_error", "", 429, map[string]string{"retry-after": "2"}},
		{`{http: 529}`, "overloaded_error", "Overloaded", 529, nil},
		{`{http: 500, should_retry: false}`, "api_error", "", 500, map[string]string{"x-should-retry": "false"}},
		{`{http: 401}`, "authentication_error", "", 401, nil},
		{`{http: 400, message: "messages: bad"}`, "invalid_request_error", "messages: bad", 400, nil},
		{`{http: 404}`, "not_found_error", "model: claude-opus-4-8", 404, nil},
		{`{http: 503, error_type: overloaded_error}`, "overloaded_error", "", 503, nil},
		{`{http: 429, error_type: rate_limit_error, message: "usage limit", headers: {anthropic-ratelimit-requests-reset: "2030-01-01T00:00:00Z"}}`,
			"rate_limit_error", "usage limit", 429, map[string]string{"anthropic-ratelimit-requests-reset": "2030-01-01T00:00:00Z"}},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			srv, url := faultServer(t, tc.fault)
			resp := post(t, url, "s", newConvo("p").body(true))
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			for k, v := range tc.headers {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			var body struct {
				Type  string            `json:"type"`
				Error map[string]string `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if body.Type != "error" || body.Error["type"] != tc.typ || (tc.msg != "" && body.Error["message"] != tc.msg) {
				t.Errorf("error body %+v", body)
			}
			if r := srv.Requests()[0]; r.Status != tc.status || !strings.HasPrefix(r.Fault, "http ") || r.FaultID != "default.faults[0]" {
				t.Errorf("log %+v", r)
			}
		})
	}
}

// reset_in: the reset headers say the moment of the answer plus reset_in,
// in whole seconds rounded up, so a test can script a limit that resets
// soon; a header the fault names itself wins.
func TestResetIn(t *testing.T) {
	_, url := faultServer(t, `{http: 429, reset_in: 20s, headers: {anthropic-ratelimit-tokens-reset: "2030-01-01T00:00:00Z"}}`)
	before := time.Now()
	resp := post(t, url, "s", newConvo("p").body(true))
	after := time.Now()
	if resp.StatusCode != 429 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	at, err := time.Parse(time.RFC3339, resp.Header.Get("anthropic-ratelimit-requests-reset"))
	if err != nil {
		t.Fatalf("requests-reset: %v", err)
	}
	if lo, hi := before.Add(20*time.Second).Truncate(time.Second), after.Add(21*time.Second); at.Before(lo) || at.After(hi) {
		t.Errorf("reset %s, want between %s and %s", at, lo, hi)
	}
	if got := resp.Header.Get("anthropic-ratelimit-tokens-reset"); got != "2030-01-01T00:00:00Z" {
		t.Errorf("tokens-reset %q: the fault's own header must win", got)
	}
}

func TestMalformedFaults(t *testing.T) {
	for _, kind := range []string{"garbage", "bad_json", "no_message_start", "truncated", "error_event"} {
		t.Run(kind, func(t *testing.T) {
			_, url := faultServer(t, "{malformed: "+kind+"}")
			resp := post(t, url, "s", newConvo("p").body(true))
			body := readAll(t, resp.Body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if m, err := tryAssemble([]byte(body)); err == nil && m.Start != nil && m.Complete {
				t.Errorf("a well-formed message came through: %s", body)
			}
			// The default kinds include the fallback: it is malformed too (persistent).
			resp = post(t, url, "s", newConvo("p").body(false))
			var v any
			if json.Unmarshal([]byte(readAll(t, resp.Body)), &v) == nil {
				t.Error("the non-streaming fallback got valid JSON")
			}
		})
	}
}

func TestRecoverableMalformedStream(t *testing.T) {
	_, url := faultServer(t, "{malformed: truncated, first: 1}")
	m := assemble(t, parseSSE(t, post(t, url, "s", newConvo("p").body(true)).Body))
	if m.Complete || m.Start == nil {
		t.Fatalf("first answer should be cut off: %+v", m)
	}
	// The CLI's non-streaming retry gets the real answer.
	var msg map[string]any
	if err := json.NewDecoder(post(t, url, "s", newConvo("p").body(false)).Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if msg["content"].([]any)[0].(map[string]any)["text"] != "hello world" {
		t.Errorf("fallback answer %v", msg)
	}
}

func TestStopFaults(t *testing.T) {
	for _, tc := range []struct {
		stop, wantStop string
		blocks         int
	}{{"max_tokens", "max_tokens", 1}, {"refusal", "refusal", 0}, {"empty", "end_turn", 0}} {
		t.Run(tc.stop, func(t *testing.T) {
			_, url := faultServer(t, "{stop: "+tc.stop+", first: 1}")
			m := assemble(t, parseSSE(t, post(t, url, "s", newConvo("p").body(true)).Body))
			if m.Stop != tc.wantStop || len(m.Blocks) != tc.blocks || !m.Complete {
				t.Errorf("got %+v", m)
			}
			// A continuation lands on the same turn and gets the real answer.
			m = assemble(t, parseSSE(t, post(t, url, "s", newConvo("p").body(true)).Body))
			if m.Stop != "end_turn" || m.Blocks[0]["text"] != "hello world" {
				t.Errorf("second answer %+v", m)
			}
		})
	}
}

func TestStallAndDropFaults(t *testing.T) {
	t.Parallel()
	client := &http.Client{Timeout: 3 * time.Second}
	do := func(url string, stream bool) (*http.Response, error) {
		return client.Post(url+"/v1/messages", "application/json", bytes.NewReader(newConvo("p").body(stream)))
	}
	t.Run("before_headers for a duration", func(t *testing.T) {
		t.Parallel()
		srv, url := faultServer(t, "{stall: before_headers, duration: 300ms}")
		start := time.Now()
		_, err := do(url, true)
		if err == nil || time.Since(start) < 300*time.Millisecond {
			t.Fatalf("err %v after %v", err, time.Since(start))
		}
		if r := srv.Requests()[0]; r.Answer != "stall before_headers, then dropped the connection" {
			t.Errorf("log answer %q", r.Answer)
		}
	})
	t.Run("before_headers until the client goes away", func(t *testing.T) {
		t.Parallel()
		srv, url := faultServer(t, "{stall: before_headers}")
		c := &http.Client{Timeout: 300 * time.Millisecond}
		if _, err := c.Post(url+"/v1/messages", "application/json", bytes.NewReader(newConvo("p").body(true))); err == nil {
			t.Fatal("got a response")
		}
		deadline := time.Now().Add(3 * time.Second)
		for len(srv.Requests()) == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if r := srv.Requests(); len(r) != 1 || r[0].Answer != "stall before_headers until the client went away" {
			t.Errorf("log %+v", r)
		}
	})
	t.Run("after_headers", func(t *testing.T) {
		t.Parallel()
		_, url := faultServer(t, "{stall: after_headers, duration: 1s}")
		start := time.Now()
		resp, err := do(url, true)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%v %v", resp, err)
		}
		if time.Since(start) > 900*time.Millisecond {
			t.Errorf("headers took %v: they should come before the stall", time.Since(start))
		}
		if body := readAll(t, resp.Body); body != "" || time.Since(start) < time.Second {
			t.Errorf("body %q after %v", body, time.Since(start))
		}
	})
	t.Run("after_message_start", func(t *testing.T) {
		t.Parallel()
		_, url := faultServer(t, "{stall: after_message_start, duration: 200ms}")
		resp, err := do(url, true)
		if err != nil {
			t.Fatal(err)
		}
		evs := parseSSE(t, resp.Body)
		if len(evs) != 1 || evs[0].Name != "message_start" {
			t.Errorf("events %v", evs)
		}
	})
	t.Run("drop before_headers", func(t *testing.T) {
		t.Parallel()
		_, url := faultServer(t, "{drop: before_headers}")
		if _, err := do(url, true); err == nil {
			t.Error("got a response")
		}
	})
	t.Run("drop mid_stream", func(t *testing.T) {
		t.Parallel()
		srv, url := faultServer(t, "{drop: mid_stream}")
		resp, err := do(url, true)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		if err == nil {
			t.Errorf("body ended cleanly: %q", body)
		}
		if !strings.Contains(string(body), "message_start") {
			t.Errorf("no message_start before the drop: %q", body)
		}
		if r := srv.Requests()[0]; r.Answer != "drop mid_stream" || r.Fault != "drop mid_stream" {
			t.Errorf("log %+v", r)
		}
	})
	t.Run("delay", func(t *testing.T) {
		t.Parallel()
		_, url := faultServer(t, "{delay: 250ms}")
		start := time.Now()
		resp, err := do(url, true)
		if err != nil {
			t.Fatal(err)
		}
		if m := assemble(t, parseSSE(t, resp.Body)); m.Blocks[0]["text"] != "hello world" || time.Since(start) < 250*time.Millisecond {
			t.Errorf("delayed answer %+v after %v", m, time.Since(start))
		}
	})
}

func TestFaultSelectors(t *testing.T) {
	srv, url := startServer(t, `
tasks:
  - name: t
    match: work
    turns:
      - tools: [{name: Bash, input: {command: "true"}}]
      - text: end
        faults: [{http: 503, first: 1}]
    faults:
      - {http: 429, first: 1}
      - {http: 500, after: 1, first: 2, turn: 1}
      - {http: 418, model: haiku}
      - {http: 402, kinds: [title]}
`)
	c := newConvo("work")
	status := func(model string) int {
		var m map[string]any
		_ = json.Unmarshal(c.body(true), &m)
		m["model"] = model
		b, _ := json.Marshal(m)
		resp := post(t, url, "s", b)
		if resp.StatusCode == 200 && model != "haiku" {
			tus := toolUses(assemble(t, parseSSE(t, resp.Body)).Blocks)
			if len(tus) > 0 {
				c.answer(tus)
			}
		}
		return resp.StatusCode
	}
	var got []int
	for range 4 {
		got = append(got, status("opus"))
	}
	got = append(got, status("claude-haiku-4-5"))
	// Turn 1: 429 (first: 1); then OK (the 500 fault skips its first
	// candidate). Turn 2: the turn's own 503 once, then OK; haiku gets 418.
	// The title-only fault never applies to main requests.
	want := []int{429, 200, 503, 200, 418}
	for _, r := range srv.Requests() {
		if r.Fault == "http 402" {
			t.Errorf("title fault hit a %s request", r.Kind)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
}

func TestFaultSelectorsAfter(t *testing.T) {
	_, url := faultServer(t, "{http: 500, after: 1, first: 2}")
	var got []int
	for range 4 {
		got = append(got, post(t, url, "s", newConvo("p").body(true)).StatusCode)
	}
	if want := []int{200, 500, 200, 200}; !reflect.DeepEqual(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
}

// after_requests counts the server's requests from every session: the
// account runs out after two requests, whoever makes the third.
func TestFaultSelectorAfterRequests(t *testing.T) {
	_, url := faultServer(t, `{http: 400, after_requests: 2, message: "Your credit balance is too low to access the Anthropic API."}`)
	var got []int
	for i := range 5 {
		got = append(got, post(t, url, fmt.Sprintf("s%d", i), newConvo("p").body(true)).StatusCode)
	}
	if want := []int{200, 200, 400, 400, 400}; !reflect.DeepEqual(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
}

// chaos is the later chaos test's shape: 30 % random faults with a seed.
const chaos = `
seed: 7
default:
  turns: [{text: ok}]
faults:
  - rate: 0.3
    any_of:
      - {http: 429, retry_after: 1}
      - {http: 529}
      - {http: 500}
      - {stall: before_headers, duration: 10ms}
`

func chaosRun(t *testing.T, yamlText string, opts ...Option) []string {
	srv, url := startServer(t, yamlText, opts...)
	client := &http.Client{Timeout: 5 * time.Second}
	for i := range 400 {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/messages", bytes.NewReader(newConvo(fmt.Sprintf("p%d", i%7)).body(true)))
		req.Header.Set("X-Claude-Code-Session-Id", fmt.Sprintf("s%d", i%5))
		if resp, err := client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	var out []string
	for _, r := range srv.Requests() {
		out = append(out, r.Fault)
	}
	return out
}

func TestRandomFaultsAreSeededAndDeterministic(t *testing.T) {
	t.Parallel()
	// The three runs (twice the seed, once another) share nothing and
	// mostly wait on stalls: they run side by side.
	var a, b, c []string
	t.Run("runs", func(t *testing.T) {
		for _, r := range []struct {
			name string
			out  *[]string
			opts []Option
		}{{"seed 7", &a, nil}, {"seed 7 again", &b, nil}, {"seed 8", &c, []Option{WithSeed(8)}}} {
			t.Run(r.name, func(t *testing.T) {
				t.Parallel()
				*r.out = chaosRun(t, chaos, r.opts...)
			})
		}
	})
	if t.Failed() {
		return
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different faults")
	}
	counts := map[string]int{}
	for _, f := range a {
		counts[f]++
	}
	faulted := len(a) - counts[""]
	if faulted < 90 || faulted > 150 { // 30 % of 400 = 120
		t.Errorf("%d of %d requests faulted, want ≈120 (%v)", faulted, len(a), counts)
	}
	for _, f := range []string{"http 429", "http 529", "http 500", "stall before_headers 10ms"} {
		if counts[f] < 10 {
			t.Errorf("fault %q fired only %d times (%v)", f, counts[f], counts)
		}
	}
	if reflect.DeepEqual(a, c) {
		t.Error("a different seed gave the same faults")
	}
}

func TestMaxPerTurn(t *testing.T) {
	got := chaosRun(t, "default: {turns: [{text: ok}]}\nfaults: [{rate: 1, max_per_turn: 2, http: 500}]\n")
	// 5 sessions × 7 prompts (tasks all "default") → per session 2 faults, then none.
	n := 0
	for _, f := range got {
		if f != "" {
			n++
		}
	}
	if n != 10 {
		t.Errorf("%d faults, want 2 per session (10)", n)
	}
}
