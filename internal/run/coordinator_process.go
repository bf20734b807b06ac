package run

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/proc"
)

// CoordinatorProcess returns the identity of pid when that process is alive
// and is a zerg rush (the pid a run's coordinator file names), else the
// zero ID: a recycled pid must never make zerg stop signal an unrelated
// process. The identity is taken before the command line is read, so a
// PID recycled in between changes its start time and the signal goes
// nowhere (proc.Signal).
func CoordinatorProcess(pid int) proc.ID {
	id, err := proc.Identify(pid)
	if err != nil || !id.Alive() || !IsRushCommand(proc.Cmdline(pid)) {
		return proc.ID{}
	}
	return id
}

// IsRushCommand reports whether a command line is a zerg rush: a program
// whose name holds "zerg" (zerg, zerg-dev, a test's zerg binary), with rush
// among its arguments.
func IsRushCommand(args []string) bool {
	return len(args) >= 2 && strings.Contains(filepath.Base(args[0]), "zerg") && slices.Contains(args, "rush")
}
