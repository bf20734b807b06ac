package proc

import (
	"os/exec"
	"slices"
	"syscall"
	"testing"
)

// bothPaths runs f once as proc runs where the kernel has pidfds, the
// parent-death signal and the subreaper (Linux), and once on the portable
// paths (as on macOS, and on Linux with EnvPortable): the same promises
// must hold on each. It reports how many pidfds each opened; the portable
// run must open none.
func bothPaths(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, p := range []bool{false, true} {
		name := "pidfd"
		if p {
			name = "portable"
		}
		t.Run(name, func(t *testing.T) {
			if !p && !Available().Pidfd {
				t.Skip("no pidfds here")
			}
			old := portable
			portable = p
			defer func() { portable = old }()
			before := pidfdsOpened.Load()
			f(t)
			if n := pidfdsOpened.Load() - before; p && n != 0 {
				t.Errorf("the portable path opened %d pidfds", n)
			}
		})
	}
}

// The counter the portable runs are judged by counts: a signal on the
// pidfd path opens one, the same signal on the portable path none, and
// each reaches its process.
func TestPidfdCounter(t *testing.T) {
	if !Available().Pidfd {
		t.Skip("no pidfds here")
	}
	for _, p := range []bool{false, true} {
		old := portable
		portable = p
		victim := exec.Command("sleep", "300")
		if err := victim.Start(); err != nil {
			t.Fatal(err)
		}
		id, err := Identify(victim.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		before := pidfdsOpened.Load()
		err = Signal(id, syscall.SIGKILL)
		opened := pidfdsOpened.Load() - before
		portable = old
		if err != nil {
			t.Fatalf("portable=%v: %v", p, err)
		}
		if ws := waitStatus(t, victim); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("portable=%v: the victim ended %v", p, ws)
		}
		if want := map[bool]int64{false: 1, true: 0}[p]; opened != want {
			t.Errorf("portable=%v: %d pidfds opened, want %d", p, opened, want)
		}
	}
}

func waitStatus(t *testing.T, c *exec.Cmd) syscall.WaitStatus {
	t.Helper()
	_ = c.Wait()
	return c.ProcessState.Sys().(syscall.WaitStatus)
}

// A child signalled through OpenChild: through its pidfd, or by kill(2)
// on the portable path (no pidfd held).
func TestChildSignal(t *testing.T) { bothPaths(t, childSignal) }

func childSignal(t *testing.T) {
	c := exec.Command("sleep", "300")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	ch := OpenChild(c.Process.Pid)
	defer ch.Close()
	if portable && ch.fd >= 0 {
		t.Fatal("the portable path holds a pidfd")
	}
	if err := ch.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if ws := waitStatus(t, c); !ws.Signaled() {
		t.Fatalf("the child ended %v", ws)
	}
}

func TestParseProcargs2(t *testing.T) {
	buf := []byte{2, 0, 0, 0}
	buf = append(buf, "/bin/sleep\x00\x00\x00\x00\x00sleep\x00300\x00PATH=/bin\x00ZERG_RUN_MARKER=ab\x00\x00\x00ptr_munge=\x00"...)
	argv, env, err := parseProcargs2(buf)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(argv, []string{"sleep", "300"}) || !slices.Equal(env, []string{"PATH=/bin", "ZERG_RUN_MARKER=ab"}) {
		t.Fatalf("argv %q env %q", argv, env)
	}
	// No environment, and the buffer ends with the last argument.
	if argv, env, err := parseProcargs2(append([]byte{1, 0, 0, 0}, "/x\x00x\x00"...)); err != nil || !slices.Equal(argv, []string{"x"}) || env != nil {
		t.Fatalf("argv %q env %q err %v", argv, env, err)
	}
	for _, bad := range [][]byte{nil, {1, 0}, append([]byte{1, 0, 0, 0}, "/x"...), append([]byte{3, 0, 0, 0}, "/x\x00a\x00"...)} {
		if _, _, err := parseProcargs2(bad); err == nil {
			t.Errorf("parseProcargs2(%q) accepted", bad)
		}
	}
}
