// Package gateway is the host side of a sandboxed attempt's network: one HTTP
// server on a unix socket that is the worker's only way out. Requests for the
// model API get the real credential (the sandbox holds only a placeholder)
// and are streamed to the upstream API while their usage and tool calls are
// recorded; everything else is egress, let through only to allowlisted
// hosts. docs/gateway.md describes the behaviour and its limits.
package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// SandboxAddr is where the sandbox reaches the gateway (the in-sandbox
// forwarder's listen address, also HTTP(S)_PROXY and ANTHROPIC_BASE_URL).
// Absolute-form requests addressed to it are model-API requests.
const SandboxAddr = "127.0.0.1:3128"

// DefaultUpstream is the Messages API used when Config.Upstream is empty.
const DefaultUpstream = "https://api.anthropic.com"

// Audit kinds the gateway reports through Config.Audit.
const (
	// AuditEgressDenied is one refused egress request.
	AuditEgressDenied = "egress_denied"
	// AuditSummary is the summary written at Close: one per attempt.
	AuditSummary = "gateway"
	// AuditRefused is one model-API request the gateway refused (its
	// policy, a budget, a rate).
	AuditRefused = "gateway_refused"
	// AuditHookDenied is one tool call the CLI told the model was denied
	// (by zerg's hook or its permission rules), as the next request
	// carried it back: the same kind the hook's denials have in
	// subprocess mode.
	AuditHookDenied = "hook_denied"
)

// Kinds of Refusal.
const (
	RefusedPolicy = "policy" // not a request this attempt may send
	RefusedBudget = "budget" // the task's or the run's budget is spent
	RefusedRate   = "rate"   // count_tokens past its rate
)

// Budget stops (Stats.BudgetStop).
const (
	BudgetTask = "task"
	BudgetRun  = "run"
)

// MaxRefusals bounds Stats.Refused, Stats.HookDenials and their audit
// entries; later ones are only counted.
const MaxRefusals = 200

// maxAPIErrors bounds Stats.APIErrors.
const maxAPIErrors = 50

// MaxDenials bounds Stats.Denied and the egress_denied audit entries of one
// gateway; later denials are only counted (Stats.DeniedOmitted), so a worker
// cannot flood the audit log.
const MaxDenials = 200

// maxSummaryToolCalls bounds the tool calls listed in the audit summary.
const maxSummaryToolCalls = 200

// closeWait bounds how long Close waits for handlers to return.
const closeWait = 5 * time.Second

// Config configures one gateway.
type Config struct {
	// Upstream is the real Messages API base URL (https://api.anthropic.com
	// or ANTHROPIC_BASE_URL, or the scripted API's http://127.0.0.1:port); a
	// path prefix is kept. "" means DefaultUpstream.
	Upstream string
	// APIKey is the real key, injected as x-api-key (never logged, never
	// returned).
	APIKey string
	// AuthToken is alternatively an OAuth/bearer token, injected as
	// Authorization: Bearer. With both set, both are sent, as the CLI does.
	AuthToken string
	// OAuthToken is a subscription token (CLAUDE_CODE_OAUTH_TOKEN), used
	// when neither APIKey nor AuthToken is set (an API key wins, as in the
	// CLI). It is injected as the CLI 2.1.197 sends it: Authorization:
	// Bearer, no x-api-key, and OAuthBeta in anthropic-beta.
	OAuthToken string
	// Placeholder is the key the sandbox holds; requests carrying anything
	// else as x-api-key (or as a bearer token) are still forwarded with the
	// real credential but counted in Stats.ForeignKeys.
	Placeholder string
	// Allow is the egress allowlist for everything else: "host" (ports 80
	// and 443), "host:port", "*.example.com" wildcard (names below it);
	// empty = deny all. Start rejects malformed entries and entries that are
	// always refused (localhost, loopback and other refused addresses).
	Allow []string
	// Audit receives every denial (AuditEgressDenied) and a summary at Close
	// (AuditSummary); may be nil. Calls are serialised.
	Audit func(kind string, fields map[string]any) error
	// Timeout bounds each upstream request, including its streamed body;
	// 0 = 10 min.
	Timeout time.Duration
	// WorkerTimeout is how long the worker's CLI waits for an answer's
	// headers (its API_TIMEOUT_MS; 0: not known). A request it gives up on
	// after about that long is the API's slowness (Stats.UpstreamTimeouts);
	// one it drops sooner is its own doing, not the API's.
	WorkerTimeout time.Duration
	// Screen, when set, rewrites each tool call's input before the summary
	// records it: the model may have put a secret in it, and the audit log
	// is plain text. Stats keeps the inputs as they came.
	Screen func(json.RawMessage) json.RawMessage
	// Policy is what a model-API request may ask for (policy.go).
	Policy Policy
	// Peer is the only user that may use the gateway: the socket gets its
	// group and mode 0660 (0600 when it is zerg's own user), and a
	// connection from any other uid is closed at once (SO_PEERCRED), counted
	// and audited. nil: whoever can reach the socket (mode 0666; tests).
	Peer *Peer
	// Price is the cost in dollars of usage on a model (the model the
	// request named, which the policy checked); nil prices nothing, and
	// then no budget can run out.
	Price func(model string, u Usage) float64
}

