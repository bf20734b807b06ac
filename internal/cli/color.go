package cli

import (
	"io"
	"os"

	xterm "golang.org/x/term"

	"github.com/zergrush/zerg/internal/term"
)

// colorEnabled reports whether w is a terminal and the user has not asked for
// plain output (https://no-color.org: any non-empty NO_COLOR disables colour).
func colorEnabled(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	_, ok := terminalFile(w)
	return ok
}

// terminalFile is the terminal under w (through the wrappers that
// survivePipes and newApp add), if w writes to one.
func terminalFile(w io.Writer) (*os.File, bool) {
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	return f, ok && xterm.IsTerminal(int(f.Fd()))
}

// The styles of paint: internal/term's palette, the only sequences the
// app's writers let through.
const (
	ansiBold  = term.Bold
	ansiDim   = term.Dim
	ansiRed   = term.Red
	ansiGreen = term.Green
	ansiYel   = term.Yellow
	ansiReset = term.Reset
)

// paint wraps s in an ANSI style when colour is on.
func (a *app) paint(style, s string) string { return term.Paint(a.color, style, s) }

// uncleaned is the writer beneath the app's term.Writer, for the two
// things zerg writes that are not text: the screen control of status
// --watch's redraw, and a PNG on a pipe. Everything else, zerg's own
// lines included, goes through the cleaning.
func uncleaned(w io.Writer) io.Writer {
	for {
		if tw, ok := w.(*term.Writer); ok {
			return tw.Unwrap()
		}
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}
