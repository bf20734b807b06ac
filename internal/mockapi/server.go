package mockapi

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/textx"
)

// Request is one recorded request. Secrets are never recorded: Headers lacks
// x-api-key and Authorization, APIKey and Authorization say if they were sent.
type Request struct {
	Time          time.Time   `json:"time"`
	Method        string      `json:"method"`
	Path          string      `json:"path"`
	Query         string      `json:"query,omitempty"`
	SessionID     string      `json:"session_id,omitempty"`
	Headers       http.Header `json:"headers"`
	APIKey        bool        `json:"api_key"`
	Authorization bool        `json:"authorization"`
	// OAuth: the request carried the scenario's oauth_token as the CLI
	// sends a subscription token (bearer, oauth beta, no x-api-key).
	OAuth         bool   `json:"oauth,omitempty"`
	BodyBytes     int    `json:"body_bytes"`
	TokenEstimate int    `json:"token_estimate"`
	Kind          string `json:"kind"`
	Model         string `json:"model,omitempty"`
	Stream        bool   `json:"stream"`
	Tools         int    `json:"tools"`
	// ToolNames are the tools' names, in the request's order.
	ToolNames []string `json:"tool_names,omitempty"`
	Prompt    string   `json:"prompt,omitempty"`
	Task      string   `json:"task,omitempty"`
	Turn      int      `json:"turn,omitempty"`
	Attempt   int      `json:"attempt,omitempty"`
	Status    int      `json:"status"`
	Answer    string   `json:"answer,omitempty"`
	Fault     string   `json:"fault,omitempty"`
	FaultID   string   `json:"fault_id,omitempty"`

	committed bool
}

// Option configures a Server.
type Option func(*Server)

// WithLogFile appends every request as one JSON line to path (created if
// missing, private: 0600). An open error is returned by Start and Close.
func WithLogFile(path string) Option {
	return func(s *Server) {
		f, err := fsx.AppendPrivate(path)
		if err != nil {
			s.logErr = fmt.Errorf("open request log: %w", err)
			return
		}
		s.logFile, s.logW = f, f
	}
}

// WithLogWriter writes every request as one JSON line to w. Writes are
// serialised by the server.
func WithLogWriter(w io.Writer) Option { return func(s *Server) { s.logW = w } }

// WithSeed overrides the scenario's seed for rate-based faults.
func WithSeed(seed int64) Option { return func(s *Server) { s.seed = seed; s.seedSet = true } }

// Server answers Messages API requests from a Scenario. It is safe for
// concurrent use; all per-session state lives behind mu.
type Server struct {
	sc      *Scenario
	seed    int64
	seedSet bool
	def     *Script

	seq atomic.Int64 // ids for messages, requests and tool uses

	mu       sync.Mutex
	reqs     []Request
	sessions map[string]*sessionState
	// faultSessions lists, per fault, the sessions that reached it in order,
	// for the sessions selector; taskSessions numbers each task's sessions
	// so seeded faults differ between attempts of one task yet repeat from
	// run to run.
	faultSessions map[string][]string
	taskSessions  map[string][]string
	// kindRequests counts the requests of each kind the server decided on,
	// for after_requests.
	kindRequests map[string]int
	logW         io.Writer
	logFile      *os.File
	logErr       error

	done      chan struct{} // closed by Close: ends stalls
	closeOnce sync.Once
	httpSrv   *http.Server
	url       string
}

// sessionState is kept per (session id, task).
type sessionState struct {
	attempts   map[int]int    // turn → requests seen (main + fallback)
	candidates map[string]int // fault id → requests that reached it
	fired      map[string]int // fault id + turn → times fired
}

