package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The parent-death signal and its absence on the portable path: a helper
// process starts a command with DieWithParent and is SIGKILLed. With
// Pdeathsig the command is killed with it; with EnvPortable=1 in the
// helper's environment (read at start-up, as zerg reads it) nothing asks
// for that, so the command outlives it, as on macOS, until something that
// knows its identity reaps it.
func TestDieWithParent(t *testing.T) {
	for _, p := range []bool{false, true} {
		t.Run(fmt.Sprintf("portable=%v", p), func(t *testing.T) {
			helper := exec.Command(os.Args[0], "-test.run=^TestDieWithParentHelper$")
			helper.Env = append(os.Environ(), "ZERG_PROC_TEST_HELPER=1")
			if p {
				helper.Env = append(helper.Env, EnvPortable+"=1")
			}
			out, err := helper.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				_ = helper.Process.Kill()
				t.Fatalf("helper: %v", err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				t.Fatalf("helper printed %q", line)
			}
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			_ = helper.Process.Kill()
			_ = helper.Wait()
			if !p {
				waitGone(t, pid)
				return
			}
			// The helper is reaped: a parent-death signal would be pending
			// or delivered by now.
			if !running(pid) || sigkillPending(pid) {
				t.Fatal("the command died with its parent on the portable path")
			}
		})
	}
}

// TestDieWithParentHelper is the helper process of TestDieWithParent.
func TestDieWithParentHelper(t *testing.T) {
	if os.Getenv("ZERG_PROC_TEST_HELPER") != "1" {
		t.Skip("run by TestDieWithParent")
	}
	cmd := exec.Command("sleep", "300")
	if _, err := Start(cmd, Options{DieWithParent: true}, -1); err != nil {
		t.Fatal(err)
	}
	fmt.Println(cmd.Process.Pid)
	time.Sleep(time.Hour)
}

// sigkillPending reports whether SIGKILL is pending for pid.
func sigkillPending(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if ok && (k == "SigPnd" || k == "ShdPnd") {
			if mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && mask&(1<<(syscall.SIGKILL-1)) != 0 {
				return true
			}
		}
	}
	return false
}

// Without a subreaper (macOS, EnvPortable) an orphan that detached
// re-parents away from zerg; its marker is what finds it and what a kill
// follows. The control: the same tree without the marker leaves it
// running.
func TestPortableTreeFindsDetachedOrphansByMarker(t *testing.T) {
	old := portable
	portable = true
	defer func() { portable = old }()
	if IsSubreaper() {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }()
	}
	t.Setenv("ZERG_PROC_TEST", strconv.Itoa(os.Getpid()))
	marker := "ZERG_PROC_TEST=" + strconv.Itoa(os.Getpid())
	script := `( setsid sleep 301 & echo $! ); exec sleep 300`
	detached := func(o Options) (*exec.Cmd, *Tree, int) {
		cmd, tr, pids := startShell(t, script, 1, o)
		orphan := pids[0]
		// Its parent subshell has exited: it re-parented, not to us.
		for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			st, err := ReadStat(orphan)
			if err != nil {
				t.Fatal(err)
			}
			// And it has run setsid: until then, under load, it is still
			// in the shell's group, which the tree's kill reaches.
			if st.PPID != cmd.Process.Pid && st.PPID != os.Getpid() && st.SID == orphan {
				break
			}
			if st.PPID == os.Getpid() {
				t.Fatalf("the orphan %d re-parented to the test, which is no subreaper", orphan)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the orphan %d never left its parent: %+v", orphan, st)
			}
		}
		t.Cleanup(func() { _ = syscall.Kill(orphan, syscall.SIGKILL) })
		return cmd, tr, orphan
	}

	_, tr, control := detached(Options{})
	if left := tr.Terminate(0); len(left) > 0 {
		t.Fatalf("left %v", left)
	}
	if !running(control) {
		t.Fatal("control: an orphan without the marker was killed; the test cannot tell the marker's part")
	}

	_, tr, orphan := detached(Options{Marker: marker})
	if left := tr.Terminate(0); len(left) > 0 {
		t.Fatalf("left %v", left)
	}
	waitGone(t, orphan)
}