// Stats is what the gateway saw. Stats() returns a copy.
type Stats struct {
	Requests   int         // model-API requests forwarded upstream
	Statuses   map[int]int // HTTP status of each upstream answer, as the API gave it
	LastStatus int
	// Reset is when the API said the limit of its last non-2xx answer
	// resets (RFC 3339 when it could be read; from retry-after or an
	// anthropic-ratelimit-*-reset header), "" when it said nothing.
	Reset       string
	LastError   string     // the API's error type/message of the last non-2xx answer or mid-stream error event (e.g. "authentication_error: invalid x-api-key"), or why the gateway could not reach the API
	Usage       Usage      // summed over every response, from the SSE message_start/message_delta usage (and non-streamed JSON usage)
	ToolCalls   []ToolCall // tool_use blocks the model asked for (name + input, input clipped to 2 KB)
	Denied      []Denial   // egress requests refused (the first MaxDenials)
	ForeignKeys int
	// DeniedOmitted counts denials past MaxDenials: neither listed nor
	// audited one by one.
	DeniedOmitted int
	// Egress counts allowlisted egress let through: CONNECT tunnels opened
	// and plain-HTTP requests forwarded.
	Egress int

	// CostUSD is what the forwarded requests cost: each answer's usage at
	// the price of the model its request named (Config.Price).
	CostUSD float64
	// CountTokens counts count_tokens requests forwarded (not billed).
	CountTokens int
	// Refused are model-API requests the gateway did not forward (the
	// first MaxRefusals); RefusedOmitted counts the rest.
	Refused        []Refusal
	RefusedOmitted int
	// BudgetStop is BudgetTask or BudgetRun once a request was refused
	// because that budget was spent; "" otherwise.
	BudgetStop string
	// APIErrors are the upstream's own error answers (the first 50): the
	// status and the API's error type and message, scrubbed. Every one
	// answers a request the policy accepted, so none is a worker's choice
	// of model, beta or feature.
	APIErrors []APIError
	// UpstreamFailures counts requests the gateway could not complete
	// upstream (connection refused, DNS, TLS, timeout): the run's
	// infrastructure, never the worker.
	UpstreamFailures int
	// UpstreamTimeouts counts requests the worker gave up on after its own
	// API timeout (Config.WorkerTimeout) with no answer from the API yet:
	// the API's slowness, the run's infrastructure too. ClientDrops counts
	// requests the worker dropped sooner: evidence of nothing upstream.
	UpstreamTimeouts int
	ClientDrops      int
	// HookDenials are tool calls the CLI reported back to the model as
	// denied (the first MaxRefusals), in the order it did.
	HookDenials []HookDenial
	// ForeignPeers counts connections refused because another user than
	// Config.Peer made them.
	ForeignPeers int
	// Answered is set once a Messages answer of the API (2xx) reached the
	// sandbox: before it, nothing the model asked for has run there, so
	// every request is the CLI's own (Refusal.First).
	Answered bool
	// Sent is what the model-API requests asked for, forwarded or not:
	// what zerg's launch probe learns of a CLI release.
	Sent Sent
	// Unreviewed counts what requests forwarded carried that zerg has not
	// reviewed ("beta x", "field y", "block z"; at most MaxSentNames
	// names): a policy that is not strict lets it through and audits it.
	Unreviewed map[string]int
}

