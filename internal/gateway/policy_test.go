package gateway

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// cliRequest is one request the pinned CLI sent (testdata, recorded through
// a logging proxy: the last request of a 9-turn session per model, with
// Write, Read, Glob, Grep, Edit and Bash calls, a hook denial and a
// permission-rule denial in its history).
type cliRequest struct {
	Method        string          `json:"method"`
	Path          string          `json:"path"`
	AnthropicBeta string          `json:"anthropic_beta"`
	Body          json.RawMessage `json:"body"`
}

func cliRequests(t *testing.T) []cliRequest {
	t.Helper()
	f, err := os.Open("testdata/cli-requests.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []cliRequest
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r cliRequest
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if len(out) != 3 {
		t.Fatalf("%d recorded requests, want 3 (haiku, opus, sonnet)", len(out))
	}
	return out
}

// strictPolicy is what a sonnet task with a haiku fallback gets.
func strictPolicy() Policy {
	return Policy{Models: []string{"sonnet", "haiku"}, MaxTokens: 64000}
}

func noEgress(string, int) bool { return false }

// The CLI's own requests pass: every model's, with its betas.
func TestPolicyAcceptsTheCLIsRequests(t *testing.T) {
	for _, r := range cliRequests(t) {
		p := Policy{Models: []string{"sonnet", "haiku", "opus"}, MaxTokens: 64000}
		h := http.Header{}
		h.Set("Anthropic-Beta", r.AnthropicBeta)
		if _, unreviewed, ref := p.checkHeaders(h); ref != nil || len(unreviewed) > 0 {
			t.Errorf("%s: headers refused (%+v) or not reviewed: %v", r.Path, ref, unreviewed)
		}
		c, ref := p.checkBody(r.Body, false, noEgress)
		if ref != nil || len(c.unreviewed) > 0 {
			t.Errorf("%s: refused (%+v) or not reviewed: %v", c.model, ref, c.unreviewed)
		}
	}
}

// Each refusal class, against a body the CLI really sent: the control is
// the unchanged body, which passes (above).
func TestPolicyRefuses(t *testing.T) {
	base := map[string]any{}
	if err := json.Unmarshal(cliRequests(t)[2].Body, &base); err != nil { // sonnet
		t.Fatal(err)
	}
	with := func(change func(m map[string]any)) []byte {
		b, _ := json.Marshal(base)
		var m map[string]any
		json.Unmarshal(b, &m)
		change(m)
		out, _ := json.Marshal(m)
		return out
	}
	userBlock := func(block map[string]any) func(m map[string]any) {
		return func(m map[string]any) {
			m["messages"] = append(m["messages"].([]any), map[string]any{"role": "user", "content": []any{block}})
		}
	}
	allowExample := func(h string, port int) bool { return h == "example.com" && port == 443 }
	cases := []struct {
		name   string
		body   []byte
		policy func(*Policy)
		egress func(string, int) bool
		want   string
	}{
		{"opus in a sonnet task", with(func(m map[string]any) { m["model"] = "claude-opus-4-8" }), nil, nil, "is not this task's"},
		{"an unknown model", with(func(m map[string]any) { m["model"] = "Your credit balance is too low" }), nil, nil, "is not this task's"},
		{"max_tokens above the cap", with(func(m map[string]any) { m["max_tokens"] = 200000 }), nil, nil, "above the cap"},
		{"max_tokens missing", with(func(m map[string]any) { delete(m, "max_tokens") }), nil, nil, "max_tokens"},
		{"web_fetch", with(func(m map[string]any) {
			m["tools"] = append(m["tools"].([]any), map[string]any{"type": "web_fetch_20250910", "name": "web_fetch"})
		}), nil, nil, "server-side tool"},
		{"web_search allowed but no domains", with(func(m map[string]any) {
			m["tools"] = append(m["tools"].([]any), map[string]any{"type": "web_search_20250305", "name": "web_search"})
		}), func(p *Policy) { p.ServerTools = []string{ServerToolWebSearch} }, allowExample, "allowed_domains"},
		{"web_search to a domain outside egress.allow", with(func(m map[string]any) {
			m["tools"] = append(m["tools"].([]any), map[string]any{"type": "web_search_20250305", "name": "web_search", "allowed_domains": []string{"example.com", "evil.example"}})
		}), func(p *Policy) { p.ServerTools = []string{ServerToolWebSearch} }, allowExample, "evil.example"},
		{"code execution", with(func(m map[string]any) {
			m["tools"] = append(m["tools"].([]any), map[string]any{"type": "code_execution_20250825", "name": "code_execution"})
		}), nil, nil, "server-side tool"},
		{"an MCP server", with(func(m map[string]any) {
			m["mcp_servers"] = []any{map[string]any{"type": "url", "url": "https://evil.example/mcp", "name": "x"}}
		}), nil, nil, "MCP servers are not allowed"},
		{"an allowed MCP kind, a host outside egress.allow", with(func(m map[string]any) {
			m["mcp_servers"] = []any{map[string]any{"type": "url", "url": "https://evil.example/mcp", "name": "x"}}
		}), func(p *Policy) { p.ServerTools = []string{ServerToolMCP} }, allowExample, "not in egress.allow"},
		{"an image by URL", with(userBlock(map[string]any{"type": "image", "source": map[string]any{"type": "url", "url": "https://evil.example/?d=secret"}})), nil, nil, `"url" source`},
		{"a document from the Files API", with(userBlock(map[string]any{"type": "document", "source": map[string]any{"type": "file", "file_id": "file_abc"}})), nil, nil, `"file" source`},
		{"a URL image inside a tool result", with(userBlock(map[string]any{"type": "tool_result", "tool_use_id": "x", "content": []any{
			map[string]any{"type": "image", "source": map[string]any{"type": "url", "url": "https://evil.example/"}}}})), nil, nil, `"url" source`},
		{"a container upload", with(userBlock(map[string]any{"type": "container_upload", "file_id": "file_abc"})), nil, nil, "container_upload"},
		{"service_tier", with(func(m map[string]any) { m["service_tier"] = "priority" }), nil, nil, "service_tier"},
		{"a code-execution container", with(func(m map[string]any) { m["container"] = "container_x" }), nil, nil, "container"},
		{"not JSON", []byte("{"), nil, nil, "not a JSON object"},
	}
	for _, c := range cases {
		p := strictPolicy()
		if c.policy != nil {
			c.policy(&p)
		}
		egress := c.egress
		if egress == nil {
			egress = noEgress
		}
		_, ref := p.checkBody(c.body, false, egress)
		if ref == nil || !strings.Contains(ref.reason, c.want) {
			t.Errorf("%s: refusal %+v, want one naming %q", c.name, ref, c.want)
		}
	}
	// Allowed on purpose: web_search to allowlisted domains, an MCP server
	// on an allowlisted host.
	p := strictPolicy()
	p.ServerTools = []string{ServerToolWebSearch, ServerToolMCP}
	ok := with(func(m map[string]any) {
		m["tools"] = append(m["tools"].([]any), map[string]any{"type": "web_search_20250305", "name": "web_search", "allowed_domains": []string{"example.com"}})
		m["mcp_servers"] = []any{map[string]any{"type": "url", "url": "https://example.com/mcp", "name": "x"}}
	})
	if _, ref := p.checkBody(ok, false, allowExample); ref != nil {
		t.Errorf("allowed server tools refused: %s", ref.reason)
	}
}

func TestPolicyModels(t *testing.T) {
	cases := []struct {
		allowed []string
		model   string
		want    bool
	}{
		{[]string{"sonnet"}, "claude-sonnet-5", true},
		{[]string{"sonnet"}, "claude-sonnet-4-5-20250929", true},
		{[]string{"sonnet"}, "claude-opus-4-8", false},
		{[]string{"sonnet"}, "claude-sonnetx", false},
		{[]string{"haiku"}, "claude-haiku-4-5-20251001", true},
		{[]string{"opus[1m]"}, "claude-opus-4-8", true},
		{[]string{"opusplan"}, "claude-sonnet-5", true},
		{[]string{"claude-sonnet-4-5"}, "claude-sonnet-4-5", true},
		{[]string{"claude-sonnet-4-5"}, "claude-sonnet-5", false},
		{nil, "anything", true},
	}
	for _, c := range cases {
		p := Policy{Models: c.allowed}
		if got := p.ModelAllowed(c.model); got != c.want {
			t.Errorf("%v allows %q: %v, want %v", c.allowed, c.model, got, c.want)
		}
	}
}

func TestPolicyRoutesAndBetas(t *testing.T) {
	for _, c := range []struct {
		method, target string
		status         int
	}{
		{"GET", "/v1/messages/batches", 404},
		{"POST", "/v1/messages/batches", 404},
		{"POST", "/v1/messages/batches/msgbatch_x/cancel", 404},
		{"GET", "/v1/messages", 405},
		{"POST", "/v1/files", 404},
		{"POST", "/v1/messages?beta=true&x=1", 400},
		{"POST", "/v1/messages?beta=true", 0},
		{"POST", "/v1/messages/count_tokens?beta=true", 0},
	} {
		r, _ := http.NewRequest(c.method, "http://127.0.0.1:3128"+c.target, nil)
		_, ref := checkRoute(r)
		got := 0
		if ref != nil {
			got = ref.status
		}
		if got != c.status {
			t.Errorf("%s %s: %d, want %d", c.method, c.target, got, c.status)
		}
	}
	p := Policy{Betas: []string{"extra-2026-01-01", "files-api-2025-04-14"}}
	strict := p
	strict.Strict = true
	for _, c := range []struct {
		beta       string
		ok, strict bool   // allowed by p, by strict
		unreviewed string // what p forwards unreviewed
	}{
		{"claude-code-20250219,effort-2025-11-24", true, true, ""},
		{"per-turn-control-2026-07-01", true, true, ""},
		{"extra-2026-01-01", true, true, ""},
		{"files-api-2025-04-14", true, true, ""}, // a denied family, allowed by name
		{"future-feature-2027-01-01", true, false, "beta future-feature-2027-01-01"},
		{"mcp-client-2025-04-04", false, false, ""},
		{"mcp-servers-2025-12-04", false, false, ""},
		{"claude-code-20250219, files-api-2026-01-01", false, false, ""},
		{"skills-2025-10-02", false, false, ""},
		{"code-execution-2025-08-25", false, false, ""},
		{"web-fetch-2025-09-10", false, false, ""},
		{"message-batches-2024-09-24", false, false, ""},
	} {
		h := http.Header{}
		h.Set("Anthropic-Beta", c.beta)
		_, unreviewed, ref := p.checkHeaders(h)
		if (ref == nil) != c.ok || strings.Join(unreviewed, ",") != c.unreviewed {
			t.Errorf("beta %q: refusal %+v, unreviewed %v; want allowed %v, unreviewed %q", c.beta, ref, unreviewed, c.ok, c.unreviewed)
		}
		if ref != nil && !strings.Contains(ref.fix, "gateway.betas") {
			t.Errorf("beta %q: the fix %q does not name gateway.betas", c.beta, ref.fix)
		}
		if _, _, ref := strict.checkHeaders(h); (ref == nil) != c.strict {
			t.Errorf("beta %q, strict: refusal %+v, want allowed %v", c.beta, ref, c.strict)
		}
	}
	h := http.Header{}
	h.Set("Content-Encoding", "gzip")
	if _, _, ref := p.checkHeaders(h); ref == nil {
		t.Error("a gzip request body passed: it could hide anything")
	}
}

// A refused request never reaches the upstream, is audited, and the
// worker gets a clear error; the same request, allowed, does reach it (the
// control).
func TestRefusedRequestsNeverReachTheAPI(t *testing.T) {
	up, got := recordingUpstream(t, "")
	var audited []string
	g, sock := startGW(t, Config{Upstream: up.URL, Policy: strictPolicy(), Audit: func(kind string, f map[string]any) error {
		audited = append(audited, fmt.Sprintf("%s %v", kind, f["reason"]))
		return nil
	}}, nil)
	c := apiClient(sock)
	resp := post(t, c, baseURL+"/v1/messages", placeholder, messagesBody(false)) // opus
	body := readBody(t, resp)
	if resp.StatusCode != 400 || !strings.Contains(body, "zerg gateway: refused: model") {
		t.Errorf("opus in a sonnet task: %d %s", resp.StatusCode, body)
	}
	resp = post(t, c, baseURL+"/v1/messages/batches", placeholder, "{}")
	readBody(t, resp)
	if n := len(got()); n != 0 {
		t.Fatalf("the upstream saw %d refused requests", n)
	}
	st := g.Stats()
	if len(st.Refused) != 2 || st.Refused[0].Kind != RefusedPolicy || st.Requests != 0 {
		t.Errorf("stats: %+v", st)
	}
	if len(audited) != 2 || !strings.HasPrefix(audited[0], AuditRefused) {
		t.Errorf("audited: %v", audited)
	}
	// Control: the same gateway forwards the task's own model.
	sonnet := strings.Replace(messagesBody(false), "claude-opus-4-8", "claude-sonnet-5", 1)
	readBody(t, post(t, c, baseURL+"/v1/messages", placeholder, sonnet))
	if n := len(got()); n != 1 {
		t.Errorf("the upstream saw %d requests of the task's own model, want 1", n)
	}
}

// The gateway meters the attempt's spend from the API's usage at the
// requested model's price and refuses once the task's budget, or the
// run's, is spent.
func TestBudgetEnforcedAtTheGateway(t *testing.T) {
	var calls atomic.Int64
	up := usageUpstream(t, &calls, 1_000_000, 0) // $1 a request at $1/Mtok input
	price := func(model string, u Usage) float64 {
		if !strings.Contains(model, "haiku") {
			t.Errorf("priced at %q, want the request's model", model)
		}
		return float64(u.InputTokens) / 1e6
	}
	haiku := strings.Replace(messagesBody(false), "claude-opus-4-8", "claude-haiku-4-5-20251001", 1)

	g, sock := startGW(t, Config{Upstream: up.URL, Price: price, Policy: Policy{Models: []string{"haiku"}, TaskUSD: 2.5}}, nil)
	c := apiClient(sock)
	var statuses []int
	for range 5 {
		resp := post(t, c, baseURL+"/v1/messages", placeholder, haiku)
		readBody(t, resp)
		statuses = append(statuses, resp.StatusCode)
	}
	st := g.Stats()
	if fmt.Sprint(statuses) != "[200 200 200 400 400]" || calls.Load() != 3 || st.BudgetStop != BudgetTask {
		t.Errorf("statuses %v, upstream calls %d, stop %q; want 3 answered then refused at $2.50", statuses, calls.Load(), st.BudgetStop)
	}
	if st.CostUSD != 3 {
		t.Errorf("cost $%v, want $3 (the API's usage, the request's model)", st.CostUSD)
	}

	// The run's budget, shared by two gateways.
	calls.Store(0)
	run := NewMeter(3, 1.5) // $1.50 already spent by earlier attempts
	g1, s1 := startGW(t, Config{Upstream: up.URL, Price: price, Policy: Policy{Run: run}}, nil)
	g2, s2 := startGW(t, Config{Upstream: up.URL, Price: price, Policy: Policy{Run: run}}, nil)
	readBody(t, post(t, apiClient(s1), baseURL+"/v1/messages", placeholder, haiku))
	readBody(t, post(t, apiClient(s2), baseURL+"/v1/messages", placeholder, haiku))
	resp := post(t, apiClient(s1), baseURL+"/v1/messages", placeholder, haiku)
	body := readBody(t, resp)
	if resp.StatusCode != 400 || !strings.Contains(body, "run's budget") || calls.Load() != 2 {
		t.Errorf("third request: %d %s (upstream calls %d)", resp.StatusCode, body, calls.Load())
	}
	if g1.Stats().BudgetStop != BudgetRun || g2.Stats().BudgetStop != "" || run.Spent() != 3.5 {
		t.Errorf("stops %q %q, run spent %v", g1.Stats().BudgetStop, g2.Stats().BudgetStop, run.Spent())
	}
}

func TestCountTokensRateLimited(t *testing.T) {
	up, got := recordingUpstream(t, "")
	g, sock := startGW(t, Config{Upstream: up.URL, Policy: Policy{CountTokensPerMinute: 60}}, nil)
	c := apiClient(sock)
	limited := 0
	for range 30 {
		resp := post(t, c, baseURL+"/v1/messages/count_tokens", placeholder, countBody)
		readBody(t, resp)
		if resp.StatusCode == http.StatusTooManyRequests {
			limited++
		}
	}
	st := g.Stats()
	if limited == 0 || st.CountTokens+limited != 30 || len(got()) != st.CountTokens {
		t.Errorf("limited %d, forwarded %d, upstream saw %d", limited, st.CountTokens, len(got()))
	}
	for _, r := range st.Refused {
		if r.Kind != RefusedRate {
			t.Errorf("refusal %+v, want kind rate", r)
		}
	}
}

// Denials come from what the CLI sends the model, each once however often
// the history repeats it.
func TestDenialsFromTheRequests(t *testing.T) {
	up, _ := recordingUpstream(t, "")
	var audited []map[string]any
	g, sock := startGW(t, Config{Upstream: up.URL, Audit: func(kind string, f map[string]any) error {
		if kind == AuditHookDenied {
			audited = append(audited, f)
		}
		return nil
	}}, nil)
	for _, r := range cliRequests(t) {
		readBody(t, post(t, apiClient(sock), baseURL+r.Path, placeholder, string(r.Body)))
	}
	st := g.Stats()
	// Three sessions, each: the first Write and the /etc Write refused by
	// the hook, curl by a permission rule.
	if len(st.HookDenials) != 9 || len(audited) != 9 {
		t.Fatalf("%d denials, %d audited: %+v", len(st.HookDenials), len(audited), st.HookDenials)
	}
	tools := map[string]int{}
	for _, d := range st.HookDenials {
		tools[d.Tool]++
		if d.Input == nil || d.Reason == "" {
			t.Errorf("denial %+v: no input or reason", d)
		}
	}
	if tools["Write"] != 6 || tools["Bash"] != 3 {
		t.Errorf("denied tools %v", tools)
	}
	// The same requests again: nothing new.
	for _, r := range cliRequests(t) {
		readBody(t, post(t, apiClient(sock), baseURL+r.Path, placeholder, string(r.Body)))
	}
	if n := len(g.Stats().HookDenials); n != 9 {
		t.Errorf("%d denials after the requests repeated, want 9", n)
	}
}

// usageUpstream answers every request with a Message whose usage is in
// input and out output tokens, counting the calls.
func usageUpstream(t *testing.T, calls *atomic.Int64, in, out int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":%d,"output_tokens":%d}}`, in, out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// What zerg has not reviewed (a field, a block) is forwarded and named,
// unless the policy is strict; the denied field and block are refused
// either way (TestPolicyRefuses).
func TestPolicyForwardsWhatItHasNotReviewed(t *testing.T) {
	body := `{"model":"claude-sonnet-5-5","max_tokens":1000,"speed":"fast","messages":[{"role":"user","content":[` +
		`{"type":"text","text":"hi"},{"type":"tool_reference","tool_name":"Write"},` +
		`{"type":"tool_result","tool_use_id":"x","content":[{"type":"future_block"}]}]}]}`
	p := strictPolicy()
	c, ref := p.checkBody([]byte(body), false, noEgress)
	if ref != nil || strings.Join(c.unreviewed, ",") != "field speed,block tool_reference,block future_block" {
		t.Errorf("refusal %+v, unreviewed %v", ref, c.unreviewed)
	}
	if c.maxTokens != 1000 || c.model != "claude-sonnet-5-5" || strings.Join(c.fields, ",") != "max_tokens,messages,model,speed" {
		t.Errorf("checked %+v", c)
	}
	p.Strict = true
	_, ref = p.checkBody([]byte(body), false, noEgress)
	if ref == nil || !strings.Contains(ref.reason, `"speed"`) || !strings.Contains(ref.fix, "gateway.strict") {
		t.Errorf("strict: refusal %+v, want the field speed, fixed by gateway.strict", ref)
	}
	// A URL source stays refused deep inside a block zerg does not know.
	deep := `{"model":"claude-sonnet-5-5","max_tokens":10,"messages":[{"role":"user","content":[{"type":"future","content":[` +
		`{"type":"image","source":{"type":"url","url":"https://evil.example/"}}]}]}]}`
	p = strictPolicy()
	if _, ref := p.checkBody([]byte(deep), false, noEgress); ref == nil || !strings.Contains(ref.reason, `"url" source`) {
		t.Errorf("a URL source inside an unknown block: refusal %+v", ref)
	}
}

// An alias allows the ids the launch probe saw the CLI send for it, even
// outside the family zerg knows.
func TestPolicyResolvedAliases(t *testing.T) {
	p := Policy{Models: []string{"default", "mythos"}, Resolved: map[string][]string{"default": {"claude-sonnet-5-5"}, "mythos": {"claude-mythos-1"}}}
	for model, want := range map[string]bool{"claude-opus-5-5": true, "claude-sonnet-5-5": true, "claude-mythos-1": true, "claude-mythos-2": false, "claude-haiku-5-5": false} {
		if got := p.ModelAllowed(model); got != want {
			t.Errorf("%q: %v, want %v", model, got, want)
		}
	}
}

// A refusal before any answer of the model reached the sandbox is marked
// First (the CLI's own request); after one, it is not. What was sent is
// recorded either way, and what was forwarded unreviewed is audited once.
func TestRefusalsBeforeTheFirstAnswer(t *testing.T) {
	up := usageUpstream(t, new(atomic.Int64), 10, 1)
	var log auditLog
	g, sock := startGW(t, Config{Upstream: up.URL, Audit: log.record, Policy: Policy{Models: []string{"sonnet"}, MaxTokens: 2000}}, nil)
	c := apiClient(sock)
	send := func(model string, maxTokens int, beta string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, baseURL+"/v1/messages", strings.NewReader(
			fmt.Sprintf(`{"model":%q,"max_tokens":%d,"speed":"x","messages":[{"role":"user","content":"hi"}]}`, model, maxTokens)))
		req.Header.Set("x-api-key", placeholder)
		req.Header.Set("anthropic-beta", beta)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readBody(t, resp)
		return resp.StatusCode
	}
	codes := []int{
		send("claude-sonnet-5-5", 128000, "claude-code-20250219"), // the CLI's own, refused: first
		send("claude-sonnet-5-5", 1000, "claude-code-20250219,new-2027-01-01"),
		send("claude-sonnet-5-5", 1000, "new-2027-01-01"),
		send("claude-opus-5-5", 1000, ""), // after an answer: not first
	}
	if fmt.Sprint(codes) != "[400 200 200 400]" {
		t.Fatalf("statuses %v", codes)
	}
	st := g.Stats()
	if len(st.Refused) != 2 || !st.Refused[0].First || st.Refused[1].First || !st.Answered {
		t.Errorf("refusals %+v, answered %v", st.Refused, st.Answered)
	}
	if !strings.Contains(st.Refused[0].Fix, "gateway.max_tokens") || !strings.Contains(st.Refused[0].Fix, "128000") {
		t.Errorf("fix %q", st.Refused[0].Fix)
	}
	if st.Sent.MaxTokens != 128000 || st.Sent.Betas["new-2027-01-01"] != 2 || st.Sent.Fields["speed"] != 4 || st.Sent.Models["claude-opus-5-5"] != 1 {
		t.Errorf("sent %+v", st.Sent)
	}
	if st.Unreviewed["beta new-2027-01-01"] != 2 || st.Unreviewed["field speed"] != 2 {
		t.Errorf("unreviewed %v", st.Unreviewed)
	}
	if n := len(log.kinds(AuditUnreviewed)); n != 2 {
		t.Errorf("%d %s entries, want one per name: %v", n, AuditUnreviewed, log.kinds(AuditUnreviewed))
	}
	if refused := log.kinds(AuditRefused); len(refused) != 2 || refused[0]["first"] != true || refused[1]["first"] != nil {
		t.Errorf("audited refusals %v", refused)
	}
}
