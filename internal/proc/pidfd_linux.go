package proc

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// portable is EnvPortable=1, read once at start-up.
var portable = os.Getenv(EnvPortable) == "1"

// errNoPidfd says a pidfd cannot be used: EnvPortable is set, the kernel
// predates them (5.3) or a seccomp filter refuses the call.
var errNoPidfd = errors.New("no pidfd")

// openPidfd opens a pidfd for pid. The error is ErrGone when pid names no
// process, errNoPidfd when pidfds cannot be used here.
func openPidfd(pid int) (int, error) {
	if portable {
		return -1, errNoPidfd
	}
	fd, err := unix.PidfdOpen(pid, 0)
	switch {
	case err == nil:
		pidfdsOpened.Add(1)
		return fd, nil
	case errors.Is(err, unix.ESRCH):
		return -1, ErrGone
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM), errors.Is(err, unix.EINVAL):
		return -1, errNoPidfd
	}
	return -1, fmt.Errorf("pidfd of %d: %w", pid, err)
}

func pidfdSignal(fd int, sig syscall.Signal) error {
	return gone(unix.PidfdSendSignal(fd, sig, nil, 0))
}

func closePidfd(fd int) { _ = unix.Close(fd) }

// dieWithParent asks the kernel to SIGKILL the command when the thread
// that started it exits.
func dieWithParent(a *syscall.SysProcAttr) {
	if !portable {
		a.Pdeathsig = syscall.SIGKILL
	}
}

// startInCgroup starts the command in the group whose directory fd is
// open (cgroup v2's CLONE_INTO_CGROUP).
func startInCgroup(a *syscall.SysProcAttr, fd int) error {
	a.UseCgroupFD, a.CgroupFD = true, fd
	return nil
}

var (
	subreaperOnce sync.Once
	subreaperErr  error
)

// EnableSubreaper makes this process a child subreaper
// (PR_SET_CHILD_SUBREAPER), so processes that a command detaches with setsid
// re-parent to us instead of PID 1 and can still be found, killed and
// reaped. Call it once at start-up, before starting commands; later calls
// return the first result. With EnvPortable it refuses
// (errors.ErrUnsupported), as on macOS.
func EnableSubreaper() error {
	subreaperOnce.Do(func() {
		if portable {
			subreaperErr = fmt.Errorf("child subreaper: %w (%s=1)", errors.ErrUnsupported, EnvPortable)
			return
		}
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			subreaperErr = fmt.Errorf("set child subreaper: %w", err)
		}
	})
	return subreaperErr
}

// IsSubreaper reports whether this process is a child subreaper.
func IsSubreaper() bool {
	var v int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0, 0, 0); err != nil {
		return false
	}
	return v != 0
}

// Available says which mechanisms proc uses here: pidfds when the kernel
// has them (probed on this process), Pdeathsig and the subreaper unless
// EnvPortable is set.
func Available() Mechanisms {
	if portable {
		return Mechanisms{}
	}
	m := Mechanisms{ParentDeathSignal: true, Subreaper: true}
	if fd, err := unix.PidfdOpen(os.Getpid(), 0); err == nil {
		_ = unix.Close(fd)
		m.Pidfd = true
	}
	return m
}
