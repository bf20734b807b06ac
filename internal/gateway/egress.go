package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// ctxKey carries the checked destination addresses of an egress request to
// dialChecked.
type ctxKey struct{}

// errNotChecked is returned by dialChecked for a dial without a check; it
// cannot happen through serve.
var errNotChecked = errors.New("egress dial without an allowlist check")

// decision is the outcome of check: addrs to dial, or a denial reason, or an
// error (a failed lookup: 502, not a denial).
type decision struct {
	addrs  []netip.AddrPort
	reason string
	err    error
}

// check decides an egress destination: refused literal addresses and
// localhost names first (whatever the allowlist says), then the allowlist,
// then every address the name resolves to. The addresses returned are the
// ones checked, and the only ones dialled, so a second lookup cannot swap in
// another answer.
func (g *Gateway) check(ctx context.Context, h host, port int) decision {
	if why := refusedName(h); why != "" {
		return decision{reason: "refused: " + why}
	}
	allowed := false
	for _, e := range g.allow {
		if e.matches(h, port) {
			allowed = true
			break
		}
	}
	if !allowed {
		return decision{reason: "not allowlisted"}
	}
	ips := []netip.Addr{h.ip}
	if !h.ip.IsValid() {
		var err error
		ips, err = g.net.lookup(ctx, h.name)
		if err != nil {
			return decision{err: fmt.Errorf("look up %s: %w", h.name, err)}
		}
		if len(ips) == 0 {
			return decision{err: fmt.Errorf("look up %s: no addresses", h.name)}
		}
	}
	own := g.net.own()
	d := decision{}
	for _, ip := range ips {
		if why := refusedAddr(ip, own); why != "" {
			return decision{reason: fmt.Sprintf("%s resolves to a refused address: %s", h, why)}
		}
		d.addrs = append(d.addrs, netip.AddrPortFrom(ip.Unmap(), uint16(port)))
	}
	return d
}

// dialChecked dials the addresses check returned for this request, in order.
func (g *Gateway) dialChecked(ctx context.Context, network, _ string) (net.Conn, error) {
	addrs, _ := ctx.Value(ctxKey{}).([]netip.AddrPort)
	if len(addrs) == 0 {
		return nil, errNotChecked
	}
	var errs []error
	for _, a := range addrs {
		c, err := g.net.dial(ctx, network, a.String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// connect handles CONNECT host:port: a tunnel to an allowlisted destination.
func (g *Gateway) connect(w http.ResponseWriter, r *http.Request) {
	target := r.RequestURI
	h, port, err := splitTarget(r.URL.Host)
	if err != nil || r.URL.Path != "" {
		g.deny(w, r, target, "bad target: want host:port")
		return
	}
	d, ok := g.admit(w, r, target, h, port)
	if !ok {
		return
	}
	// Not the request's context: a client that half-closes after CONNECT
	// would cancel it. Close cancels g.ctx.
	dctx, cancel := context.WithTimeout(g.ctx, 30*time.Second)
	up, err := g.dialChecked(context.WithValue(dctx, ctxKey{}, d.addrs), "tcp", "")
	cancel()
	if err != nil {
		http.Error(w, "zerg gateway: connect "+target+": "+err.Error(), http.StatusBadGateway)
		return
	}
	client, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		up.Close()
		http.Error(w, "zerg gateway: cannot tunnel", http.StatusInternalServerError)
		return
	}
	if !g.track(client, up) {
		client.Close()
		up.Close()
		return
	}
	defer g.untrack(client, up)
	g.mu.Lock()
	g.stats.Egress++
	g.mu.Unlock()

	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		client.Close()
		up.Close()
		return
	}
	// Bytes the client sent after the CONNECT line (a TLS ClientHello sent
	// without waiting) are already in the server's read buffer.
	if n := rw.Reader.Buffered(); n > 0 {
		b, _ := rw.Reader.Peek(n)
		if _, err := up.Write(b); err != nil {
			client.Close()
			up.Close()
			return
		}
	}
	pipe(client, up)
}

// pipe copies both ways until both directions are done, then closes both.
func pipe(a, b net.Conn) {
	var wg sync.WaitGroup
	cp := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			_ = dst.Close()
		}
	}
	wg.Add(2)
	go cp(a, b)
	go cp(b, a)
	wg.Wait()
	a.Close()
	b.Close()
}

// track registers a tunnel's connections so Close can end them; false when
// the gateway is already closing.
func (g *Gateway) track(conns ...net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	for _, c := range conns {
		g.tunnels[c] = struct{}{}
	}
	return true
}

func (g *Gateway) untrack(conns ...net.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range conns {
		delete(g.tunnels, c)
	}
}

// forward handles an absolute-form request for another host: plain HTTP to an
// allowlisted destination, without the gateway's credentials.
func (g *Gateway) forward(w http.ResponseWriter, r *http.Request) {
	target := r.RequestURI
	if r.URL.Scheme != "http" {
		g.deny(w, r, target, fmt.Sprintf("scheme %q is not forwarded; use CONNECT for https", r.URL.Scheme))
		return
	}
	h, err := canonHost(r.URL.Hostname())
	if err != nil {
		g.deny(w, r, target, "bad host: "+err.Error())
		return
	}
	port := 80
	if p := r.URL.Port(); p != "" {
		if port, err = parsePort(p); err != nil {
			g.deny(w, r, target, "bad port: "+err.Error())
			return
		}
	}
	d, ok := g.admit(w, r, target, h, port)
	if !ok {
		return
	}
	g.mu.Lock()
	g.stats.Egress++
	g.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), ctxKey{}, d.addrs), g.timeout)
	defer cancel()
	sw := &scrubWriter{ResponseWriter: w, g: g}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			u := *pr.In.URL
			u.Host = net.JoinHostPort(h.String(), strconv.Itoa(port))
			pr.Out.URL = &u
			pr.Out.Host = pr.In.Host
		},
		Transport:     g.egressTr,
		FlushInterval: -1,
		ErrorLog:      g.errLog,
		ModifyResponse: func(res *http.Response) error {
			if res.StatusCode == http.StatusSwitchingProtocols {
				return errors.New("protocol switch refused")
			}
			if err := decode(res); err != nil {
				return err
			}
			res.Body = &respBody{rc: res.Body, scrub: newScrubber(g.secrets)}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "zerg gateway: "+g.scrubString(err.Error()), http.StatusBadGateway)
		},
	}
	rp.ServeHTTP(sw, r.WithContext(ctx))
	sw.finish()
}

// admit checks an egress target and answers the refusal itself: a 403 for
// a denial (recorded), a 502 when the check could not be made. ok is false
// when the request must go no further.
func (g *Gateway) admit(w http.ResponseWriter, r *http.Request, target string, h host, port int) (decision, bool) {
	d := g.check(r.Context(), h, port)
	switch {
	case d.reason != "":
		g.deny(w, r, target, d.reason)
		return d, false
	case d.err != nil:
		http.Error(w, "zerg gateway: "+d.err.Error(), http.StatusBadGateway)
		return d, false
	}
	return d, true
}
