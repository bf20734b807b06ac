package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zergrush/zerg/internal/proc"
)

// RunInit is PID 1 of the sandbox (bwrap --as-pid-1). It starts the
// forwarder when c.Proxy is set, starts argv under the limits and the
// seccomp filter (startCommand), forwards SIGTERM, SIGINT, SIGHUP and SIGQUIT
// to it, reaps every orphan, and returns the command's exit code (128+signal
// when a signal killed it). When it returns and the process exits, the
// kernel kills whatever else still runs in the sandbox.
//
// It is not subject to the seccomp filter (the forwarder needs AF_UNIX), so
// it makes itself non-dumpable: the sandboxed command runs as the same uid
// and could otherwise ptrace it or write its memory through /proc. bwrap's
// own reaper would be such an unfiltered, traceable process, which is why
// zerg is PID 1 instead.
func RunInit(c InitConfig, argv []string) int {
	// Few threads: they count against the command's process limit (the
	// limit counts the tasks of the uid in the sandbox, the init's too), and
	// the init only copies bytes and waits.
	runtime.GOMAXPROCS(1)
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return initFail("make the init non-dumpable: %w", err)
	}
	if len(argv) == 0 {
		return initFail("no command: %w", errors.New("nothing after --"))
	}
	if c.Proxy != "" {
		// Listen before the command starts, so its first request finds the
		// port open.
		ln, err := net.Listen("tcp", ProxyAddr)
		if err != nil {
			return initFail("forwarder: %w", err)
		}
		go forward(ln, c.Proxy)
	}
	if c.Lifeline != "" {
		// Opened before the command starts: a starter that is already gone
		// ends the sandbox before the command runs a line.
		hup, err := watchLifeline(c.Lifeline)
		if err != nil {
			return initFail("lifeline: %w", err)
		}
		go func() {
			<-hup
			// As PID 1, exiting ends every process of the namespace.
			fmt.Fprintln(os.Stderr, "zerg: the process that started this sandbox is gone: ending it")
			os.Exit(137)
		}()
	}
	// Signals are wanted before the child exists, so none is lost between.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	child, err := startCommand(c, argv)
	if err != nil {
		fmt.Fprintln(os.Stderr, StartFailureLine(err))
		return ExecFailCode(err)
	}
	oomBefore := -1
	if c.ReportOOM {
		oomBefore = memcgOOMKills()
	}
	// A pidfd: a signal that comes after the command was reaped reaches
	// nothing, not a process that got its PID.
	cmd := proc.OpenChild(child)
	go func() {
		for s := range sigs {
			_ = cmd.Signal(s.(syscall.Signal))
		}
	}()
	// As PID 1 the init inherits every orphan; wait4(-1) reaps them all and
	// returns when the command itself ends.
	for {
		pid, ws, err := proc.Wait(-1, 0)
		if err != nil {
			return initFail("wait for the command: %w", err)
		}
		if pid != child {
			continue
		}
		var code int
		switch {
		case ws.Exited():
			code = ws.ExitStatus()
		case ws.Signaled():
			code = 128 + int(ws.Signal())
		default:
			continue
		}
		if code != 0 && oomBefore >= 0 && memcgOOMKills() > oomBefore {
			fmt.Fprintln(os.Stderr, "zerg: the kernel killed a process of this sandbox: its processes together passed the memory limit")
			return ExitOutOfMemory
		}
		return code
	}
}

// startCommand starts argv with the seccomp filter and the limits, and
// returns its pid.
//
// The filter goes on one locked thread of the init, which then forks the
// command: a child inherits the filter (and no_new_privs) of the thread that
// forked it. The goroutine ends without unlocking, so the Go runtime
// discards that thread and the init's other threads stay unfiltered (nor
// does the runtime clone new threads from a locked one: it asks its
// template thread, for exactly this kind of thread-local state). This
// saves a second start of zerg (a few milliseconds of package
// initialisation) over exec'ing the seccomp step.
//
// Limits are per process, so they cannot be set on one thread. The command
// is started traced instead (PTRACE_TRACEME, then exec): it stops at its
// exec before running an instruction, the init sets its limits with
// prlimit and lets it go. Where ptrace is refused (Yama ptrace_scope 2 or 3,
// some LSMs), or when c.ExecStep asks for it, the init starts the seccomp
// step from an unfiltered thread instead: a second zerg that sets the limits
// and the filter on itself and execs argv (SeccompExec).
func startCommand(c InitConfig, argv []string) (int, error) {
	if !c.ExecStep {
		type result struct {
			pid int
			err error
		}
		done := make(chan result, 1)
		go func() {
			runtime.LockOSThread() // for good: see above
			pid, err := startFiltered(c.Limits, argv)
			done <- result{pid, err}
		}()
		r := <-done
		if !errors.Is(r.err, errPtraceRefused) {
			return r.pid, r.err
		}
	}
	step := InitConfig{SeccompExec: true, Limits: c.Limits}
	args := append(append([]string{insideExe, InitCommand}, step.Flags()...), "--")
	args = append(args, argv...)
	pid, err := syscall.ForkExec(insideExe, args, &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}})
	if err != nil {
		return 0, fmt.Errorf("start the seccomp step: %w", err)
	}
	return pid, nil
}

