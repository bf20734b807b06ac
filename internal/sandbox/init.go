package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// maxProxyConns bounds the forwarder's open connections: the forwarder runs
// without the command's limits, so the command must not be able to make it
// use unbounded memory or descriptors.
const maxProxyConns = 256

// ExitOutOfMemory is the init's exit code when the command failed after
// the kernel killed a process of its memory cgroup for passing its limit
// (InitConfig.ReportOOM).
const ExitOutOfMemory = 249

// memcgOOMKills is how many processes the kernel has killed in the memory
// cgroup the init is in (cgroup v2's memory.events, v1's oom_control), -1
// when it cannot be read. Only a container has its own cgroup at
// /sys/fs/cgroup: a bubblewrap sandbox sees the host's root cgroup there.
func memcgOOMKills() int {
	for _, f := range []string{"/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
				if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
					return n
				}
			}
		}
	}
	return -1
}

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

// forward pipes each TCP connection accepted on ln to the unix socket sock.
func forward(ln net.Listener, sock string) {
	slots := make(chan struct{}, maxProxyConns)
	for {
		slots <- struct{}{}
		conn, err := ln.Accept()
		if err != nil {
			<-slots
			// Out of descriptors or the like: wait rather than spin, and
			// keep serving once the command closes some.
			time.Sleep(50 * time.Millisecond)
			continue
		}
		go func() {
			defer func() { <-slots }()
			pipe(conn, sock)
		}()
	}
}

func pipe(conn net.Conn, sock string) {
	defer conn.Close()
	up, err := net.Dial("unix", sock)
	if err != nil {
		return // the client sees the connection close: the proxy is not there
	}
	defer up.Close()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, conn)
		closeWrite(up) // the request is complete: let the proxy see EOF
		close(done)
	}()
	_, _ = io.Copy(conn, up)
	closeWrite(conn)
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

func setLimits(l Limits) error {
	return forEachLimit(l, func(_ string, res int, r *syscall.Rlimit) error {
		return syscall.Setrlimit(res, r)
	})
}

// forEachLimit calls set for each limit in l that is not 0.
func forEachLimit(l Limits, set func(name string, res int, r *syscall.Rlimit) error) error {
	one := func(name string, res int, v int64, extraHard uint64) error {
		if v <= 0 {
			return nil
		}
		r := syscall.Rlimit{Cur: uint64(v), Max: uint64(v) + extraHard}
		if err := set(name, res, &r); err != nil {
			return fmt.Errorf("set %s to %d: %w", name, v, err)
		}
		return nil
	}
	// RLIMIT_DATA rather than RLIMIT_AS: Node (and so Claude Code) reserves
	// far more address space than it uses (V8's pointer cage, WebAssembly
	// guard regions), which RLIMIT_AS counts and RLIMIT_DATA does not.
	if err := one("RLIMIT_DATA", unix.RLIMIT_DATA, l.MemoryBytes, 0); err != nil {
		return err
	}
	if err := one("RLIMIT_NPROC", unix.RLIMIT_NPROC, int64(l.Processes), 0); err != nil {
		return err
	}
	// The hard limit one second above the soft one: SIGXCPU first, which a
	// process can see, then SIGKILL.
	if err := one("RLIMIT_CPU", unix.RLIMIT_CPU, int64(l.CPUSeconds), 1); err != nil {
		return err
	}
	if err := one("RLIMIT_FSIZE", unix.RLIMIT_FSIZE, l.FileSizeBytes, 0); err != nil {
		return err
	}
	return one("RLIMIT_NOFILE", unix.RLIMIT_NOFILE, int64(l.OpenFiles), 0)
}

// watchLifeline opens the FIFO for reading and returns a channel closed
// when it has no writer left (POLLHUP). Its only writer is the starter's
// process, which holds it open while it lives; nobody inside can write to
// it (it is not theirs), so nobody inside can keep the sandbox alive.
func watchLifeline(path string) (<-chan struct{}, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	hup := make(chan struct{})
	go func() {
		defer close(hup)
		buf := make([]byte, 64)
		for {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
				return
			}
			if fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
				return
			}
			if fds[0].Revents&unix.POLLIN != 0 {
				if n, _ := unix.Read(fd, buf); n == 0 {
					return
				}
			}
		}
	}()
	return hup, nil
}