// NewServer returns a server for sc (nil: the default script only). It does
// not listen until Start; Handler can be mounted anywhere instead.
func NewServer(sc *Scenario, opts ...Option) *Server {
	if sc == nil {
		sc = &Scenario{}
	}
	s := &Server{sc: sc, seed: sc.Seed, sessions: map[string]*sessionState{}, done: make(chan struct{})}
	s.def = sc.Default
	if s.def == nil {
		s.def = &Script{Turns: []*Turn{{Text: "done"}}}
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Start listens on addr (e.g. "127.0.0.1:0") and serves in the background.
// It returns the base URL to put in ANTHROPIC_BASE_URL.
func (s *Server) Start(addr string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logErr != nil {
		return "", s.logErr
	}
	if s.httpSrv != nil {
		return "", errors.New("start mock API: already started")
	}
	select {
	case <-s.done:
		return "", errors.New("start mock API: server is closed")
	default:
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("start mock API: %w", err)
	}
	s.httpSrv = &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second}
	s.url = "http://" + ln.Addr().String()
	go func() { _ = s.httpSrv.Serve(ln) }() // returns ErrServerClosed after Close
	return s.url, nil
}

// URL is the base URL after Start, "" before.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Handler serves the API; it is the server itself.
func (s *Server) Handler() http.Handler { return s }

// Close stops listening, drops open connections, ends stalls and closes the
// request log. It is safe to call more than once.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.done)
		s.mu.Lock()
		hs := s.httpSrv
		s.mu.Unlock()
		if hs != nil {
			err = hs.Close()
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.logErr != nil {
			err = errors.Join(err, s.logErr)
		}
		if s.logFile != nil {
			err = errors.Join(err, s.logFile.Close())
			s.logFile, s.logW = nil, nil
		}
	})
	return err
}

// Requests returns a copy of the request log in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.reqs))
	copy(out, s.reqs)
	return out
}

// record adds rec to the log once. Handlers call it just before writing the
// response, so a client that has its answer also finds it in Requests().
func (s *Server) record(rec *Request) {
	if rec.committed {
		return
	}
	rec.committed = true
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, *rec)
	if s.logW == nil {
		return
	}
	b, err := json.Marshal(rec)
	if err == nil {
		_, err = s.logW.Write(append(b, '\n'))
	}
	if err != nil && s.logErr == nil {
		s.logErr = fmt.Errorf("write request log: %w", err)
	}
}

func (s *Server) next() int64 { return s.seq.Add(1) }

// maxBody bounds a request body; real ones are 70–130 KB, so this only stops abuse.
const maxBody = 64 << 20

// ServeHTTP routes on the path suffix so any base-URL prefix works; Go's
// server already accepts absolute-form targets (proxies).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &Request{
		Time:      time.Now().UTC(),
		Method:    r.Method,
		Path:      r.URL.Path,
		Query:     r.URL.RawQuery,
		SessionID: r.Header.Get("X-Claude-Code-Session-Id"),
		Headers:   r.Header.Clone(),
		Kind:      KindOther,
	}
	rec.APIKey = r.Header.Get("X-Api-Key") != ""
	rec.Authorization = r.Header.Get("Authorization") != ""
	rec.Headers.Del("X-Api-Key")
	rec.Headers.Del("Authorization")
	// Deferred so that dropped connections (a panic with ErrAbortHandler) are logged too.
	defer s.record(rec)

	if r.Method == http.MethodHead {
		rec.Kind, rec.Status = KindHead, http.StatusOK
		s.record(rec)
		w.WriteHeader(http.StatusOK)
		return
	}
	body, err := readBody(r)
	rec.BodyBytes = len(body)
	rec.TokenEstimate = utf8.RuneCount(body) / 4
	if err != nil {
		s.writeError(w, rec, http.StatusBadRequest, "invalid_request_error", "read body: "+err.Error(), nil)
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	rec.OAuth = s.sc.OAuthToken != "" && oauthShaped(r.Header, s.sc.OAuthToken)
	if msg := s.refusedCredential(r.Header, rec.OAuth); msg != "" {
		s.writeError(w, rec, http.StatusUnauthorized, "authentication_error", msg, nil)
		return
	}
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/v1/messages/count_tokens"):
		rec.Kind = KindCountTokens
		rec.Status = http.StatusOK
		rec.Answer = fmt.Sprintf("input_tokens %d", rec.TokenEstimate)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("request-id", fmt.Sprintf("req_zm%d", s.next()))
		s.record(rec)
		fmt.Fprintf(w, `{"input_tokens":%d}`, rec.TokenEstimate)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/v1/messages"):
		s.messages(w, r, body, rec)
	default:
		s.writeError(w, rec, http.StatusNotFound, "not_found_error", fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path), nil)
	}
}