// errPtraceRefused: the command could not be started traced; it did not run.
var errPtraceRefused = errors.New("ptrace refused")

// startFiltered runs on its own locked thread, which it filters.
func startFiltered(l Limits, argv []string) (int, error) {
	if err := installFilter(false); err != nil {
		return 0, fmt.Errorf("start the command: %w", err)
	}
	limited := l != (Limits{})
	attr := &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}, Sys: &syscall.SysProcAttr{Ptrace: limited}}
	pid, err := syscall.ForkExec(argv[0], argv, attr)
	switch {
	case err == nil && !limited:
		return pid, nil
	case err == nil:
		return pid, limitTraced(pid, l)
	case limited && errors.Is(err, syscall.EPERM):
		// PTRACE_TRACEME failed, before the exec.
		return 0, fmt.Errorf("%w: exec %s: %w", errPtraceRefused, argv[0], err)
	}
	return 0, fmt.Errorf("exec %s: %w", argv[0], err)
}

// limitTraced sets the limits of a command stopped at its exec, then
// detaches from it. On failure the command is killed: it must not run
// without them.
func limitTraced(pid int, l Limits) error {
	// Our child, not reaped until we wait for it: its PID is its own.
	cmd := proc.OpenChild(pid)
	defer cmd.Close()
	_, ws, err := proc.Wait(pid, syscall.WALL)
	if err != nil {
		_ = cmd.Signal(syscall.SIGKILL)
		return fmt.Errorf("wait for the command to stop at exec: %w", err)
	}
	if !ws.Stopped() {
		return fmt.Errorf("the command did not stop at exec (status %#x)", ws)
	}
	err = forEachLimit(l, func(name string, res int, r *syscall.Rlimit) error {
		return unix.Prlimit(pid, res, (*unix.Rlimit)(r), nil)
	})
	if err != nil {
		_ = cmd.Signal(syscall.SIGKILL)
		return err
	}
	// Detaching with no signal also drops the SIGTRAP of the exec.
	if err := syscall.PtraceDetach(pid); err != nil {
		_ = cmd.Signal(syscall.SIGKILL)
		return fmt.Errorf("let the command go: %w", err)
	}
	return nil
}

// SeccompExec is the seccomp step, run where the init cannot trace the
// command (startCommand): in the process that becomes the command, it sets
// the limits, sets no_new_privs, installs the seccomp filter on every thread
// (TSYNC: the Go runtime has several, and exec may run on any) and execs
// argv. It returns only on failure.
func SeccompExec(c InitConfig, argv []string) error {
	if len(argv) == 0 {
		return errors.New("seccomp step: no command")
	}
	nproc := c.Limits.Processes
	c.Limits.Processes = 0
	if err := setLimits(c.Limits); err != nil {
		return fmt.Errorf("seccomp step: %w", err)
	}
	if err := installFilter(true); err != nil {
		return fmt.Errorf("seccomp step: %w", err)
	}
	// The process limit last, just before exec: once it is set, the Go
	// runtime of this step may no longer be able to start a thread.
	if err := setLimits(Limits{Processes: nproc}); err != nil {
		return fmt.Errorf("seccomp step: %w", err)
	}
	err := syscall.Exec(argv[0], argv, os.Environ())
	return fmt.Errorf("seccomp step: exec %s: %w", argv[0], err)
}

// maxProxyConns bounds the forwarder's open connections: the forwarder runs
// without the command's limits, so the command must not be able to make it
// use unbounded memory or descriptors.
const maxProxyConns = 256

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
