//go:build !linux

package proc

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
)

// Outside Linux there are no pidfds, no parent-death signal and no child
// subreaper: signals go by kill(2) after a start-time check, and orphans
// re-parent to PID 1 (launchd), where the marker still finds them.

var errNoPidfd = errors.New("no pidfd on " + runtime.GOOS)

// portable is always so here; the tests set it where it is a choice.
var portable = true

func openPidfd(int) (int, error)            { return -1, errNoPidfd }
func pidfdSignal(int, syscall.Signal) error { return errNoPidfd }
func closePidfd(int)                        {}

// dieWithParent: no such request exists here; a worker outlives a zerg
// killed with SIGKILL until zerg stop or --resume reaps it.
func dieWithParent(*syscall.SysProcAttr) {}

// startInCgroup refuses: control groups are Linux's.
func startInCgroup(*syscall.SysProcAttr, int) error {
	return fmt.Errorf("start in a cgroup on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// EnableSubreaper refuses: no child subreaper exists on this OS.
func EnableSubreaper() error {
	return fmt.Errorf("child subreaper on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// IsSubreaper reports false: no child subreaper exists on this OS.
func IsSubreaper() bool { return false }

// Available says which mechanisms proc uses here: none of Linux's.
func Available() Mechanisms { return Mechanisms{} }
