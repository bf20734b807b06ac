package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// maxProxyConns bounds the forwarder's open connections: the forwarder runs
// without the command's limits, so the command must not be able to make it
// use unbounded memory or descriptors.
const maxProxyConns = 256

// RunInit is PID 1 of the sandbox (bwrap --as-pid-1). It starts the
// forwarder when c.Proxy is set, runs argv through the seccomp step
// (InitCommand --seccomp-exec), forwards SIGTERM, SIGINT, SIGHUP and SIGQUIT
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
	// Signals are wanted before the child exists, so none is lost between.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	step := InitConfig{SeccompExec: true, Limits: c.Limits}
	args := append(append([]string{insideExe, InitCommand}, step.Flags()...), "--")
	args = append(args, argv...)
	p, err := os.StartProcess(insideExe, args, &os.ProcAttr{
		Env:   os.Environ(),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
	})
	if err != nil {
		return initFail("start the command: %w", err)
	}
	child := p.Pid
	go func() {
		for s := range sigs {
			_ = syscall.Kill(child, s.(syscall.Signal))
		}
	}()
	// As PID 1 the init inherits every orphan; wait4(-1) reaps them all and
	// returns when the command itself ends. os.Process.Wait is not used: a
	// wait4(-1) here may reap the child first.
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return initFail("wait for the command: %w", err)
		}
		if pid != child {
			continue
		}
		switch {
		case ws.Exited():
			return ws.ExitStatus()
		case ws.Signaled():
			return 128 + int(ws.Signal())
		}
	}
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

// SeccompExec is the second step inside the sandbox, in the process that
// becomes the command: it sets the limits, sets no_new_privs, installs the
// seccomp filter on every thread and execs argv. It returns only on failure.
// Limits are set here rather than in the init, so they bind the command and
// its children but never the forwarder and reaper (a thread limit would make
// the Go runtime of the init crash).
func SeccompExec(c InitConfig, argv []string) error {
	if len(argv) == 0 {
		return errors.New("seccomp step: no command")
	}
	nproc := c.Limits.Processes
	c.Limits.Processes = 0
	if err := setLimits(c.Limits); err != nil {
		return fmt.Errorf("seccomp step: %w", err)
	}
	if err := installFilter(); err != nil {
		return fmt.Errorf("seccomp step: %w", err)
	}
	// The process limit last, just before exec: once it is set, the Go
	// runtime of this step may no longer be able to start a thread.
	if err := setLimits(Limits{Processes: nproc}); err != nil {
		return fmt.Errorf("seccomp step: %w", err)
	}
	if err := syscall.Exec(argv[0], argv, os.Environ()); err != nil {
		return fmt.Errorf("seccomp step: exec %s: %w", argv[0], err)
	}
	return nil
}

func setLimits(l Limits) error {
	set := func(name string, res int, v int64, extraHard uint64) error {
		if v <= 0 {
			return nil
		}
		r := syscall.Rlimit{Cur: uint64(v), Max: uint64(v) + extraHard}
		if err := syscall.Setrlimit(res, &r); err != nil {
			return fmt.Errorf("set %s to %d: %w", name, v, err)
		}
		return nil
	}
	// RLIMIT_DATA rather than RLIMIT_AS: Node (and so Claude Code) reserves
	// far more address space than it uses (V8's pointer cage, WebAssembly
	// guard regions), which RLIMIT_AS counts and RLIMIT_DATA does not.
	if err := set("RLIMIT_DATA", unix.RLIMIT_DATA, l.MemoryBytes, 0); err != nil {
		return err
	}
	if err := set("RLIMIT_NPROC", unix.RLIMIT_NPROC, int64(l.Processes), 0); err != nil {
		return err
	}
	// The hard limit one second above the soft one: SIGXCPU first, which a
	// process can see, then SIGKILL.
	if err := set("RLIMIT_CPU", unix.RLIMIT_CPU, int64(l.CPUSeconds), 1); err != nil {
		return err
	}
	if err := set("RLIMIT_FSIZE", unix.RLIMIT_FSIZE, l.FileSizeBytes, 0); err != nil {
		return err
	}
	return set("RLIMIT_NOFILE", unix.RLIMIT_NOFILE, int64(l.OpenFiles), 0)
}