// Sent is what a gateway's model-API requests asked for. Each map holds
// at most MaxSentNames names, counted by request.
type Sent struct {
	Betas  map[string]int // anthropic-beta values
	Fields map[string]int // top-level body fields
	Models map[string]int // the model each request named
	// FirstModel is the model the first Messages request named: what the
	// CLI resolved its --model to (later ones may be its fallback's).
	FirstModel string
	// MaxTokens is the largest max_tokens a Messages request asked for.
	MaxTokens int64
}

// MaxSentNames bounds each map of Sent and Stats.Unreviewed, so that a
// worker cannot grow them without end.
const MaxSentNames = 64

// AuditUnreviewed is the first request of an attempt that carried a beta,
// a body field or a content block zerg has not reviewed, forwarded (one
// entry per name).
const AuditUnreviewed = "gateway_unreviewed"

// Peer is a host user and group.
type Peer struct{ UID, GID int }

// AuditForeignPeer is a connection to the gateway's socket by a user other
// than its sandbox's (one entry per user).
const AuditForeignPeer = "gateway_foreign_peer"

// Refusal is one model-API request the gateway did not forward.
type Refusal struct {
	Time   time.Time
	Kind   string // RefusedPolicy, RefusedBudget, RefusedRate
	Method string
	Path   string
	Status int
	Reason string
	// Fix is what the operator can change to allow the request, when it is
	// the CLI's own (the setting, or a release of the tested range).
	Fix string
	// First is set when no answer of the model had reached the sandbox yet
	// (Stats.Answered): nothing but the CLI had run there, so the request
	// was the CLI's own, not the worker's doing.
	First bool
}

// APIError is one error answer of the upstream API.
type APIError struct {
	Status  int    // HTTP status; 200 for an error event in a stream
	Type    string // the API's error type ("rate_limit_error"), "" when the body was not an API error
	Message string
}

// HookDenial is one denied tool call, as the CLI reported it to the model.
type HookDenial struct {
	ID     string          // the tool_use id
	Tool   string          // the tool's name
	Input  json.RawMessage // its input (clipped like ToolCall.Input), nil when the request did not carry the call
	Reason string          // what the tool result said, clipped
	// Path is the file the call named (file_path, notebook_path or
	// path), read from the whole input before it is clipped: a Write's
	// content may be far longer than what Input keeps.
	Path string
}

// Usage is a token count summed over responses.
type Usage struct{ InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens int64 }

// ToolCall is one tool_use block. Input is the tool input as compact JSON
// when it fits in MaxToolInput bytes, else a JSON string holding its
// beginning and ending in "…".
type ToolCall struct {
	Name  string
	Input json.RawMessage
}

// Denial is one refused egress request.
type Denial struct {
	Time                   time.Time
	Method, Target, Reason string
}

// hooks are the gateway's ways to the network; tests replace them.
type hooks struct {
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	own    func() []netip.Addr
}

func defaultHooks() hooks {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return hooks{
		lookup: func(ctx context.Context, h string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", h)
		},
		dial: d.DialContext,
		own:  ownAddrs,
	}
}

// Gateway is one running gateway. Its methods are safe for concurrent use.
type Gateway struct {
	cfg      Config
	upstream *url.URL
	secrets  [][]byte
	allow    []allowEntry
	net      hooks
	timeout  time.Duration

	ln       net.Listener
	srv      *http.Server
	ctx      context.Context // canceled by Close; every request derives from it
	cancel   context.CancelFunc
	apiTr    *http.Transport
	egressTr *http.Transport
	errLog   *log.Logger

	mu     sync.Mutex
	stats  Stats
	closed bool
	// denied are the tool_use ids whose denial was recorded (every request
	// carries the whole conversation again).
	denied map[string]bool
	// foreign are the uids refused at the socket.
	foreign map[int]bool

	countLimit     *rate.Limiter
	countPerMinute int
	handlers       sync.WaitGroup
	tunnels        map[net.Conn]struct{}
	auditErr       error

	auditMu   sync.Mutex
	closeOnce sync.Once
	closeErr  error
}

