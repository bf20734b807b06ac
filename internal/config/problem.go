package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Problem codes, stable for --json consumers and tests.
const (
	CodeTooLarge     = "too-large"        // the file is over MaxFileSize
	CodeInvalidYAML  = "invalid-yaml"     // the file does not parse
	CodeUnknown      = "unknown-option"   // a key that is not an option
	CodeDuplicate    = "duplicate-option" // a key set twice
	CodeType         = "wrong-type"       // a value of the wrong kind (a list for a number, "abc" for a duration)
	CodeBadValue     = "bad-value"        // a value of the right kind that fails a check
	CodeNotAvailable = "not-available"    // an option or value this version does not build
)

// Problem is one thing wrong with a config: where it is and what to do.
type Problem struct {
	File    string // as given to Load or Parse; empty for an in-memory Config
	Line    int    // 1-based; 0 when unknown (a default value, or no file)
	Field   string // option such as "breaker.cooldown" or "gates[1].name"; empty for the whole file
	Code    string // one of the Code constants
	Message string // what is wrong and how to fix it, one line
}

// String formats the problem as one line: "file:line: field: message".
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	}
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Error is returned by Load, Parse and Validate: every problem found, not just
// the first, so one edit can fix them all.
type Error struct {
	Problems []Problem
}

// Error joins the problems, one per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Refused is the one line that stops a command which read the invalid
// config file shown as file, once its problems were shown one per line:
// how many there are and how to see them again, then what else the user
// may do (then: "" for nothing more).
func (e *Error) Refused(file, then string) error {
	n := strconv.Itoa(len(e.Problems)) + " problems"
	if len(e.Problems) == 1 {
		n = "1 problem"
	}
	return fmt.Errorf("%s has %s; fix it (zerg config check shows them again)%s", file, n, then)
}

// sortProblems orders problems by line so output follows the file; problems
// without a line (defaults, cross-field checks) keep their order at the end.
func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		li, lj := ps[i].Line, ps[j].Line
		if li == 0 || lj == 0 {
			return li != 0 && lj == 0
		}
		return li < lj
	})
}

// quote shows a user value in a message, shortened so a pasted blob cannot
// flood the terminal.
func quote(s string) string {
	const max = 60
	if len(s) > max {
		s = s[:max] + "…"
	}
	return fmt.Sprintf("%q", s)
}
