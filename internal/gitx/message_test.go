package gitx

import (
	"errors"
	"fmt"
	"testing"
)

func TestMessage(t *testing.T) {
	ge := &Error{Args: []string{"merge", "--no-edit", "zerg/f"}, Stderr: "  fatal: refusing\n\tto merge  \n", ExitCode: 128}
	if got, want := Message(fmt.Errorf("wrapped: %w", ge)), "fatal: refusing to merge"; got != want {
		t.Errorf("Message(git error) = %q, want %q", got, want)
	}
	silent := &Error{Args: []string{"merge"}, Err: errors.New("exit status 1")}
	if got, want := Message(silent), silent.Error(); got != want {
		t.Errorf("Message(git error without stderr) = %q, want its own text %q", got, want)
	}
	if got := Message(errors.New("plain")); got != "plain" {
		t.Errorf("Message(plain) = %q", got)
	}
}