// Start listens on the unix socket at socketPath (which must not exist; put
// it in a directory only zerg and Config.Peer can reach) and serves until
// Close. The socket is Config.Peer's (see there).
func Start(cfg Config, socketPath string) (*Gateway, error) {
	return start(cfg, socketPath, defaultHooks())
}

func start(cfg Config, socketPath string, h hooks) (*Gateway, error) {
	g, err := newGateway(cfg, h)
	if err != nil {
		return nil, fmt.Errorf("start gateway: %w", err)
	}
	// sun_path holds 108 bytes including the terminating NUL.
	if len(socketPath) > 107 {
		return nil, fmt.Errorf("start gateway: socket path %s is %d bytes; the limit is 107", socketPath, len(socketPath))
	}
	ln, err := net.Listen("unix", socketPath)
	if err != nil {
		return nil, fmt.Errorf("start gateway: %w", err)
	}
	if err := ownSocket(socketPath, cfg.Peer); err != nil {
		ln.Close()
		return nil, fmt.Errorf("start gateway: %w", err)
	}
	if cfg.Peer != nil {
		ln = &peerListener{Listener: ln, g: g, uid: cfg.Peer.UID}
	}
	g.ln = ln
	g.srv = &http.Server{
		Handler:           http.HandlerFunc(g.serve),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          g.errLog,
		BaseContext:       func(net.Listener) context.Context { return g.ctx },
	}
	go func() { _ = g.srv.Serve(ln) }() // returns ErrServerClosed after Close
	return g, nil
}

func newGateway(cfg Config, h hooks) (*Gateway, error) {
	if cfg.Upstream == "" {
		cfg.Upstream = DefaultUpstream
	}
	u, err := url.Parse(cfg.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("upstream %q is not an http(s) base URL without credentials, query or fragment", cfg.Upstream)
	}
	if cfg.APIKey == "" && cfg.AuthToken == "" && cfg.OAuthToken == "" {
		return nil, errors.New("neither an API key nor a token to inject")
	}
	if cfg.APIKey != "" || cfg.AuthToken != "" {
		cfg.OAuthToken = "" // the key wins; the token is never sent
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("timeout %s is negative", cfg.Timeout)
	}
	g := &Gateway{cfg: cfg, upstream: u, net: h, timeout: cfg.Timeout, tunnels: map[net.Conn]struct{}{},
		errLog: log.New(io.Discard, "", 0)}
	if g.timeout == 0 {
		g.timeout = 10 * time.Minute
	}
	for _, s := range []string{cfg.APIKey, cfg.AuthToken, cfg.OAuthToken} {
		if len(s) >= minSecretLen {
			g.secrets = append(g.secrets, []byte(s))
		}
	}
	for _, a := range cfg.Allow {
		e, err := parseAllow(a)
		if err != nil {
			return nil, fmt.Errorf("allow entry %q: %w", a, err)
		}
		g.allow = append(g.allow, e)
	}
	g.stats.Statuses = map[int]int{}
	g.denied = map[string]bool{}
	g.countPerMinute = cfg.Policy.CountTokensPerMinute
	if g.countPerMinute <= 0 {
		g.countPerMinute = DefaultCountTokensPerMinute
	}
	g.countLimit = rate.NewLimiter(rate.Limit(float64(g.countPerMinute)/60), max(g.countPerMinute/10, 5))
	g.ctx, g.cancel = context.WithCancel(context.Background())

	g.apiTr = http.DefaultTransport.(*http.Transport).Clone()
	// Uncompressed answers, so that they can be parsed and scrubbed.
	g.apiTr.DisableCompression = true
	g.egressTr = &http.Transport{
		Proxy:                 nil, // the host's own proxy settings never apply to the worker's egress
		DialContext:           g.dialChecked,
		DisableCompression:    true,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: g.timeout,
	}
	return g, nil
}

