package proc

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"
)

// ErrGone is returned when a process is no longer there to signal: it
// exited, or its PID now names another process.
var ErrGone = errors.New("the process is gone")

// Signal sends sig to the process id names, and only to it: it opens a
// pidfd for id.PID, then checks that the PID still has id's start time.
// The pidfd refers to the process that had the PID when it was opened, so
// if the start time still matches afterwards, that process is id's, and a
// signal sent through the pidfd cannot reach a process that got the PID
// later. Without pidfds (macOS, Linux before 5.3, EnvPortable) the start
// time is checked just before kill(2), which leaves the microseconds
// between the two: the PID would have to be freed and the kernel's whole
// PID range cycled through inside them (docs/processes.md).
func Signal(id ID, sig syscall.Signal) error {
	if id.PID <= 1 {
		// 0 and negative PIDs are groups, 1 is init: never one process of ours.
		return fmt.Errorf("refuse to signal pid %d", id.PID)
	}
	fd, err := openPidfd(id.PID)
	switch {
	case err == nil:
		defer closePidfd(fd)
		if !sameProcess(id) {
			return ErrGone
		}
		return pidfdSignal(fd, sig)
	case !errors.Is(err, errNoPidfd):
		return err
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
	if errors.Is(err, syscall.ESRCH) {
		return ErrGone
	}
	return err
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
	if fd, err := openPidfd(pid); err == nil {
		c.fd = fd
	}
	return c
}

// PID is the child's process id.
func (c *Child) PID() int { return c.pid }

// Signal sends sig to the child.
func (c *Child) Signal(sig syscall.Signal) error {
	if c.fd >= 0 {
		return pidfdSignal(c.fd, sig)
	}
	return gone(syscall.Kill(c.pid, sig))
}

// Close releases the pidfd.
func (c *Child) Close() {
	if c.fd >= 0 {
		closePidfd(c.fd)
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
			if fd, err := openPidfd(pid); err == nil {
				fds[pid] = fd
			} else if errors.Is(err, errNoPidfd) {
				fds[pid] = -1
			}
		}
		// Opened while listed: still listed now means the pidfd is the
		// member's. Without pidfds the PID is killed by number, which
		// leaves the microseconds between the listing and kill(2), as in
		// Signal.
		still := m.PIDs()
		for pid, fd := range fds {
			if slices.Contains(still, pid) {
				if fd >= 0 {
					_ = pidfdSignal(fd, syscall.SIGKILL)
				} else {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if fd >= 0 {
				closePidfd(fd)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}
