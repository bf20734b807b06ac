package cli

import (
	"io"
	"os"

	"golang.org/x/term"
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
// survivePipes adds), if w writes to one.
func terminalFile(w io.Writer) (*os.File, bool) {
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	return f, ok && term.IsTerminal(int(f.Fd()))
}

const (
	ansiBold  = "\x1b[1m"
	ansiDim   = "\x1b[2m"
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiYel   = "\x1b[33m"
	ansiReset = "\x1b[0m"
)

// paint wraps s in an ANSI style when colour is on.
func (a *app) paint(style, s string) string {
	if !a.color || s == "" {
		return s
	}
	return style + s + ansiReset
}