func readBody(r *http.Request) ([]byte, error) {
	var rd io.Reader = http.MaxBytesReader(nil, r.Body, maxBody)
	if strings.EqualFold(r.Header.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(rd)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		rd = io.LimitReader(zr, maxBody)
	}
	return io.ReadAll(rd)
}

// scriptFor picks the first task whose match hits the prompt, else the default.
func (s *Server) scriptFor(prompt string) (*Script, string) {
	for _, t := range s.sc.Tasks {
		if t.matches(prompt) {
			return &t.Script, t.Name
		}
	}
	return s.def, "default"
}

// messages answers POST /v1/messages.
func (s *Server) messages(w http.ResponseWriter, r *http.Request, body []byte, rec *Request) {
	var req apiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.writeError(w, rec, http.StatusBadRequest, "invalid_request_error", "body is not a JSON Messages request: "+textx.OneLine(err.Error()), nil)
		return
	}
	rec.Kind = req.kind()
	rec.Model = req.Model
	rec.Stream = req.streaming()
	rec.Tools = len(req.Tools)
	for _, t := range req.Tools {
		var named struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(t, &named)
		rec.ToolNames = append(rec.ToolNames, named.Name)
	}
	prompt := req.prompt()
	rec.Prompt = truncate(prompt, 200)
	script, task := s.scriptFor(prompt)
	rec.Task = task

	turnNo := 0
	if rec.Kind == KindMain || rec.Kind == KindFallback {
		turnNo = req.turn()
		rec.Turn = turnNo
	}
	var turn *Turn
	if turnNo > 0 {
		turn = scriptTurn(script, turnNo)
	}
	eff, faultID, attempt := s.decide(rec.SessionID, task, script, turnNo, rec.Kind, req.Model)
	rec.Attempt = attempt
	if eff != nil {
		rec.Fault, rec.FaultID = eff.String(), faultID
	}

	// The answer a healthy server would give.
	var ans answer
	switch rec.Kind {
	case KindTitle:
		title := s.sc.Title
		if title == "" {
			title = "Scripted session"
		}
		b := marshal(map[string]string{"title": title})
		ans = answer{blocks: []block{{kind: "text", text: string(b)}}, stop: "end_turn"}
	case KindClassifier:
		text := "<block>no"
		if s.sc.Classifier == "block" {
			text = "<block>yes</block><reason>[Scripted] blocked by the scenario</reason>"
		}
		ans = answer{blocks: []block{{kind: "text", text: text}}, stop: "end_turn"}
	default:
		ans = s.turnAnswer(turn, req.toolResults())
	}

	delay := time.Duration(0)
	if turn != nil {
		delay = time.Duration(turn.Delay)
	}
	if eff != nil && eff.Delay > 0 {
		delay += time.Duration(eff.Delay)
	}
	if delay > 0 && !s.wait(r, delay) {
		rec.Answer = "client went away during delay"
		return
	}
	if eff != nil && eff.Stop != "" {
		ans = stopAnswer(ans, eff.Stop)
	}
	ans.usage = s.usage(turn, int64(rec.TokenEstimate), ans)
	ans.model = req.Model
	if ans.model == "" {
		ans.model = "claude-mock"
	}
	ans.msgID = fmt.Sprintf("msg_zm%d", s.next())
	for i := range ans.blocks {
		if ans.blocks[i].kind == "tool_use" {
			ans.blocks[i].id = toolID(turnNo, s.next())
		}
	}
	reqID := fmt.Sprintf("req_zm%d", s.next())
	w.Header().Set("request-id", reqID)

	if eff != nil && eff.Stop == "" && eff.Delay == 0 {
		s.fault(w, r, rec, eff, ans)
		return
	}
	rec.Status = http.StatusOK
	rec.Answer = ans.describe()
	s.record(rec)
	if rec.Stream {
		s.writeSSE(w, ans, len(ans.blocks))
	} else {
		writeJSON(w, http.StatusOK, ans.message())
	}
}