// Close stops the gateway: the socket is removed, open connections and
// tunnels are closed, handlers get up to 5 s to return, and the summary is
// sent to Config.Audit. It returns audit failures (of denials and of the
// summary). Later calls return the same.
func (g *Gateway) Close() error {
	g.closeOnce.Do(func() {
		g.mu.Lock()
		g.closed = true
		tunnels := make([]net.Conn, 0, len(g.tunnels))
		for c := range g.tunnels {
			tunnels = append(tunnels, c)
		}
		g.mu.Unlock()

		g.cancel()
		var errs []error
		if err := g.srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
		for _, c := range tunnels {
			_ = c.Close()
		}
		done := make(chan struct{})
		go func() { g.handlers.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(closeWait):
		}
		g.apiTr.CloseIdleConnections()
		g.egressTr.CloseIdleConnections()

		if err := g.audit(AuditSummary, g.summary()); err != nil {
			errs = append(errs, err)
		}
		g.mu.Lock()
		if g.auditErr != nil {
			errs = append(errs, g.auditErr)
		}
		g.mu.Unlock()
		if err := errors.Join(errs...); err != nil {
			g.closeErr = fmt.Errorf("close gateway: %w", err)
		}
	})
	return g.closeErr
}

// Stats returns a copy of what the gateway has seen so far.
func (g *Gateway) Stats() Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.stats
	s.Statuses = make(map[int]int, len(g.stats.Statuses))
	for k, v := range g.stats.Statuses {
		s.Statuses[k] = v
	}
	s.ToolCalls = make([]ToolCall, len(g.stats.ToolCalls))
	for i, tc := range g.stats.ToolCalls {
		s.ToolCalls[i] = ToolCall{Name: tc.Name, Input: append(json.RawMessage(nil), tc.Input...)}
	}
	s.Denied = append([]Denial(nil), g.stats.Denied...)
	s.Refused = append([]Refusal(nil), g.stats.Refused...)
	s.APIErrors = append([]APIError(nil), g.stats.APIErrors...)
	s.HookDenials = append([]HookDenial(nil), g.stats.HookDenials...)
	s.Sent.Betas, s.Sent.Fields, s.Sent.Models = maps.Clone(g.stats.Sent.Betas), maps.Clone(g.stats.Sent.Fields), maps.Clone(g.stats.Sent.Models)
	s.Unreviewed = maps.Clone(g.stats.Unreviewed)
	return s
}

// noteSent records what a request asked for (Stats.Sent).
func (g *Gateway) noteSent(betas []string, req checked) {
	g.mu.Lock()
	defer g.mu.Unlock()
	sent := &g.stats.Sent
	for _, b := range betas {
		countName(&sent.Betas, b)
	}
	for _, f := range req.fields {
		countName(&sent.Fields, f)
	}
	if req.model != "" {
		countName(&sent.Models, req.model)
		if sent.FirstModel == "" && !req.countTokens {
			sent.FirstModel = req.model
		}
	}
	sent.MaxTokens = max(sent.MaxTokens, req.maxTokens)
}

// noteUnreviewed counts what a forwarded request carried that zerg has not
// reviewed, and audits each name the first time.
func (g *Gateway) noteUnreviewed(names []string) {
	var first []string
	g.mu.Lock()
	for _, n := range names {
		if _, seen := g.stats.Unreviewed[n]; !seen && len(g.stats.Unreviewed) < MaxSentNames {
			first = append(first, n)
		}
		countName(&g.stats.Unreviewed, n)
	}
	g.mu.Unlock()
	for _, n := range first {
		g.auditLive(AuditUnreviewed, map[string]any{"name": n})
	}
}

// countName counts name in *m, which holds at most MaxSentNames names.
func countName(m *map[string]int, name string) {
	if *m == nil {
		*m = map[string]int{}
	}
	if _, ok := (*m)[name]; ok || len(*m) < MaxSentNames {
		(*m)[name]++
	}
}

