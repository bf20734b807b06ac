package proc

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrGone is returned when a process is no longer there to signal: it
// exited, or its PID now names another process.
var ErrGone = errors.New("the process is gone")

// Signal sends sig to the process id names, and only to it: it opens a
// pidfd for id.PID, then checks that the PID still has id's start time.
// The pidfd refers to the process that had the PID when it was opened, so
// if the start time still matches afterwards, that process is id's, and a
// signal sent through the pidfd cannot reach a process that got the PID
// later. Without pidfds (kernels before 5.3) the start time is checked just
// before kill(2), which leaves the few microseconds between the two.
func Signal(id ID, sig syscall.Signal) error {
	if id.PID <= 1 {
		// 0 and negative PIDs are groups, 1 is init: never one process of ours.
		return fmt.Errorf("refuse to signal pid %d", id.PID)
	}
	fd, err := unix.PidfdOpen(id.PID, 0)
	if err == nil {
		defer unix.Close(fd)
		if !sameProcess(id) {
			return ErrGone
		}
		return gone(unix.PidfdSendSignal(fd, sig, nil, 0))
	}
	if errors.Is(err, unix.ESRCH) {
		return ErrGone
	}
	if !noPidfd(err) {
		return fmt.Errorf("signal %d: %w", id.PID, err)
	}
	if !sameProcess(id) {
		return ErrGone
	}
	return gone(syscall.Kill(id.PID, sig))
}

// sameProcess reports whether id.PID still names id's process (alive or a
// zombie: a zombie's PID is not reused until it is reaped).
func sameProcess(id ID) bool {
	st, err := ReadStat(id.PID)
	return err == nil && st.StartTime == id.StartTime
}

func gone(err error) error {
	if errors.Is(err, unix.ESRCH) {
		return ErrGone
	}
	return err
}

// noPidfd reports whether err says pidfds cannot be used here (an old
// kernel, or a seccomp filter that refuses the call).
func noPidfd(err error) bool {
	return errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL)
}

// signalGroup sends sig to the process group led by leader while the
// leader's PID still names it (alive or an unreaped zombie): a group's ID
// is its leader's PID, which cannot be given to another process while the
// leader, or any member of its group, exists.
func signalGroup(leader ID, sig syscall.Signal) error {
	if leader.PID <= 1 {
		return fmt.Errorf("refuse to signal group %d", leader.PID)
	}
	if !sameProcess(leader) {
		return ErrGone
	}
	return gone(syscall.Kill(-leader.PID, sig))
}

// Child is a child process of the caller that the caller reaps itself (the
// sandbox's init). Until the caller reaps it, its PID cannot name another
// process; the pidfd keeps a signal sent after the reap from reaching one.
type Child struct {
	pid int
	fd  int // -1 without pidfds
}

// OpenChild returns the child pid of the caller, not yet reaped.
func OpenChild(pid int) *Child {
	c := &Child{pid: pid, fd: -1}
	if fd, err := unix.PidfdOpen(pid, 0); err == nil {
		c.fd = fd
	}
	return c
}

// PID is the child's process id.
func (c *Child) PID() int { return c.pid }

// Signal sends sig to the child.
func (c *Child) Signal(sig syscall.Signal) error {
	if c.fd >= 0 {
		return gone(unix.PidfdSendSignal(c.fd, sig, nil, 0))
	}
	return gone(syscall.Kill(c.pid, sig))
}

// Close releases the pidfd.
func (c *Child) Close() {
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
}

// Members is a set of processes that are all zerg's by construction: a
// control group zerg made for one command (*cgroup.Group). Only zerg's
// command and what it started can be in it, so every member may be
// signalled.
type Members interface {
	PIDs() []int
}

// KillMembers kills every process of m with SIGKILL until m is empty, for
// at most a second. killFile, when not "", is cgroup v2's cgroup.kill,
// which kills the whole group at once in the kernel; members are then
// signalled one by one too (for a kernel without cgroup.kill, and for
// cgroup v1). A member is signalled through a pidfd opened while it is
// listed in m, so a PID freed and reused in between is not.
func KillMembers(m Members, killFile string) {
	if killFile != "" {
		_ = os.WriteFile(killFile, []byte("1"), 0o644)
	}
	for i := 0; i < 50; i++ {
		pids := m.PIDs()
		if len(pids) == 0 {
			return
		}
		fds := map[int]int{}
		for _, pid := range pids {
			if fd, err := unix.PidfdOpen(pid, 0); err == nil {
				fds[pid] = fd
			} else if noPidfd(err) {
				fds[pid] = -1
			}
		}
		// Opened while listed: still listed now means the pidfd is the
		// member's.
		still := m.PIDs()
		for pid, fd := range fds {
			if slices.Contains(still, pid) {
				if fd >= 0 {
					_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
				} else {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if fd >= 0 {
				unix.Close(fd)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}
