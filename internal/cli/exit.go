package cli

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes: the one table every command maps its outcome to.
const (
	ExitOK          = 0 // success
	ExitFailed      = 1 // a run or check did not deliver (failed task, invalid graph found by a check)
	ExitUsage       = 2 // bad flags, bad arguments or bad input; nothing was written
	ExitInterrupted = 3 // stopped by a signal before finishing
)

// ExitError carries an exit code with the message printed for the user.
// Msg is printed as one line after "zerg: "; Silent errors print nothing
// because the command already reported (for example a validation report).
type ExitError struct {
	Code   int
	Err    error
	Silent bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usageErrorf reports bad input or usage: exit 2, nothing written.
func usageErrorf(format string, a ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, a...)}
}

// badInput wraps an error about the user's input (a file, a field) as exit 2.
func badInput(err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: ExitUsage, Err: err}
}

// failedf reports that a run or check failed: exit 1.
func failedf(format string, a ...any) error {
	return &ExitError{Code: ExitFailed, Err: fmt.Errorf(format, a...)}
}

// silent returns an error that sets the exit code without printing anything more.
func silent(code int) error { return &ExitError{Code: code, Silent: true} }

// exitCode maps any error to the exit code table.
func exitCode(err error) int {
	var ee *ExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	default:
		return ExitFailed
	}
}
