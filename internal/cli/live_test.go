package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestLiveLines: a rush's progress lines go to stderr before the view
// starts and after it ends; while it shows, the last few are kept for it
// (a line split across writes whole) and nothing reaches stderr.
func TestLiveLines(t *testing.T) {
	var stderr bytes.Buffer
	l := newLiveLines(&stderr)
	fmt.Fprintln(l, "before")
	l.setCapture(true)
	for i := range 10 {
		fmt.Fprintf(l, "line %d\n", i)
	}
	fmt.Fprint(l, "half ")
	fmt.Fprint(l, "a line\nand a start")
	if stderr.String() != "before\n" {
		t.Errorf("stderr while the view shows: %q", stderr.String())
	}
	got := strings.Join(l.recent(), "|")
	if want := "line 5|line 6|line 7|line 8|line 9|half a line"; got != want {
		t.Errorf("recent = %q, want %q", got, want)
	}
	if len(l.recent()) != liveRecent {
		t.Errorf("%d lines kept, want %d", len(l.recent()), liveRecent)
	}
	l.setCapture(false)
	fmt.Fprintln(l, " finished")
	if want := "before\nand a start finished\n"; stderr.String() != want {
		t.Errorf("stderr after the view = %q, want %q", stderr.String(), want)
	}
}

// TestNoLiveViewWithoutATerminal: the tests' buffers, --plain and
// ZERG_NO_TUI all keep the plain lines.
func TestNoLiveViewWithoutATerminal(t *testing.T) {
	a := newApp(&bytes.Buffer{}, &bytes.Buffer{})
	if a.liveTerminal(false) != nil {
		t.Error("a live view on a buffer")
	}
}
