package term

import (
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// zerg's palette: the only terminal sequences a Writer with styles lets
// through. They change the colour and weight of what follows and nothing
// else (no cursor, no erase, no concealed text, no title, no clipboard), so
// text that carries one of them can at worst colour a line.
const (
	Bold   = "\x1b[1m"
	Dim    = "\x1b[2m"
	Red    = "\x1b[31m"
	Green  = "\x1b[32m"
	Yellow = "\x1b[33m"
	Reset  = "\x1b[0m"
)

var palette = []string{Bold, Dim, Red, Green, Yellow, Reset}

// styleAt is the length of the palette sequence s starts with, 0 if none.
func styleAt(s string) int {
	for _, p := range palette {
		if strings.HasPrefix(s, p) {
			return len(p)
		}
	}
	return 0
}

// Writer is the choke point of zerg's output: every byte written through
// it is cleaned as Clean cleans (with styles, the palette's sequences are
// kept), so no text that a worker, a repository, a reviewer or a gate
// wrote can act on the terminal, whichever command prints it and however
// it was built into the line. The commands of internal/cli print only
// through the Writers on their stdout and stderr.
//
// Each Write is cleaned on its own: a sequence split across two writes
// loses its control bytes in both halves and its printable rest shows as
// text, which is safe. Only a UTF-8 character cut at the end of a write
// is held back for the next one, so streamed text keeps its letters.
type Writer struct {
	w      io.Writer
	styles bool

	mu      sync.Mutex
	partial []byte // the start of a UTF-8 character the last write cut
}

// NewWriter cleans what it writes to w; styles keeps zerg's palette (on
// only when w is a terminal and colour is wanted).
func NewWriter(w io.Writer, styles bool) *Writer { return &Writer{w: w, styles: styles} }

// Write cleans p and writes it. It reports len(p) written when the
// cleaned text was, since the caller's bytes are all accounted for.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := string(p)
	if len(w.partial) > 0 {
		s = string(w.partial) + s
		w.partial = w.partial[:0]
	}
	if cut := incompleteTail(s); cut > 0 {
		w.partial = append(w.partial, s[len(s)-cut:]...)
		s = s[:len(s)-cut]
	}
	if s == "" {
		return len(p), nil
	}
	if _, err := io.WriteString(w.w, clean(s, w.styles)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap is the writer underneath: the terminal check of colour looks
// through it, and the live view draws on the terminal itself (cleaning
// what it shows with Clean).
func (w *Writer) Unwrap() io.Writer { return w.w }

// incompleteTail is the length of the UTF-8 character s ends in the middle
// of (a lead byte and fewer continuation bytes than it announces), 0 when
// s ends on a whole character or on bytes that can never become one.
func incompleteTail(s string) int {
	for n := 1; n <= utf8.UTFMax-1 && n <= len(s); n++ {
		c := s[len(s)-n]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRuneInString(s[len(s)-n:]) {
				return 0
			}
			return n
		}
	}
	return 0
}
