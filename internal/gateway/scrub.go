package gateway

import (
	"bytes"
	"net/http"
	"strings"
)

// minSecretLen is the shortest credential the gateway scrubs from responses:
// masking a shorter string would mangle ordinary text. Real API keys and
// OAuth tokens are around 100 characters.
const minSecretLen = 8

// holdMax bounds how much of an unfinished line the scrubber holds back.
const holdMax = 64 << 10

// scrubber masks the real credentials in a byte stream, in place and with
// the same length (so a Content-Length stays right), across read
// boundaries. It releases text up to the last newline it has seen: an SSE
// event ends with a blank line, so every event goes out as soon as it is
// complete, and a credential (which never contains a newline) cannot
// straddle what was released and what is held. An unfinished line longer
// than holdMax is released except for its last len(secret)-1 bytes.
type scrubber struct {
	secrets [][]byte
	maxLen  int
	pending []byte
}

func newScrubber(secrets [][]byte) *scrubber {
	s := &scrubber{secrets: secrets}
	for _, k := range secrets {
		s.maxLen = max(s.maxLen, len(k))
	}
	return s
}

// feed adds p and returns what can be released now.
func (s *scrubber) feed(p []byte) []byte {
	if len(s.secrets) == 0 {
		return p
	}
	s.pending = append(s.pending, p...)
	mask(s.pending, s.secrets)
	cut := bytes.LastIndexByte(s.pending, '\n') + 1
	if len(s.pending)-cut > holdMax {
		cut = len(s.pending) - (s.maxLen - 1)
	}
	return s.release(cut)
}

// flush returns everything held, at the end of the stream.
func (s *scrubber) flush() []byte {
	return s.release(len(s.pending))
}

func (s *scrubber) release(n int) []byte {
	if n <= 0 {
		return nil
	}
	out := bytes.Clone(s.pending[:n])
	s.pending = append(s.pending[:0], s.pending[n:]...)
	return out
}

// mask overwrites every occurrence of each secret in b with asterisks.
func mask(b []byte, secrets [][]byte) {
	for _, k := range secrets {
		for i := 0; ; {
			j := bytes.Index(b[i:], k)
			if j < 0 {
				break
			}
			for n := range k {
				b[i+j+n] = '*'
			}
			i += j + len(k)
		}
	}
}

func (g *Gateway) scrubString(s string) string {
	for _, k := range g.secrets {
		s = strings.ReplaceAll(s, string(k), strings.Repeat("*", len(k)))
	}
	return s
}

func (g *Gateway) scrubHeader(h http.Header) {
	for name, vs := range h {
		for i, v := range vs {
			vs[i] = g.scrubString(v)
		}
		if clean := g.scrubString(name); clean != name {
			delete(h, name)
			h[clean] = vs
		}
	}
}

// scrubWriter scrubs the response headers (1xx, final and trailers) before
// they are sent; bodies are scrubbed where they are read (respBody).
type scrubWriter struct {
	http.ResponseWriter
	g     *Gateway
	wrote bool // final headers sent
}

func (w *scrubWriter) WriteHeader(code int) {
	w.g.scrubHeader(w.Header())
	if code >= 200 {
		w.wrote = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *scrubWriter) Write(p []byte) (int, error) {
	if !w.wrote { // an implicit WriteHeader(200)
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// finish scrubs trailers set after the body, before the handler returns.
func (w *scrubWriter) finish() { w.g.scrubHeader(w.Header()) }

func (w *scrubWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *scrubWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
