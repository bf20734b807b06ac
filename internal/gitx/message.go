package gitx

import (
	"errors"
	"strings"

	"github.com/zergrush/zerg/internal/textx"
)

// Message is what git said about err, on one line and without the command
// line zerg ran (a person reads it; the argv is zerg's business), or err's
// own text when git said nothing.
func Message(err error) string {
	var ge *Error
	if errors.As(err, &ge) {
		if m := strings.TrimSpace(ge.Stderr); m != "" {
			return textx.OneLine(m)
		}
	}
	return err.Error()
}