// scriptTurn returns turn n (1-based). Past the end, the run should be over:
// repeat a final text turn, or say "done".
func scriptTurn(sc *Script, n int) *Turn {
	if n <= len(sc.Turns) {
		return sc.Turns[n-1]
	}
	if last := sc.Turns[len(sc.Turns)-1]; len(last.Tools) == 0 {
		return last
	}
	return &Turn{Text: "done"}
}

// decide updates the session's counters and returns the fault to apply, if any.
func (s *Server) decide(session, task string, sc *Script, turnNo int, kind, model string) (*Effect, string, int) {
	var faults []*Fault
	if turnNo > 0 && turnNo <= len(sc.Turns) {
		faults = append(faults, sc.Turns[turnNo-1].Faults...)
	}
	faults = append(faults, sc.Faults...)
	faults = append(faults, s.sc.Faults...)

	s.mu.Lock()
	defer s.mu.Unlock()
	key := session + "\x00" + task
	st := s.sessions[key]
	if st == nil {
		st = &sessionState{attempts: map[int]int{}, candidates: map[string]int{}, fired: map[string]int{}}
		s.sessions[key] = st
	}
	if s.faultSessions == nil {
		s.faultSessions, s.taskSessions = map[string][]string{}, map[string][]string{}
	}
	ordinal := sessionIndex(s.taskSessions, task, session, true) + 1
	if s.kindRequests == nil {
		s.kindRequests = map[string]int{}
	}
	s.kindRequests[kind]++
	attempt := 0
	if turnNo > 0 {
		st.attempts[turnNo]++
		attempt = st.attempts[turnNo]
	}
	seed := s.seed
	if !s.seedSet {
		seed = s.sc.Seed
	}
	for _, f := range faults {
		if f.Turn != 0 && f.Turn != turnNo {
			continue
		}
		if len(f.Kinds) == 0 {
			if kind != KindMain && kind != KindFallback {
				continue
			}
		} else if !slices.Contains(f.Kinds, kind) {
			continue
		}
		if f.Model != "" && !strings.Contains(model, f.Model) {
			continue
		}
		if f.Sessions > 0 && sessionIndex(s.faultSessions, f.id, session, true) >= f.Sessions {
			continue
		}
		if f.AfterRequests > 0 {
			seen := 0
			for _, k := range f.kinds() {
				seen += s.kindRequests[k]
			}
			if seen <= f.AfterRequests {
				continue
			}
		}
		st.candidates[f.id]++
		n := st.candidates[f.id]
		if (f.First > 0 && n > f.First) || n <= f.After {
			continue
		}
		if f.Rate != nil && unitHash(seed, fmt.Sprintf("%s#%d", task, ordinal), turnNo, f.id, n, "rate") >= *f.Rate {
			continue
		}
		firedKey := fmt.Sprintf("%s@%d", f.id, turnNo)
		if f.MaxPerTurn > 0 && st.fired[firedKey] >= f.MaxPerTurn {
			continue
		}
		st.fired[firedKey]++
		eff := f.Effect
		if len(f.AnyOf) > 0 {
			i := int(unitHash(seed, fmt.Sprintf("%s#%d", task, ordinal), turnNo, f.id, n, "pick") * float64(len(f.AnyOf)))
			eff = f.AnyOf[min(i, len(f.AnyOf)-1)]
		}
		return &eff, f.id, attempt
	}
	return nil, "", attempt
}