// summary is the audit summary: counts, statuses, usage, the tool calls
// (the first maxSummaryToolCalls) and the number of denials.
func (g *Gateway) summary() map[string]any {
	s := g.Stats()
	statuses := map[string]int{}
	for k, v := range s.Statuses {
		statuses[fmt.Sprint(k)] = v
	}
	byName := map[string]int{}
	for _, tc := range s.ToolCalls {
		byName[tc.Name]++
	}
	type call struct {
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	calls := []call{}
	for _, tc := range s.ToolCalls[:min(len(s.ToolCalls), maxSummaryToolCalls)] {
		in := tc.Input
		if g.cfg.Screen != nil {
			in = g.cfg.Screen(in)
		}
		calls = append(calls, call{tc.Name, in})
	}
	m := map[string]any{
		"requests":    s.Requests,
		"statuses":    statuses,
		"last_status": s.LastStatus,
		"usage": map[string]int64{
			"input_tokens": s.Usage.InputTokens, "output_tokens": s.Usage.OutputTokens,
			"cache_read_tokens": s.Usage.CacheReadTokens, "cache_write_tokens": s.Usage.CacheWriteTokens,
		},
		"tool_calls":    len(s.ToolCalls),
		"tools":         byName,
		"tool_inputs":   calls,
		"denied":        len(s.Denied) + s.DeniedOmitted,
		"egress":        s.Egress,
		"foreign_keys":  s.ForeignKeys,
		"foreign_peers": s.ForeignPeers,
		"cost_usd":      s.CostUSD,
		"count_tokens":  s.CountTokens,
		"refused":       len(s.Refused) + s.RefusedOmitted,
		"hook_denials":  len(s.HookDenials),
	}
	if s.BudgetStop != "" {
		m["budget_stop"] = s.BudgetStop
	}
	if s.UpstreamFailures > 0 {
		m["upstream_failures"] = s.UpstreamFailures
	}
	if s.UpstreamTimeouts > 0 {
		m["upstream_timeouts"] = s.UpstreamTimeouts
	}
	if s.ClientDrops > 0 {
		m["client_drops"] = s.ClientDrops
	}
	if s.LastError != "" {
		m["last_error"] = s.LastError
	}
	if len(s.Unreviewed) > 0 {
		m["unreviewed"] = s.Unreviewed
	}
	return m
}

// audit calls Config.Audit, one call at a time.
func (g *Gateway) audit(kind string, fields map[string]any) error {
	if g.cfg.Audit == nil {
		return nil
	}
	g.auditMu.Lock()
	defer g.auditMu.Unlock()
	if err := g.cfg.Audit(kind, fields); err != nil {
		return fmt.Errorf("audit %s: %w", kind, err)
	}
	return nil
}

// serve routes one request: CONNECT and absolute-form requests for other
// hosts are egress; origin-form requests and absolute-form requests
// addressed to SandboxAddr are for the model API.
func (g *Gateway) serve(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		http.Error(w, "zerg gateway: closed", http.StatusServiceUnavailable)
		return
	}
	g.handlers.Add(1)
	g.mu.Unlock()
	defer g.handlers.Done()

	switch {
	case r.Method == http.MethodConnect:
		g.connect(w, r)
	case r.URL.IsAbs() || r.URL.Host != "":
		if g.isSelf(r.URL) {
			g.api(w, r)
			return
		}
		g.forward(w, r)
	default:
		g.api(w, r)
	}
}

// isSelf reports whether an absolute-form target names the gateway itself
// (SandboxAddr, or localhost on its port) in any spelling.
func (g *Gateway) isSelf(u *url.URL) bool {
	if u.Scheme != "http" {
		return false
	}
	h, err := canonHost(u.Hostname())
	if err != nil {
		return false
	}
	selfHost, selfPort, _ := net.SplitHostPort(SandboxAddr)
	return u.Port() == selfPort && (h.String() == selfHost || h.name == "localhost")
}

// deny refuses an egress request: 403, a Denial and an audit entry.
func (g *Gateway) deny(w http.ResponseWriter, r *http.Request, target, reason string) {
	target = clip(g.scrubString(target), 512)
	d := Denial{Time: time.Now().UTC(), Method: r.Method, Target: target, Reason: reason}
	g.mu.Lock()
	record := len(g.stats.Denied) < MaxDenials
	if record {
		g.stats.Denied = append(g.stats.Denied, d)
	} else {
		g.stats.DeniedOmitted++
	}
	g.mu.Unlock()
	if record {
		g.auditLive(AuditEgressDenied, map[string]any{"method": d.Method, "target": d.Target, "reason": d.Reason})
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, "zerg gateway: egress denied: %s\n", reason)
}

// addUsage adds one answer's usage, priced at model (the request's), to
// the attempt's and the run's spend.
func (g *Gateway) addUsage(model string, u Usage) {
	cost := 0.0
	if g.cfg.Price != nil {
		cost = g.cfg.Price(model, u)
	}
	g.mu.Lock()
	g.stats.Usage.InputTokens += u.InputTokens
	g.stats.Usage.OutputTokens += u.OutputTokens
	g.stats.Usage.CacheReadTokens += u.CacheReadTokens
	g.stats.Usage.CacheWriteTokens += u.CacheWriteTokens
	g.stats.CostUSD += cost
	g.mu.Unlock()
	g.cfg.Policy.Run.Add(cost)
}

