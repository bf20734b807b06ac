package term

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "ok\tdone\n", "ok\tdone\n"},
		{"unicode text kept", "héllo 世界 ✓ — مرحبا 🙂", "héllo 世界 ✓ — مرحبا 🙂"},
		{"clear screen", "a\x1b[2J\x1b[Hb", "ab"},
		{"reset terminal", "a\x1bcb", "ab"},
		{"colour", "\x1b[1;31mFAIL\x1b[0m", "FAIL"},
		{"cursor moves", "x\x1b[1A\x1b[2K\x1b[10;20Hy\x1b[?25l", "xy"},
		{"OSC 52 clipboard, BEL", "pre\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07post", "prepost"},
		{"OSC 52 clipboard, ST", "pre\x1b]52;c;Y3VybA==\x1b\\post", "prepost"},
		{"window title", "\x1b]0;zerg: DELIVERED\x07done", "done"},
		{"hyperlink", "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"},
		{"unterminated OSC ends at newline", "a\x1b]0;title\nnext line", "a\nnext line"},
		{"DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"APC", "a\x1b_payload\x07b", "ab"},
		{"charset select", "a\x1b(Bb", "ab"},
		{"save cursor", "a\x1b7b\x1b8", "ab"},
		{"lone ESC at end", "a\x1b", "a"},
		{"ESC ESC", "a\x1b\x1b[31mb", "ab"},
		{"fake DELIVERED over a line with CR", "gate test: FAILED\rzerg: DELIVERED   ", "gate test: FAILEDzerg: DELIVERED   "},
		{"fake line erase", "FAILED\x1b[2K\x1b[1Gzerg: DELIVERED", "FAILEDzerg: DELIVERED"},
		{"backspaces", "FAILED\b\b\b\b\b\bPASSED", "FAILEDPASSED"},
		{"bell, NUL, DEL, VT, FF", "a\a\x00\x7f\v\fb", "ab"},
		{"CRLF", "one\r\ntwo\r\n", "one\ntwo\n"},
		{"C1 CSI", "a\u009b2Jb", "ab"},
		{"C1 OSC", "a\u009d0;title\u009cb", "ab"},
		{"C1 NEL", "a\u0085b", "ab"},
		{"bidi override", "access \u202eexe.txt\u202c ok", "access exe.txt ok"},
		{"bidi isolates", "\u2066a\u2067b\u2068c\u2069", "abc"},
		{"bidi embeddings", "\u202ax\u202by\u202c", "xy"},
		{"invalid UTF-8", "a\xffb\x9b2Jc", "a\uFFFDb\uFFFD2Jc"},
		{"malformed CSI keeps the next char", "a\x1b[12\nb", "a\nb"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Clean(c.in); got != c.want {
				t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// unsafe reports what in s a terminal could act on, "" when nothing.
func unsafe(s string) string {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return "invalid UTF-8"
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, 0x80 <= r && r <= 0x9f:
			return "control character"
		case isBidi(r):
			return "bidi control"
		}
	}
	return ""
}

// FuzzClean: whatever the input, the output holds no escape, control or bidi
// character and no invalid UTF-8, and cleaning it again changes nothing.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[31mred", "\x1b]52;c;x\a", "\u009b1A", "\xe2\x80\xae", "a\rb", "\x1b\x1b]", "\xc2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Clean(s)
		if why := unsafe(out); why != "" {
			t.Fatalf("Clean(%q) = %q: %s", s, out, why)
		}
		if again := Clean(out); again != out {
			t.Fatalf("Clean is not idempotent on %q: %q then %q", s, out, again)
		}
		if unsafe(s) == "" && out != s {
			t.Fatalf("Clean changed the clean text %q to %q", s, out)
		}
	})
}

// TestCleanPlainNoAlloc: plain text is returned as it is.
func TestCleanPlainNoAlloc(t *testing.T) {
	s := strings.Repeat("gate test passed on abc123 ✓\n", 10)
	if n := testing.AllocsPerRun(100, func() { _ = Clean(s) }); n != 0 {
		t.Errorf("Clean of plain text allocated %v times", n)
	}
}
