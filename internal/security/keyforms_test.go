package security

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf16"
)

// fakeAnthropicKey is a key of the real shape, built at run time so that no
// file of the repository holds one.
func fakeAnthropicKey(seed uint64) string {
	return join("sk-", "ant-", "api03-", newFakeGen(seed).s(urlSafe, 93), "AA")
}

func chunked(s string, n int, sep string) string {
	var parts []string
	for i := 0; i < len(s); i += n {
		parts = append(parts, s[i:min(i+n, len(s))])
	}
	return strings.Join(parts, sep)
}

func bytesAs(s, format, sep string) string {
	var parts []string
	for _, c := range []byte(s) {
		parts = append(parts, fmt.Sprintf(format, c))
	}
	return strings.Join(parts, sep)
}

func utf16le(s string) string {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return string(b)
}

// normTail is the shortest end of s that holds n ASCII letters and digits.
func normTail(s string, n int) string {
	for i := len(s) - 1; i >= 0; i-- {
		if len(keyNorm([]byte(s[i:]))) == n {
			return s[i:]
		}
	}
	return s
}

// TestContainsKeyForms: each way a worker could write down the key it was
// given, inside ordinary surroundings, is found.
func TestContainsKeyForms(t *testing.T) {
	key := fakeAnthropicKey(7)
	forms := KeyForms(key)
	b32 := base32.StdEncoding
	cases := map[string]string{
		"exact":              "ANTHROPIC_API_KEY=" + key + "\n",
		"json":               `{"apiKey": "` + key + `"}`,
		"upper-cased":        strings.ToUpper(key),
		"separators removed": strings.NewReplacer("-", "", "_", "").Replace(key),
		"split by newlines":  chunked(key, 5, "\n"),
		"split by spaces":    chunked(key, 3, " "),
		"concatenated":       `k = "` + chunked(key, 9, `" + "`) + `"`,
		"utf-16":             utf16le("key: " + key),
		"reversed":           "x = '" + keyReverse(key) + "'[::-1]",
		"rot13":              "codecs.decode('" + keyRot13(key) + "', 'rot13')",
		"hex":                "h=" + hex.EncodeToString([]byte(key)),
		"HEX":                strings.ToUpper(hex.EncodeToString([]byte(key))),
		"hex lines":          chunked(hex.EncodeToString([]byte(key)), 16, "\n"),
		"percent every byte": bytesAs(key, "%%%02X", ""),
		`\x escapes`:         `"` + bytesAs(key, `\x%02x`, "") + `"`,
		"0x byte array":      "{" + bytesAs(key, "0x%02x", ", ") + "}",
		"decimal list":       "[" + bytesAs(key, "%d", ", ") + "]",
		"html entities":      bytesAs(key, "&#%d;", ""),
		`\u escapes`:         `"` + bytesAs(key, `\u%04x`, "") + `"`,
		"first 30 chars":     "part1=" + key[:30],
		"last 30 chars":      "part2=" + key[len(key)-30:],
		"middle 30 chars":    key[41:71],
		"last 20 letters":    "part3=" + normTail(key, keyChunkLen),
	}
	for pre := range 3 {
		text := strings.Repeat("p", pre) + key + "\n"
		cases[fmt.Sprintf("base64 std, %d bytes before", pre)] = base64.StdEncoding.EncodeToString([]byte(text))
		cases[fmt.Sprintf("base64 url raw, %d bytes before", pre)] = base64.RawURLEncoding.EncodeToString([]byte(text))
		cases[fmt.Sprintf("base64 wrapped at 76, %d bytes before", pre)] = chunked(base64.StdEncoding.EncodeToString([]byte(text)), 76, "\n")
	}
	for pre := range 5 {
		text := strings.Repeat("p", pre) + key
		cases[fmt.Sprintf("base32, %d bytes before", pre)] = b32.EncodeToString([]byte(text))
		cases[fmt.Sprintf("base32 lower, %d bytes before", pre)] = strings.ToLower(b32.EncodeToString([]byte(text)))
	}
	for name, data := range cases {
		if !ContainsKey([]byte("some text before\n"+data+"\nand after"), forms) {
			t.Errorf("%s: not found", name)
		}
	}
}

// TestContainsKeyNoFalseMatch: other keys of the same shape, the shared
// prefix, short pieces and ordinary text do not match.
func TestContainsKeyNoFalseMatch(t *testing.T) {
	key := fakeAnthropicKey(7)
	forms := KeyForms(key)
	other := fakeAnthropicKey(8)
	for name, data := range map[string]string{
		"another key":            other,
		"another key, base64":    base64.StdEncoding.EncodeToString([]byte(other)),
		"another key, hex":       hex.EncodeToString([]byte(other)),
		"another key, reversed":  keyReverse(other),
		"the prefix and a piece": key[:22],
		"a short piece":          key[50:68],
		"empty":                  "",
		"prose":                  strings.Repeat("The quick brown fox jumps over the lazy dog 0123456789. ", 200),
	} {
		if ContainsKey([]byte(data), forms) {
			t.Errorf("%s: matched", name)
		}
	}
	if ContainsKey([]byte(key), nil) {
		t.Error("no forms matched")
	}
	if ContainsKey([]byte(key), []string{key[:minFormLen-1]}) {
		t.Error("a form shorter than the minimum matched")
	}
}

// TestContainsKeyURLEncoded: a secret with characters that URL encoding
// changes is found in a query string and in a path.
func TestContainsKeyURLEncoded(t *testing.T) {
	secret := "Zq8@Lm3/Rt7+Wx2v=Pk9&Nc4!Hy6#"
	forms := KeyForms(secret)
	for _, data := range []string{
		"https://example.com/cb?token=" + url.QueryEscape(secret) + "&x=1",
		"https://example.com/" + url.PathEscape(secret) + "/x",
	} {
		if !ContainsKey([]byte(data), forms) {
			t.Errorf("not found in %s", data)
		}
	}
}

func TestKeyFormsShortSecret(t *testing.T) {
	if f := KeyForms(strings.Repeat("k", MinKeyLen-1)); f != nil {
		t.Fatalf("forms of a short secret: %d", len(f))
	}
	sixteen := "Zq8-Lm3_Rt7-Wx2v"
	forms := KeyForms(sixteen)
	if len(forms) == 0 || forms[0] != sixteen {
		t.Fatalf("forms of a %d-byte secret: %d", len(sixteen), len(forms))
	}
	if !ContainsKey([]byte("v="+strings.ToLower(sixteen)), forms) {
		t.Fatal("the exact 16-byte secret is not found")
	}
	seen := map[string]bool{}
	for _, f := range forms {
		n := string(keyNorm([]byte(f)))
		if len(n) < minFormLen || seen[n] {
			t.Errorf("form normalised to %d characters, duplicate %v", len(n), seen[n])
		}
		seen[n] = true
	}
}