// addAPIError records one error answer of the upstream.
func (g *Gateway) addAPIError(e APIError) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.stats.APIErrors) < maxAPIErrors {
		g.stats.APIErrors = append(g.stats.APIErrors, e)
	}
}

// refuse answers a model-API request the gateway does not forward, in the
// API's error shape (the CLI shows it), records it and audits it.
func (g *Gateway) refuse(w http.ResponseWriter, r *http.Request, kind string, ref *refusal) {
	reason := g.scrubString(ref.reason)
	rf := Refusal{Time: time.Now().UTC(), Kind: kind, Method: r.Method, Path: clip(g.scrubString(r.URL.Path), 200), Status: ref.status,
		Reason: clip(reason, 512), Fix: clip(g.scrubString(ref.fix), 512)}
	g.mu.Lock()
	rf.First = !g.stats.Answered
	record := len(g.stats.Refused) < MaxRefusals
	if record {
		g.stats.Refused = append(g.stats.Refused, rf)
	} else {
		g.stats.RefusedOmitted++
	}
	g.mu.Unlock()
	if record {
		f := map[string]any{"kind": kind, "method": rf.Method, "path": rf.Path, "status": rf.Status, "reason": rf.Reason}
		if rf.First {
			f["first"] = true
		}
		g.auditLive(AuditRefused, f)
	}
	typ := "invalid_request_error"
	switch ref.status {
	case http.StatusNotFound:
		typ = "not_found_error"
	case http.StatusRequestEntityTooLarge:
		typ = "request_too_large"
	case http.StatusTooManyRequests:
		typ = "rate_limit_error"
		w.Header().Set("Retry-After", "1")
	}
	writeAPIError(w, ref.status, typ, "zerg gateway: refused: "+reason)
}

// auditLive records an entry while the gateway runs; a failure is kept for
// Close to return and never changes the answer.
func (g *Gateway) auditLive(kind string, fields map[string]any) {
	if err := g.audit(kind, fields); err != nil {
		g.mu.Lock()
		if g.auditErr == nil {
			g.auditErr = err
		}
		g.mu.Unlock()
	}
}

func (g *Gateway) addToolCall(tc ToolCall) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stats.ToolCalls = append(g.stats.ToolCalls, tc)
}

// setLastError records s, which must already be scrubbed (the parser reads
// scrubbed bytes; ErrorHandler scrubs its message).
func (g *Gateway) setLastError(s string) {
	s = clip(s, maxLastError)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stats.LastError = s
}

func (g *Gateway) setReset(s string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stats.Reset = clip(s, 64)
}

// resetHeaders are the headers that say when a refused request may be
// made again, most specific first.
var resetHeaders = []string{"anthropic-ratelimit-unified-reset", "anthropic-ratelimit-requests-reset",
	"anthropic-ratelimit-tokens-reset", "anthropic-ratelimit-input-tokens-reset", "anthropic-ratelimit-output-tokens-reset", "retry-after"}

// resetOf reads the reset time of an error answer's headers: an RFC 3339
// time, Unix seconds, or (retry-after) seconds from now; "" when none.
func resetOf(h http.Header, now time.Time) string {
	for _, name := range resetHeaders {
		v := strings.TrimSpace(h.Get(name))
		if v == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t.UTC().Format(time.RFC3339)
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			if name == "retry-after" || n < 1e9 {
				return now.Add(time.Duration(n) * time.Second).UTC().Format(time.RFC3339)
			}
			return time.Unix(n, 0).UTC().Format(time.RFC3339)
		}
		if t, err := http.ParseTime(v); err == nil {
			return t.UTC().Format(time.RFC3339)
		}
	}
	return ""
}

func (g *Gateway) addStatus(code int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stats.Statuses[code]++
	g.stats.LastStatus = code
}

// writeAPIError writes an error in the API's shape, which the CLI shows.
func writeAPIError(w http.ResponseWriter, status int, typ, msg string) {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
