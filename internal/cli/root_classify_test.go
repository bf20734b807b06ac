package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/run"
)

// A typed error that quotes what the user typed keeps its text even when
// that holds one of cobra's phrases; cobra's own errors get the help hint.
func TestClassifyCobraErrorLeavesTypedErrors(t *testing.T) {
	typed := &run.Error{Kind: run.BadInput, Err: errors.New(`no task "x accepts y" in feature auth`)}
	if got := classifyCobraError(nil, typed); got != error(typed) {
		t.Errorf("typed error became %q", got)
	}
	// Control: cobra's own argument error gets the hint.
	got := classifyCobraError(nil, errors.New("accepts 1 arg(s), received 2"))
	if !strings.Contains(got.Error(), "see 'zerg --help'") {
		t.Errorf("cobra's error %q lacks the help hint", got)
	}
}
