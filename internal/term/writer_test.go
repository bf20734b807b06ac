package term

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestWriterCleansEveryWrite: whatever reaches the Writer, however it was
// built into the line, comes out as Clean makes it.
func TestWriterCleansEveryWrite(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, false)
	title := "x\x1b]52;c;Y3VybCBldmlsLnNo\x07\x1b]2;pwned\x07\r0 blocking: ready to merge"
	fmt.Fprintf(w, "  blocking [claude] a.go:3: %s\n", title)
	if got, want := b.String(), "  blocking [claude] a.go:3: x0 blocking: ready to merge\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestWriterStyles: with styles, zerg's palette passes and nothing else;
// without, not even the palette.
func TestWriterStyles(t *testing.T) {
	in := Bold + "demo" + Reset + ": " + Red + "FAILED" + Reset + "\x1b[8mhidden\x1b[2J\x1b[1;1H"
	var on, off bytes.Buffer
	NewWriter(&on, true).Write([]byte(in))
	NewWriter(&off, false).Write([]byte(in))
	if want := Bold + "demo" + Reset + ": " + Red + "FAILED" + Reset + "hidden"; on.String() != want {
		t.Errorf("styles: %q, want %q", on.String(), want)
	}
	if off.String() != "demo: FAILEDhidden" {
		t.Errorf("no styles: %q", off.String())
	}
}

// TestWriterSplitWrites: a sequence cut between two writes reaches the
// terminal as no control at all, and a UTF-8 character cut between two
// writes is whole.
func TestWriterSplitWrites(t *testing.T) {
	in := "héllo \x1b]52;c;QUFB\x07 世界 \x1b[2J done ✓\n"
	for cut := 0; cut <= len(in); cut++ {
		var b bytes.Buffer
		w := NewWriter(&b, false)
		w.Write([]byte(in[:cut]))
		w.Write([]byte(in[cut:]))
		got := b.String()
		if why := unsafe(got); why != "" {
			t.Errorf("cut at %d: %s in %q", cut, why, got)
		}
		if !strings.Contains(got, "héllo") || !strings.Contains(got, "世界") || !strings.HasSuffix(got, "done ✓\n") {
			t.Errorf("cut at %d: text lost: %q", cut, got)
		}
	}
}

func TestFirstControl(t *testing.T) {
	for _, c := range []struct {
		in string
		r  rune
		at int
	}{
		{"Add the login page — ✓", 0, -1},
		{"a\x1b]2;x\x07", 0x1b, 1},
		{"two\nlines", '\n', 3},
		{"tab\there", '\t', 3},
		{"é\u202eevil", 0x202e, 2},
		{"c1 \u009b2J", 0x9b, 3},
		{"bad \xff", 0xfffd, 4},
	} {
		if r, at := FirstControl(c.in); r != c.r || at != c.at {
			t.Errorf("FirstControl(%q) = %U at %d, want %U at %d", c.in, r, at, c.r, c.at)
		}
	}
}
