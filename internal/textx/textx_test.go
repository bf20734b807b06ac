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

func TestClosest(t *testing.T) {
	if d := EditDistance("kitten", "sitting"); d != 3 {
		t.Errorf("EditDistance = %d, want 3", d)
	}
	names := []string{"L1-names", "L1-greet", "L2-shout"}
	for s, want := range map[string]string{"L1-name": "L1-names", "L1-gret": "L1-greet", "L9-other": "", "L1-names": "L1-names"} {
		if got := Closest(s, names, 3); got != want {
			t.Errorf("Closest(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"/a b/it's": `'/a b/it'\''s'`, "$(x)": `'$(x)'`, "": `''`} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestOr(t *testing.T) {
	if Or("", "-") != "-" || Or("sonnet", "-") != "sonnet" {
		t.Error("Or")
	}
}
