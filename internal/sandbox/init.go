package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// ExitOutOfMemory is the init's exit code when the command failed after
// the kernel killed a process of its memory cgroup for passing its limit
// (InitConfig.ReportOOM).
const ExitOutOfMemory = 249

// ExecFailCode is the exit code for a command that could not start: 127 or
// 126 like a shell's "not found" and "cannot execute", 125 for a failure of
// the sandbox itself.
func ExecFailCode(err error) int {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 127
	case errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOEXEC) || errors.Is(err, syscall.EISDIR):
		return 126
	}
	return 125
}

// startFailurePrefix begins the one line the init prints when it could not
// start the command, by either way (exit code ExecFailCode's): the driver
// tells it from the command's own failures by it (StartFailure).
const startFailurePrefix = "zerg " + InitCommand + ": cannot start the command: "

// StartFailureLine is the init's line for a command it could not start.
func StartFailureLine(err error) string { return startFailurePrefix + err.Error() }

// StartFailure returns the init's start-failure line in a sandbox's stderr
// when its exit code says the command did not start (125–127), or "".
func StartFailure(exitCode int, stderr string) string {
	if exitCode < 125 || exitCode > 127 {
		return ""
	}
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, startFailurePrefix) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// initFail reports a failure of the init itself; 125 is not a code the
// command's own failures use by convention (126 cannot execute, 127 not found).
func initFail(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "zerg %s: %v\n", InitCommand, fmt.Errorf(format, a...))
	return 125
}
