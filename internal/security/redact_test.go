package security

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"testing"
)

// fakeToken is an auth token with characters URL encoding changes, built
// at run time like fakeAnthropicKey.
func fakeToken(seed uint64) string {
	return join("tok/", newFakeGen(seed).s(alnum, 24), "+x=y&z")
}

// TestRedact: each form of each secret is replaced, and the text around it
// is kept.
func TestRedactorForms(t *testing.T) {
	key, tok := fakeAnthropicKey(11), fakeToken(12)
	r := NewRedactor(key, tok, "", "short")
	b64 := base64.StdEncoding.EncodeToString
	cases := map[string]struct {
		in     string
		secret string // must not survive
	}{
		"key in stream json":             {`{"type":"user","content":"ANTHROPIC_API_KEY=` + key + `\n"}`, key},
		"key twice":                      {key + " and " + key, key},
		"token":                          {"Authorization: Bearer " + tok, tok},
		"key base64":                     {"b64: " + b64([]byte(key)), b64([]byte(key))},
		"key base64 url":                 {base64.RawURLEncoding.EncodeToString([]byte(key)), ""},
		"env line base64, key unaligned": {b64([]byte("export ANTHROPIC_API_KEY=" + key + "\n")), ""},
		"key hex":                        {"0x" + hex.EncodeToString([]byte(key)), hex.EncodeToString([]byte(key))},
		"key HEX":                        {strings.ToUpper(hex.EncodeToString([]byte(key))), ""},
		"token url-encoded":              {"https://x.example/?t=" + url.QueryEscape(tok) + "&a=1", url.QueryEscape(tok)},
		"token path-escaped":             {"/v1/" + url.PathEscape(tok) + "/x", url.PathEscape(tok)},
		"token hex":                      {hex.EncodeToString([]byte(tok)), ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := string(r.Redact([]byte(c.in)))
			if !strings.Contains(got, Redacted) {
				t.Fatalf("nothing redacted in %q", got)
			}
			for _, s := range []string{key, tok, c.secret} {
				if s != "" && strings.Contains(got, s) {
					t.Fatalf("%q survives in %q", s, got)
				}
			}
			// The longest stretch of a secret's base64 or hex left must be
			// short: what stays is a few edge characters of an encoding.
			for _, enc := range []string{b64([]byte(key)), hex.EncodeToString([]byte(key)), b64([]byte(tok))} {
				if strings.Contains(got, enc[4:len(enc)-4]) {
					t.Fatalf("the middle of an encoding survives in %q", got)
				}
			}
		})
	}
	// Inside a longer encoded text the key's whole base64 groups go: at most
	// the two groups at its edges (8 characters) are left.
	env := b64([]byte("export ANTHROPIC_API_KEY=" + key + "\n"))
	if got := r.RedactString(env); len(got) > len(env)-len(key)*4/3+8+len(Redacted) {
		t.Errorf("only %d of %d characters of the encoded key redacted: %q", len(env)-len(got)+len(Redacted), len(key)*4/3, got)
	}
	text := "gate test: ok\n"
	if got := r.Redact([]byte("[" + key + "]" + text)); string(got) != "["+Redacted+"]"+text {
		t.Errorf("surroundings changed: %q", got)
	}
	// A value shorter than MinRedactLen is no key: "short" stays.
	if got := r.RedactString("a short word"); got != "a short word" {
		t.Errorf("short value redacted: %q", got)
	}
	var none *Redactor
	if got := none.RedactString(key); got != key || none.Active() || NewRedactor("", "tiny").Active() {
		t.Errorf("an empty redactor changed %q or is active", got)
	}
}

// TestRedactWriterSplit: a secret split across two Write calls, at every
// point, or written a byte at a time, is redacted exactly as Redact does it
// on the whole text, and nothing is lost or doubled.
func TestRedactWriterSplit(t *testing.T) {
	key := fakeAnthropicKey(21)
	r := NewRedactor(key)
	whole := `{"type":"assistant","text":"the key is ` + key + ` ok"}` + "\n" +
		base64.StdEncoding.EncodeToString([]byte("k="+key)) + "\nend\n"
	want := string(r.Redact([]byte(whole)))
	if strings.Contains(want, key) {
		t.Fatal("Redact missed the key")
	}
	start := strings.Index(whole, key)
	for split := start - 2; split <= start+len(key)+2; split++ {
		var out bytes.Buffer
		w := r.Writer(&out)
		for _, part := range []string{whole[:split], whole[split:]} {
			if n, err := w.Write([]byte(part)); err != nil || n != len(part) {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("split at %d: got\n%q\nwant\n%q", split, out.String(), want)
		}
	}
	var out bytes.Buffer
	w := r.Writer(&out)
	for i := range len(whole) {
		w.Write([]byte{whole[i]})
	}
	w.Flush()
	if out.String() != want {
		t.Fatalf("byte by byte: got\n%q\nwant\n%q", out.String(), want)
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatalf("Write after Flush: %v", err)
	}
	w.Close()
	if _, err := w.Write([]byte("x")); !errors.Is(err, ErrWriterClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
}

// TestRedactWriterPassThrough: text without a secret comes out unchanged;
// only the held-back tail waits for Close; with no secret nothing waits.
func TestRedactWriterPassThrough(t *testing.T) {
	r := NewRedactor(fakeAnthropicKey(31))
	text := strings.Repeat("ordinary output line\n", 200)
	var out bytes.Buffer
	w := r.Writer(&out)
	w.Write([]byte(text))
	if out.Len() == 0 || out.Len() >= len(text) || out.Len() < len(text)-r.max {
		t.Fatalf("before Close %d of %d bytes written, want all but < %d", out.Len(), len(text), r.max)
	}
	w.Close()
	if out.String() != text {
		t.Fatal("text changed")
	}
	out.Reset()
	w = NewRedactor().Writer(&out)
	w.Write([]byte("abc"))
	if out.String() != "abc" {
		t.Fatalf("an inactive writer held %q back", "abc")
	}
}

type failWriter struct{ fail bool }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.fail {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// TestRedactWriterError: a failed write is reported, and what was held
// back is not lost.
func TestRedactWriterError(t *testing.T) {
	r := NewRedactor(fakeAnthropicKey(41))
	fw := &failWriter{fail: true}
	w := r.Writer(fw)
	big := bytes.Repeat([]byte("x"), 4*r.max)
	if n, err := w.Write(big); err == nil || n != 0 {
		t.Fatalf("Write to a failing writer = %d, %v", n, err)
	}
	if len(w.buf) != 0 {
		t.Fatalf("a failed Write kept %d bytes", len(w.buf))
	}
	fw.fail = false
	if n, err := w.Write(big); err != nil || n != len(big) {
		t.Fatalf("Write = %d, %v", n, err)
	}
}

// TestRedactOverlap: secrets that overlap in the text are one redaction,
// and neither leaves a part behind.
func TestRedactOverlap(t *testing.T) {
	r := NewRedactor("0123456789abcdef", "abcdefghijklmnop")
	got := r.RedactString("x0123456789abcdefghijklmnopx 0123456789abcdef.")
	if want := "x" + Redacted + "x " + Redacted + "."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