// sessionIndex returns session's position in m[key], appending it when add is
// set and it is new.
func sessionIndex(m map[string][]string, key, session string, add bool) int {
	if i := slices.Index(m[key], session); i >= 0 {
		return i
	}
	if !add {
		return -1
	}
	m[key] = append(m[key], session)
	return len(m[key]) - 1
}

// unitHash maps its inputs to [0,1): deterministic, so random faults repeat
// exactly for a seed no matter how concurrent requests interleave.
func unitHash(seed int64, task string, turn int, faultID string, n int, salt string) float64 {
	h := uint64(14695981039346656037)
	for _, b := range []byte(fmt.Sprintf("%d\x00%s\x00%d\x00%s\x00%d\x00%s", seed, task, turn, faultID, n, salt)) {
		h ^= uint64(b)
		h *= 1099511628211
	}
	// fmix64 from MurmurHash3: FNV alone leaves the high bits poorly mixed.
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return float64(h>>11) / float64(uint64(1)<<53)
}

// wait sleeps d (or forever when d is 0) and reports false if the client went
// away or the server closed first.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-timer:
		return true
	case <-r.Context().Done():
		return false
	case <-s.done:
		return false
	}
}

// errorType is the Anthropic error type for a status.
func errorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	default:
		return "api_error"
	}
}

func errorMessage(status int, model string) string {
	switch status {
	case 400:
		return "scripted bad request"
	case 401:
		return "invalid x-api-key"
	case 403:
		return "scripted permission error"
	case 404:
		return "model: " + model
	case 413:
		return "request too large"
	case 429:
		return "scripted rate limit"
	case 529:
		return "Overloaded"
	default:
		return "Internal server error"
	}
}

func (s *Server) writeError(w http.ResponseWriter, rec *Request, status int, typ, msg string, extra http.Header) {
	for k, v := range extra {
		w.Header()[k] = v
	}
	if w.Header().Get("request-id") == "" {
		w.Header().Set("request-id", fmt.Sprintf("req_zm%d", s.next()))
	}
	rec.Status = status
	if rec.Answer == "" {
		rec.Answer = fmt.Sprintf("error %d %s", status, typ)
	}
	s.record(rec)
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b := marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// oauthBeta is the anthropic-beta value the CLI sends with a subscription
// token.
const oauthBeta = "oauth-2025-04-20"

// oauthShaped reports whether h carries token as the CLI 2.1.197 sends a
// subscription token: a bearer, the oauth beta, and no x-api-key.
func oauthShaped(h http.Header, token string) bool {
	if len(h.Values("Authorization")) != 1 || h.Get("Authorization") != "Bearer "+token || len(h.Values("X-Api-Key")) != 0 {
		return false
	}
	for _, v := range h.Values("Anthropic-Beta") {
		for _, b := range strings.Split(v, ",") {
			if strings.TrimSpace(b) == oauthBeta {
				return true
			}
		}
	}
	return false
}

// refusedCredential is why the scenario's credentials refuse a request
// ("" when they take it, or when the scenario sets none).
func (s *Server) refusedCredential(h http.Header, oauth bool) string {
	key, token := s.sc.APIKey, s.sc.OAuthToken
	switch {
	case key == "" && token == "":
		return ""
	case key != "" && (h.Get("X-Api-Key") == key || h.Get("Authorization") == "Bearer "+key):
		return ""
	case token != "" && oauth:
		return ""
	case token != "":
		return "invalid bearer token (want the subscription token as Authorization: Bearer, with the beta " + oauthBeta + " and no x-api-key)"
	}
	return "invalid x-api-key"
}
