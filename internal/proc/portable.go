package proc

import "sync/atomic"

// EnvPortable, set to 1, makes proc on Linux use only what it uses on
// macOS: no pidfds (a start time checked before kill(2) instead), no
// parent-death signal, no child subreaper. The portable paths are then
// exercised where the tests run (make test runs the crash and stop suites
// once more with it); macOS always runs them.
const EnvPortable = "ZERG_PORTABLE_PROC"

// Mechanisms are the kernel facilities proc uses on this machine.
type Mechanisms struct {
	// Pidfd: signals go through a pidfd opened before the start time is
	// checked, so a recycled PID is never signalled. Without it the start
	// time is checked just before kill(2).
	Pidfd bool
	// ParentDeathSignal: a worker started with DieWithParent is SIGKILLed
	// by the kernel when zerg dies (Pdeathsig). Without it the worker
	// outlives a zerg killed with SIGKILL until zerg stop or --resume
	// reaps it by its recorded identity and marker.
	ParentDeathSignal bool
	// Subreaper: processes a command detaches re-parent to zerg (a child
	// subreaper) rather than to PID 1, so more of them are attributed.
	Subreaper bool
}

// String names the mechanisms for zerg doctor.
func (m Mechanisms) String() string {
	if !m.Pidfd && !m.ParentDeathSignal && !m.Subreaper {
		return "portable: process groups and kill(2) after a start-time check; no pidfd, parent-death signal or subreaper"
	}
	s := ""
	add := func(on bool, name string) {
		if on {
			if s != "" {
				s += ", "
			}
			s += name
		}
	}
	add(m.Pidfd, "pidfd signals")
	add(m.ParentDeathSignal, "parent-death signal")
	add(m.Subreaper, "child subreaper")
	return s
}

// pidfdsOpened counts the pidfds proc opened: the tests' evidence of
// which path a signal took.
var pidfdsOpened atomic.Int64
