package textx

import (
	"testing"
	"unicode/utf8"
)

func TestClipAndOneLine(t *testing.T) {
	if got := Clip("abcdef", 3); got != "abc…" {
		t.Errorf("Clip ascii: %q", got)
	}
	if got := Clip("abc", 3); got != "abc" {
		t.Errorf("Clip short: %q", got)
	}
	// "é" is two bytes: a cut inside it backs off to its start.
	if got := Clip("aé", 2); got != "a…" || !utf8.ValidString(got) {
		t.Errorf("Clip inside a character: %q", got)
	}
	if got := OneLine(" a\n\tb  c \n"); got != "a b c" {
		t.Errorf("OneLine: %q", got)
	}
}
