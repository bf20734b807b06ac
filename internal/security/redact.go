package security

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// Redacted replaces every secret a Redactor finds.
const Redacted = "[REDACTED]"

// MinRedactLen is the shortest secret a Redactor looks for: a shorter value
// would redact ordinary words, and is no real key.
const MinRedactLen = 8

// Redactor replaces the secrets zerg knows (the API key and auth token it
// hands workers) in text zerg keeps: a worker's stream, its verification
// output. It looks for each secret literally and in the forms a program
// prints it in without trying to hide it: base64 (standard and URL
// alphabets, padded or not, at any alignment inside a longer encoded text),
// hex in either case, URL-encoded, and the other forms of KeyForms. Matching
// is exact (case and separators count): it is a scrubber for logs, not the
// separator-blind search ContainsKey does on commits.
//
// A nil *Redactor, or one built from no usable secret, changes nothing. A
// Redactor is safe for concurrent use.
type Redactor struct {
	forms [][]byte // longest first
	max   int      // length of the longest form
}

// NewRedactor returns a Redactor for secrets; empty values and values
// shorter than MinRedactLen are ignored.
func NewRedactor(secrets ...string) *Redactor {
	seen := map[string]bool{}
	r := &Redactor{}
	for _, s := range secrets {
		if len(s) < MinRedactLen {
			continue
		}
		for _, f := range redactForms(s) {
			if len(f) < MinRedactLen || seen[f] {
				continue
			}
			seen[f] = true
			r.forms = append(r.forms, []byte(f))
			r.max = max(r.max, len(f))
		}
	}
	slices.SortFunc(r.forms, func(a, b []byte) int { return len(b) - len(a) })
	return r
}

// redactForms lists the literal forms of secret to look for: KeyForms (for a
// secret long enough for it) plus the forms an exact match needs that
// KeyForms leaves to its normalisation (padded base64, upper-case hex).
func redactForms(secret string) []string {
	b := []byte(secret)
	hx := hex.EncodeToString(b)
	forms := []string{
		secret,
		hx, strings.ToUpper(hx),
		base64.StdEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
		url.QueryEscape(secret), url.PathEscape(secret),
	}
	return append(forms, KeyForms(secret)...)
}

// Active reports whether r has anything to look for.
func (r *Redactor) Active() bool { return r != nil && len(r.forms) > 0 }

// Redact returns b with every occurrence of a secret's form replaced by
// Redacted. When nothing is found it returns b itself.
func (r *Redactor) Redact(b []byte) []byte {
	if !r.Active() {
		return b
	}
	spans := r.find(b)
	if len(spans) == 0 {
		return b
	}
	return replaceSpans(nil, b, spans)
}

// RedactString is Redact for a string.
func (r *Redactor) RedactString(s string) string {
	if !r.Active() {
		return s
	}
	return string(r.Redact([]byte(s)))
}

// span is [start, end) of b.
type span struct{ start, end int }

// find returns the places of every form in b, sorted, overlapping ones
// merged.
func (r *Redactor) find(b []byte) []span {
	var spans []span
	for _, f := range r.forms {
		for off := 0; off+len(f) <= len(b); {
			i := bytes.Index(b[off:], f)
			if i < 0 {
				break
			}
			spans = append(spans, span{off + i, off + i + len(f)})
			off += i + 1
		}
	}
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	out := spans[:1]
	for _, s := range spans[1:] {
		if last := &out[len(out)-1]; s.start < last.end {
			last.end = max(last.end, s.end)
		} else {
			out = append(out, s)
		}
	}
	return out
}

// replaceSpans appends b to dst with each span replaced by Redacted.
func replaceSpans(dst, b []byte, spans []span) []byte {
	prev := 0
	for _, s := range spans {
		dst = append(dst, b[prev:s.start]...)
		dst = append(dst, Redacted...)
		prev = s.end
	}
	return append(dst, b[prev:]...)
}

// Writer returns a writer that redacts what it passes to w, also a secret
// split across several Write calls: it holds back the last len(longest
// form)-1 bytes until more arrive or Close. Close (or Flush) writes what is
// held back; it does not close w. With nothing to look for it writes through
// at once. The writer is safe for concurrent use.
//
//	red := security.NewRedactor(apiKey, authToken)
//	rw := red.Writer(file)
//	defer rw.Close() // before file.Close
func (r *Redactor) Writer(w io.Writer) *RedactWriter {
	return &RedactWriter{r: r, w: w}
}

// RedactWriter is the writer of Redactor.Writer.
type RedactWriter struct {
	mu     sync.Mutex
	r      *Redactor
	w      io.Writer
	buf    []byte // held back: may be the start of a form
	out    []byte
	closed bool
}

// ErrWriterClosed is returned by a Write after Close.
var ErrWriterClosed = errors.New("write redacted: the writer is closed")

// Write redacts p (with what is held back from earlier writes) and writes all
// of it that can no longer be the start of a secret's form.
func (rw *RedactWriter) Write(p []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.closed {
		return 0, ErrWriterClosed
	}
	if !rw.r.Active() {
		return rw.w.Write(p)
	}
	buf := append(rw.buf, p...)
	// A form that starts before cut ends inside buf: it is complete and
	// found now. One that starts at cut or later may still be cut short.
	cut := len(buf) - (rw.r.max - 1)
	if cut <= 0 {
		rw.buf = buf
		return len(p), nil
	}
	spans := rw.r.find(buf)
	end := cut
	var done []span
	for _, s := range spans {
		if s.start >= end {
			break
		}
		done = append(done, s)
		end = max(end, s.end)
	}
	rw.out = replaceSpans(rw.out[:0], buf[:end], done)
	if _, err := rw.w.Write(rw.out); err != nil {
		return 0, err // rw.buf is as it was: p may be written again
	}
	rw.buf = append(buf[:0], buf[end:]...)
	return len(p), nil
}

// Flush redacts and writes what is held back. Call it at the end of the
// stream: a secret split across a Flush is not found.
func (rw *RedactWriter) Flush() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.flush()
}

func (rw *RedactWriter) flush() error {
	if len(rw.buf) == 0 {
		return nil
	}
	if _, err := rw.w.Write(rw.r.Redact(rw.buf)); err != nil {
		return err
	}
	rw.buf = rw.buf[:0]
	return nil
}

// Close flushes and refuses further writes. It does not close the
// underlying writer.
func (rw *RedactWriter) Close() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.closed {
		return nil
	}
	rw.closed = true
	return rw.flush()
}
