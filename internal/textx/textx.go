// Package textx shapes text zerg puts in its reports and records: one
// line, and a bounded length that never cuts a character in two.
package textx

import (
	"strings"
	"unicode/utf8"
)

// OneLine is s with every run of white space (newlines included) made one
// space.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Clip is s cut to at most n bytes, at a character boundary, with "…"
// after what was cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// ShellQuote quotes s as one word for a POSIX shell: single quotes, each
// embedded quote closed, escaped and reopened.
func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Or is s, or placeholder when s is empty: a column that is never blank.
func Or(s, placeholder string) string {
	if s == "" {
		return placeholder
	}
	return s
}
