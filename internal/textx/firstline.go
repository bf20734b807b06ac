package textx

import "strings"

// FirstLine is the first line of s with surrounding white space trimmed:
// the message of an error whose later lines are detail.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
