package gateway

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"path"
	"strings"
	"time"
)

// APIPrefix is the only path prefix the gateway forwards to the model API:
// the Messages API (and its token counting), nothing else the key could
// reach (files, batches, models).
const APIPrefix = "/v1/messages"

// api forwards a model-API request: the sandbox's credentials are replaced by
// the real ones, the answer streams back unbuffered and is parsed on the way.
func (g *Gateway) api(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if (p != APIPrefix && !strings.HasPrefix(p, APIPrefix+"/")) || strings.ContainsRune(p, '\\') || path.Clean(p) != strings.TrimSuffix(p, "/") {
		writeAPIError(w, http.StatusNotFound, "not_found_error", "zerg gateway: only "+APIPrefix+" is forwarded to the model API")
		return
	}
	foreign := false
	if k := r.Header.Values("X-Api-Key"); len(k) > 1 || len(k) == 1 && k[0] != g.cfg.Placeholder {
		foreign = true
	}
	if a := r.Header.Values("Authorization"); len(a) > 1 || len(a) == 1 && a[0] != "Bearer "+g.cfg.Placeholder {
		foreign = true
	}
	g.mu.Lock()
	g.stats.Requests++
	if foreign {
		g.stats.ForeignKeys++
	}
	g.mu.Unlock()

	target := *g.upstream
	target.Path = strings.TrimSuffix(g.upstream.Path, "/") + path.Clean(p)
	if strings.HasSuffix(p, "/") {
		target.Path += "/"
	}
	target.RawPath = ""
	target.RawQuery = r.URL.RawQuery

	ctx, cancel := context.WithTimeout(r.Context(), g.timeout)
	defer cancel()
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
		},
		Transport:     g.apiTr,
		FlushInterval: -1,
		ErrorLog:      g.errLog,
		ModifyResponse: func(res *http.Response) error {
			if res.StatusCode == http.StatusSwitchingProtocols {
				return errors.New("the API switched protocols; refused")
			}
			g.addStatus(res.StatusCode)
			if res.StatusCode/100 != 2 {
				g.setReset(resetOf(res.Header, time.Now()))
			}
			if err := decode(res); err != nil {
				return err
			}
			res.Body = &respBody{rc: res.Body, scrub: newScrubber(g.secrets),
				parse: newParser(g, res.StatusCode, res.Header.Get("Content-Type"))}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			msg := g.scrubString(err.Error())
			g.setLastError("zerg gateway: upstream request failed: " + msg)
			status := http.StatusBadGateway
			if errors.Is(err, context.DeadlineExceeded) {
				status = http.StatusGatewayTimeout
			}
			writeAPIError(w, status, "api_error", "zerg gateway: upstream request failed: "+msg)
		},
	}
	rp.ServeHTTP(sw, r.WithContext(ctx))
	sw.finish()
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
