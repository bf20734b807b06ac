package security

import (
	"bytes"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
)

// A secret zerg knows exactly (the API key it hands a worker) is looked for
// in what the worker commits not only as written but in the forms a worker
// could use to carry it past a literal match. Matching is done on
// normalised text: ASCII letters lower-cased, every byte that is not an
// ASCII letter or digit dropped, in the data and in the forms alike.
// Dropping characters and folding case never break a real occurrence, and
// they make the match blind to whitespace or newlines inserted every few
// characters, quotes and "+" of string concatenation, a NUL after every
// byte (UTF-16), the separators of escapes ("%", "\x", ", "), and case
// (hex, base32 or the whole key upper-cased).

// MinKeyLen is the shortest secret KeyForms accepts: a shorter one would
// match by chance.
const MinKeyLen = 16

// minFormLen is the shortest normalised form ContainsKey looks for.
const minFormLen = 12

// Key chunks: any stretch of keyChunkLen normalised characters of the key,
// taken every keyChunkStep, is a form of its own, so a key cut into pieces
// of at least keyChunkLen+keyChunkStep-1 characters (across lines, strings
// or files) is still found.
const (
	keyChunkLen  = 20
	keyChunkStep = 10
)

// KeyForms returns the forms of secret that ContainsKey looks for, or nil
// when secret is shorter than MinKeyLen bytes. The forms are as sensitive as
// the secret: never log or report them.
//
// The forms: the secret; reversed; rot13; hex; the byte values as \xHH,
// 0xHH, \u00HH escapes and as decimal numbers ("115, 107, …", "&#115;");
// base64 (standard and URL alphabets, padded or not) and base32, each in
// every alignment, so the key is found inside the encoding of a longer
// text; URL-encoded; and every keyChunkLen-character stretch of the
// normalised key. With normalisation these also cover the key with its
// separators removed, split by whitespace, upper-cased, and hex in either
// case or percent-encoded byte by byte.
func KeyForms(secret string) []string {
	if len(secret) < MinKeyLen {
		return nil
	}
	b := []byte(secret)
	forms := []string{secret, keyReverse(secret), keyRot13(secret), hex.EncodeToString(b)}
	var esc, oxs, uni, dec strings.Builder
	for _, c := range b {
		fmt.Fprintf(&esc, `\x%02x`, c)
		fmt.Fprintf(&oxs, "0x%02x,", c)
		fmt.Fprintf(&uni, `\u%04x`, c)
		fmt.Fprintf(&dec, "%d,", c)
	}
	forms = append(forms, esc.String(), oxs.String(), uni.String(), dec.String())
	// An encoder turns each group of 3 (base64) or 5 (base32) bytes into
	// 4 or 8 characters. Inside a longer text the key starts at any offset
	// of a group; the whole groups after that offset encode the same way
	// whatever surrounds them.
	for off := range 3 {
		core := b[off:]
		core = core[:len(core)/3*3]
		forms = append(forms, base64.RawStdEncoding.EncodeToString(core), base64.RawURLEncoding.EncodeToString(core))
	}
	for off := range 5 {
		core := b[off:]
		core = core[:len(core)/5*5]
		forms = append(forms, base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(core))
	}
	forms = append(forms, url.QueryEscape(secret), url.PathEscape(secret))
	norm := keyNorm(b)
	if len(norm) >= 2*keyChunkLen {
		for i := 0; ; i += keyChunkStep {
			if i+keyChunkLen >= len(norm) {
				forms = append(forms, string(norm[len(norm)-keyChunkLen:]))
				break
			}
			forms = append(forms, string(norm[i:i+keyChunkLen]))
		}
	}
	// Keep one of the forms that normalise alike, and none too short.
	seen := map[string]bool{}
	out := forms[:0]
	for _, f := range forms {
		n := string(keyNorm([]byte(f)))
		if len(n) < minFormLen || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, f)
	}
	return out
}

// ContainsKey reports whether data holds any of forms (from KeyForms),
// compared after normalisation (see KeyForms): whitespace, punctuation, NUL
// bytes and case in data do not hide a form.
func ContainsKey(data []byte, forms []string) bool {
	if len(forms) == 0 {
		return false
	}
	nd := keyNorm(data)
	for _, f := range forms {
		nf := keyNorm([]byte(f))
		if len(nf) >= minFormLen && bytes.Contains(nd, nf) {
			return true
		}
	}
	return false
}

// keyNorm keeps the ASCII letters (lower-cased) and digits of b.
func keyNorm(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			out = append(out, c)
		case 'A' <= c && c <= 'Z':
			out = append(out, c+'a'-'A')
		}
	}
	return out
}

func keyReverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

func keyRot13(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z':
			b[i] = 'a' + (c-'a'+13)%26
		case 'A' <= c && c <= 'Z':
			b[i] = 'A' + (c-'A'+13)%26
		}
	}
	return string(b)
}
