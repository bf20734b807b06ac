// Package term makes text from workers and gates safe to print on a
// terminal.
package term

import (
	"strings"
	"unicode/utf8"
)

// Clean returns s without anything a terminal would act on instead of
// printing: ANSI/VT escape sequences (CSI like "\x1b[2J", OSC like the
// clipboard write "\x1b]52;c;…\a" or a window title, terminated by BEL or
// ST, DCS/SOS/PM/APC strings, and two- or three-byte ESC sequences), C0
// control characters except newline and tab (so "\r" cannot send the cursor
// back to overwrite a line), DEL, C1 controls (U+0080–U+009F, including the
// 8-bit CSI and OSC, whose parameters go too), and the bidi embedding,
// override and isolate characters (U+202A–U+202E, U+2066–U+2069) that make
// text display in another order than it reads. Invalid UTF-8 bytes become
// U+FFFD. Everything else, printable UTF-8 text of any script, is kept.
//
// zerg's commands print through a Writer, which applies it to every byte;
// use Clean itself where text from a worker, a repository, a reviewer or a
// gate goes elsewhere for a person to read (the live view, review.md).
func Clean(s string) string { return clean(s, false) }

// clean is Clean; with styles it keeps the sequences of Palette.
func clean(s string, styles bool) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n' || c == '\t':
			b.WriteByte(c)
			i++
		case c == 0x1b:
			if n := styleAt(s[i:]); styles && n > 0 {
				b.WriteString(s[i : i+n])
				i += n
				continue
			}
			i = skipEscape(s, i+1)
		case c < 0x20 || c == 0x7f:
			i++
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				b.WriteRune(utf8.RuneError)
				i++
			case 0x80 <= r && r <= 0x9f:
				i = skipC1(s, r, i+size)
			case isBidi(r):
				i += size
			default:
				b.WriteString(s[i : i+size])
				i += size
			}
		}
	}
	return b.String()
}

// isClean reports whether s has nothing Clean would change: the common case
// of plain text costs one pass and no allocation.
func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			return isCleanUTF8(s[i:])
		}
	}
	return true
}

func isCleanUTF8(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || (0x80 <= r && r <= 0x9f) || isBidi(r) {
			return false
		}
		i += size
	}
	return true
}

func isBidi(r rune) bool {
	return (0x202a <= r && r <= 0x202e) || (0x2066 <= r && r <= 0x2069)
}

// skipEscape returns the index after the escape sequence whose ESC was just
// before i.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[': // CSI
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC
		return skipString(s, i+1)
	}
	// nF sequences: intermediates 0x20–0x2F then one final byte
	// 0x30–0x7E (ESC ( B); Fp/Fe/Fs: one byte (ESC 7, ESC c, ESC =).
	j := i
	for j < len(s) && 0x20 <= s[j] && s[j] <= 0x2f {
		j++
	}
	if j < len(s) && 0x30 <= s[j] && s[j] <= 0x7e {
		return j + 1
	}
	// Not a sequence: drop only the ESC (and the intermediates, which a
	// terminal would have swallowed); what follows is text again.
	return j
}

// skipC1 returns the index after the C1 control r (a rune of UTF-8 text)
// and the parameters of the sequence it introduces, i being just after r.
func skipC1(s string, r rune, i int) int {
	switch r {
	case 0x9b: // CSI
		return skipCSI(s, i)
	case 0x9d, 0x90, 0x98, 0x9e, 0x9f: // OSC, DCS, SOS, PM, APC
		return skipString(s, i)
	}
	return i
}

// skipCSI skips a CSI sequence's parameter (0x30–0x3F) and intermediate
// (0x20–0x2F) bytes and its final byte (0x40–0x7E). A malformed sequence
// ends at the first byte that does not fit; that byte is kept.
func skipCSI(s string, i int) int {
	for i < len(s) && 0x20 <= s[i] && s[i] <= 0x3f {
		i++
	}
	if i < len(s) && 0x40 <= s[i] && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipString skips the body of an OSC, DCS, SOS, PM or APC string up to and
// including its terminator: BEL, ST (ESC \) or the C1 ST (U+009C). A string
// that is never terminated ends at the next newline (kept) or at the end of
// s: a terminal would have swallowed it, and the line after is still worth
// reading.
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i // another sequence starts: the string was cut short
		case s[i] == '\n':
			return i
		case strings.HasPrefix(s[i:], "\u009c"):
			return i + len("\u009c")
		}
		i++
	}
	return i
}

// FirstControl is the first character of s that is not plain one-line
// text, and its byte offset: a C0 control (newline and tab included), DEL,
// a C1 control, a bidi control or an invalid UTF-8 byte (as U+FFFD);
// offset -1 when there is none. Fields that are printed as one line, such
// as a task's title, refuse these.
func FirstControl(s string) (rune, int) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r < 0x20 || r == 0x7f || (0x80 <= r && r <= 0x9f) || isBidi(r) || (r == utf8.RuneError && size == 1) {
			return r, i
		}
		i += size
	}
	return 0, -1
}
