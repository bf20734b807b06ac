package gateway

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"
	"time"
)

// api forwards a model-API request the policy accepts: the sandbox's
// credentials are replaced by the real ones, the answer streams back
// unbuffered and is parsed on the way. Anything else is refused before a
// byte leaves the host.
func (g *Gateway) api(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodHead {
		// The CLI's preconnect (HEAD / in 2.1.197 and 2.1.332, HEAD
		// /api/hello in 2.1.266): nothing to forward, nothing to refuse.
		w.WriteHeader(http.StatusOK)
		return
	}
	pol := &g.cfg.Policy
	countTokens, ref := checkRoute(r)
	var betas, unreviewed []string
	if ref == nil {
		betas, unreviewed, ref = pol.checkHeaders(r.Header)
	}
	var body []byte
	if ref == nil {
		body, ref = readRequestBody(r)
	}
	var req checked
	if ref == nil {
		req, ref = pol.checkBody(body, countTokens, g.allowed)
	}
	g.noteSent(betas, req)
	if ref != nil {
		g.refuse(w, r, RefusedPolicy, ref)
		return
	}
	// The denials the CLI reports back to the model: the audit's record of
	// them, which no code in the sandbox can take back.
	g.noteDenials(body)
	if ref := g.admitSpend(req); ref != nil {
		kind := RefusedBudget
		if ref.status == http.StatusTooManyRequests {
			kind = RefusedRate
		}
		g.refuse(w, r, kind, ref)
		return
	}
	g.noteUnreviewed(append(unreviewed, req.unreviewed...))

	foreign := false
	if k := r.Header.Values("X-Api-Key"); len(k) > 1 || len(k) == 1 && k[0] != g.cfg.Placeholder {
		foreign = true
	}
	if a := r.Header.Values("Authorization"); len(a) > 1 || len(a) == 1 && a[0] != "Bearer "+g.cfg.Placeholder {
		foreign = true
	}
	g.mu.Lock()
	if countTokens {
		g.stats.CountTokens++
	} else {
		g.stats.Requests++
	}
	if foreign {
		g.stats.ForeignKeys++
	}
	g.mu.Unlock()

	target := *g.upstream
	target.Path = strings.TrimSuffix(g.upstream.Path, "/") + r.URL.Path
	target.RawPath = ""
	target.RawQuery = r.URL.RawQuery

	client, began := r.Context(), time.Now()
	ctx, cancel := context.WithTimeout(client, g.timeout)
	defer cancel()
	r = r.WithContext(ctx)
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.Header.Del("Content-Length")
	sw := &scrubWriter{ResponseWriter: w, g: g}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = &target
			pr.Out.Host = ""
			h := pr.Out.Header
			h.Del("X-Api-Key")
			h.Del("Authorization")
			h.Del("Proxy-Authorization")
			h.Del("Accept-Encoding")
			if g.cfg.APIKey != "" {
				h.Set("X-Api-Key", g.cfg.APIKey)
			}
			if g.cfg.AuthToken != "" {
				h.Set("Authorization", "Bearer "+g.cfg.AuthToken)
			}
			if g.cfg.OAuthToken != "" {
				injectOAuth(h, g.cfg.OAuthToken)
			}
		},
		Transport:     g.apiTr,
		FlushInterval: -1,
		ErrorLog:      g.errLog,
		ModifyResponse: func(res *http.Response) error {
			if res.StatusCode == http.StatusSwitchingProtocols {
				return errors.New("the API switched protocols; refused")
			}
			g.addStatus(res.StatusCode)
			if !countTokens && res.StatusCode/100 == 2 {
				// The model's answer reaches the sandbox from here on: what
				// it asks for may run, and later requests may be its doing.
				g.mu.Lock()
				g.stats.Answered = true
				g.mu.Unlock()
			}
			if res.StatusCode/100 != 2 {
				g.setReset(resetOf(res.Header, time.Now()))
			}
			if err := decode(res); err != nil {
				return err
			}
			res.Body = &respBody{rc: res.Body, scrub: newScrubber(g.secrets),
				parse: newParser(g, res.StatusCode, res.Header.Get("Content-Type"), req.model)}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if client.Err() != nil {
				// The worker went away before the API answered: after its
				// own timeout, the API was too slow; sooner, it left.
				waited := time.Since(began)
				g.mu.Lock()
				if wt := g.cfg.WorkerTimeout; wt > 0 && waited >= wt*9/10 {
					g.stats.UpstreamTimeouts++
					g.mu.Unlock()
					g.setLastError(fmt.Sprintf("zerg gateway: the model API sent no answer in %s, the worker's API timeout", waited.Round(time.Second)))
				} else {
					g.stats.ClientDrops++
					g.mu.Unlock()
				}
				return
			}
			msg := g.scrubString(err.Error())
			g.setLastError("zerg gateway: upstream request failed: " + msg)
			g.mu.Lock()
			g.stats.UpstreamFailures++
			g.mu.Unlock()
			status := http.StatusBadGateway
			if errors.Is(err, context.DeadlineExceeded) {
				status = http.StatusGatewayTimeout
			}
			writeAPIError(w, status, "api_error", "zerg gateway: upstream request failed: "+msg)
		},
	}
	rp.ServeHTTP(sw, r)
	sw.finish()
}

// OAuthBeta is the anthropic-beta value the CLI sends with a subscription
// token (claude.OAuthBeta); the API refuses a subscription token without it.
const OAuthBeta = "oauth-2025-04-20"

