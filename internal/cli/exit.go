package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/zergrush/zerg/internal/run"
)

// Exit codes: the one table every command maps its outcome to.
const (
	ExitOK          = 0 // success
	ExitFailed      = 1 // a run or check did not deliver (failed task, invalid graph found by a check)
	ExitUsage       = 2 // bad flags, bad arguments or bad input; nothing was written
	ExitInterrupted = 3 // stopped by a signal before finishing
	ExitLocked      = 4 // another zerg holds the run (its coordinator is alive)
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

// explain is the one place that turns an error into its exit code and the
// line printed for it (empty: print nothing). Domain errors carry data (the
// feature, task, path or branch); the hint naming the command that helps is
// written here, from that data.
func explain(err error) (int, string) {
	var ee *ExitError
	var re *run.Error
	switch {
	case err == nil:
		return ExitOK, ""
	case errors.As(err, &ee):
		if ee.Silent {
			return ee.Code, ""
		}
		if errors.As(ee.Err, &re) {
			_, msg := explainRun(re)
			return ee.Code, msg
		}
		return ee.Code, err.Error()
	case errors.As(err, &re):
		return explainRun(re)
	case errors.Is(err, context.Canceled):
		return ExitInterrupted, err.Error()
	default:
		return ExitFailed, err.Error()
	}
}

// explainRun maps a run error's kind to its exit code and hint.
func explainRun(e *run.Error) (int, string) {
	f := e.Feature
	msg := e.Error()
	with := func(code int, hint string, a ...any) (int, string) {
		if hint == "" {
			return code, msg
		}
		return code, msg + "; " + fmt.Sprintf(hint, a...)
	}
	switch e.Kind {
	case run.Exists:
		return with(ExitUsage, "continue it with zerg rush %s --resume, or remove it with zerg cleanup %s --all", f, f)
	case run.NoRun:
		return with(ExitUsage, "start one with zerg rush %s", f)
	case run.Delivered:
		return with(ExitUsage, "merge it with zerg merge %s --into BRANCH, or add tasks to its graph and resume", f)
	case run.Locked:
		return with(ExitLocked, "watch it with zerg status %s, stop it with zerg stop %s", f, f)
	case run.GraphEdit:
		return with(ExitUsage, "undo that edit to continue the run, or start afresh with zerg cleanup %s --all", f)
	case run.IntegrationMoved:
		return with(ExitUsage, "move %s back onto a commit that contains the recorded head (git branch -f), or start afresh with zerg cleanup %s --all", e.Branch, f)
	case run.StaleWorkspace:
		return with(ExitUsage, "save the work in %s, then remove it (git worktree remove %s)", e.Path, e.Path)
	case run.BadInput, run.ModeMismatch, run.Setup:
		return with(ExitUsage, "")
	case run.Interrupted:
		return with(ExitInterrupted, "continue with zerg rush %s --resume", f)
	case run.Account:
		if e.ResumeAfter != "" {
			return with(ExitFailed, "the limit resets %s; committed work is kept: continue then with zerg rush %s --resume (--wait-for-reset waits for a usage limit's reset by itself, up to retry.wait_for_reset_max)", e.ResumeAfter, f)
		}
		return with(ExitFailed, "add credit or fix the key or limit in the Anthropic Console; committed work is kept: continue with zerg rush %s --resume", f)
	case run.Budget:
		return with(ExitFailed, "committed work is kept; raise budget.run_usd in .zerg/config.yaml, then continue with zerg rush %s --resume (zerg cost %s shows what was spent)", f, f)
	case run.Environment:
		return with(ExitFailed, "no task's retries were spent on it; committed work is kept: fix it, then continue with zerg rush %s --resume", f)
	case run.DiskFull:
		return with(ExitFailed, "committed work is kept; free space there (zerg cleanup %s removes what zerg no longer needs), then continue with zerg rush %s --resume", f, f)
	case run.Fatal:
		return with(ExitFailed, "fix the cause, then continue with zerg rush %s --resume", f)
	case run.NotDelivered:
		return with(ExitFailed, "zerg logs %s TASK says why; zerg retry %s TASK, then zerg rush %s --resume", f, f, f)
	case run.Internal:
		return with(ExitFailed, "this is a bug in zerg; the run's log is in .zerg/runs/%s", f)
	}
	return with(ExitFailed, "")
}

// exitCode maps any error to the exit code table.
func exitCode(err error) int {
	code, _ := explain(err)
	return code
}