// injectOAuth sets a subscription token on an outgoing request the way the
// CLI 2.1.197 sends one (measured against a local server): "Authorization:
// Bearer <token>", no x-api-key, and OAuthBeta among the anthropic-beta
// values, added when the request lacks it (a worker that held a placeholder
// API key); the request's other betas are kept as they are.
func injectOAuth(h http.Header, token string) {
	h.Del("X-Api-Key")
	h.Set("Authorization", "Bearer "+token)
	vals := h.Values("Anthropic-Beta")
	for _, v := range vals {
		for _, b := range strings.Split(v, ",") {
			if strings.TrimSpace(b) == OAuthBeta {
				return
			}
		}
	}
	if len(vals) == 0 {
		h.Set("Anthropic-Beta", OAuthBeta)
		return
	}
	// After the CLI's own first beta, where the CLI puts it.
	first, rest, _ := strings.Cut(vals[0], ",")
	joined := first + "," + OAuthBeta
	if rest != "" {
		joined += "," + rest
	}
	h["Anthropic-Beta"] = append([]string{joined}, vals[1:]...)
}

// readRequestBody reads a request body of at most MaxRequestBody bytes.
func readRequestBody(r *http.Request) ([]byte, *refusal) {
	if r.ContentLength > MaxRequestBody {
		return nil, refuse(http.StatusRequestEntityTooLarge, "the request body of %d bytes is above the limit of %d", r.ContentLength, MaxRequestBody)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBody+1))
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "the request body could not be read: %s", clip(err.Error(), 200))
	}
	if len(body) > MaxRequestBody {
		return nil, refuse(http.StatusRequestEntityTooLarge, "the request body is above the limit of %d bytes", MaxRequestBody)
	}
	return body, nil
}

// allowed reports whether egress.allow covers host:port (for what the API
// itself would reach on the worker's behalf: a server tool's domains, an
// MCP server).
func (g *Gateway) allowed(hostname string, port int) bool {
	h, err := canonHost(hostname)
	if err != nil || refusedName(h) != "" {
		return false
	}
	for _, e := range g.allow {
		if e.matches(h, port) {
			return true
		}
	}
	return false
}

// admitSpend refuses a request once the attempt's or the run's budget is
// spent, and count_tokens requests past their rate.
func (g *Gateway) admitSpend(req checked) *refusal {
	pol := &g.cfg.Policy
	if req.countTokens {
		if !g.countLimit.Allow() {
			return refuse(http.StatusTooManyRequests, "count_tokens is limited to %d requests a minute", g.countPerMinute)
		}
		return nil
	}
	g.mu.Lock()
	spent := g.stats.CostUSD
	g.mu.Unlock()
	stop, why := "", ""
	switch {
	case pol.TaskUSD > 0 && spent >= pol.TaskUSD:
		stop, why = BudgetTask, fmt.Sprintf("the task's budget of $%.2f is spent ($%.4f by the API's usage)", pol.TaskUSD, spent)
	case pol.Run.Exhausted():
		stop, why = BudgetRun, fmt.Sprintf("the run's budget of $%.2f is spent ($%.4f by the API's usage)", pol.Run.Limit(), pol.Run.Spent())
	default:
		return nil
	}
	g.mu.Lock()
	if g.stats.BudgetStop == "" {
		g.stats.BudgetStop = stop
	}
	g.mu.Unlock()
	return refuse(http.StatusBadRequest, "%s", why)
}

// decode makes a response body plain text: gzip is undone here (the gateway
// asks for identity, but an upstream may ignore that); any other encoding is
// refused, because the body could not be scrubbed.
func decode(res *http.Response) error {
	enc := res.Header.Get("Content-Encoding")
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "", "identity":
		return nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			return fmt.Errorf("decode gzip answer: %w", err)
		}
		res.Body = struct {
			io.Reader
			io.Closer
		}{zr, res.Body}
		res.Header.Del("Content-Encoding")
		res.Header.Del("Content-Length")
		res.ContentLength = -1
		return nil
	default:
		return fmt.Errorf("answer in content encoding %q, which the gateway cannot scrub", enc)
	}
}

// respBody scrubs a response body as it is read and feeds it to a parser.
type respBody struct {
	rc    io.ReadCloser
	scrub *scrubber
	parse *parser // nil: no parsing (egress)
	out   []byte  // scrubbed bytes not yet returned
	buf   []byte
	eof   bool
	err   error
}

func (b *respBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		if b.eof {
			return 0, b.err
		}
		if b.buf == nil {
			b.buf = make([]byte, 32<<10)
		}
		n, err := b.rc.Read(b.buf)
		if n > 0 {
			b.emit(b.scrub.feed(b.buf[:n]))
		}
		if err != nil {
			b.emit(b.scrub.flush())
			b.end()
			b.eof, b.err = true, err
		}
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

func (b *respBody) emit(p []byte) {
	if len(p) == 0 {
		return
	}
	if b.parse != nil {
		b.parse.write(p)
	}
	b.out = append(b.out, p...)
}

// end finishes parsing. (Trailers are scrubbed by scrubWriter.finish.)
func (b *respBody) end() {
	if b.parse != nil {
		b.parse.finish()
		b.parse = nil
	}
}

func (b *respBody) Close() error {
	err := b.rc.Close()
	b.end()
	return err
}
