package proc

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	line := []byte("1234 (a (weird) name) S 1 1234 1235 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100 18446744073709551615")
	st, err := ParseStat(1234, line)
	if err != nil {
		t.Fatal(err)
	}
	if st.PPID != 1 || st.PGID != 1234 || st.SID != 1235 || st.State != 'S' || st.StartTime != 987654 {
		t.Fatalf("%+v", st)
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S 1", "1 (x) S a b c d e f g h i j k l m n o p q r s t"} {
		if _, err := ParseStat(1, []byte(bad)); err == nil {
			t.Errorf("ParseStat(%q) accepted", bad)
		}
	}
}

// fakeTarget exits after a number of signals of a kind, or never.
type fakeTarget struct {
	mu     sync.Mutex
	sent   []syscall.Signal
	alive  bool
	diesOn syscall.Signal // the signal that ends it; 0: none does
}

func (f *fakeTarget) Signal(sig syscall.Signal) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, sig)
	if !f.alive {
		return 0
	}
	if sig == f.diesOn {
		f.alive = false
	}
	return 1
}

func (f *fakeTarget) Live() []ID {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.alive {
		return []ID{{PID: 42}}
	}
	return nil
}

func shortTimings(t *testing.T) {
	old := [3]time.Duration{termPoll, killPoll, killFor}
	termPoll, killPoll, killFor = time.Millisecond, time.Millisecond, 50*time.Millisecond
	t.Cleanup(func() { termPoll, killPoll, killFor = old[0], old[1], old[2] })
}

// The decisions of Terminate: SIGTERM first and nothing more when that is
// enough; SIGKILL after the grace when not (onKill told); SIGKILL at once
// without a grace; nothing at all for a target already gone; and a target
// that survives SIGKILL is reported, not waited for forever.
func TestTerminateDecisions(t *testing.T) {
	shortTimings(t)
	cases := []struct {
		name     string
		target   fakeTarget
		grace    time.Duration
		first    []syscall.Signal // the signals sent, in order, at least these
		onKill   bool
		leftover bool
	}{
		{"exits on SIGTERM", fakeTarget{alive: true, diesOn: syscall.SIGTERM}, 20 * time.Millisecond, []syscall.Signal{syscall.SIGTERM}, false, false},
		{"ignores SIGTERM", fakeTarget{alive: true, diesOn: syscall.SIGKILL}, 20 * time.Millisecond, []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}, true, false},
		{"no grace", fakeTarget{alive: true, diesOn: syscall.SIGKILL}, 0, []syscall.Signal{syscall.SIGKILL}, false, false},
		{"already gone", fakeTarget{}, 20 * time.Millisecond, []syscall.Signal{syscall.SIGTERM}, false, false},
		{"unkillable", fakeTarget{alive: true}, 0, []syscall.Signal{syscall.SIGKILL, syscall.SIGKILL}, false, true},
	}
	for i := range cases {
		c := &cases[i]
		t.Run(c.name, func(t *testing.T) {
			called := false
			left := Terminate(&c.target, c.grace, func([]ID) { called = true })
			if (len(left) > 0) != c.leftover {
				t.Errorf("left %v, want leftover %v", left, c.leftover)
			}
			if called != c.onKill {
				t.Errorf("onKill called %v, want %v", called, c.onKill)
			}
			sent := c.target.sent
			if c.leftover {
				if len(sent) < len(c.first) {
					t.Fatalf("sent %v, want at least %v", sent, c.first)
				}
				sent = sent[:len(c.first)]
			}
			if !slicesEqual(sent, c.first) {
				t.Errorf("sent %v, want %v", sent, c.first)
			}
		})
	}
}

func slicesEqual(a, b []syscall.Signal) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// startShell starts script with proc.Start; the script prints PIDs, one a
// line, and the test reads n of them.
func startShell(t *testing.T, script string, n int, o Options) (*exec.Cmd, *Tree, []int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Start(cmd, o, -1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range tr.Recorded() {
			_ = Signal(p, syscall.SIGKILL)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	var pids []int
	labels := map[int]string{}
	for len(pids) < n && sc.Scan() {
		// "[label] pid"; labelled lines are sorted by label (they may come
		// in any order).
		f := strings.Fields(sc.Text())
		pid, err := strconv.Atoi(f[len(f)-1])
		if err != nil {
			t.Fatalf("script printed %q", sc.Text())
		}
		labels[pid] = f[0]
		pids = append(pids, pid)
	}
	if len(pids) < n {
		t.Fatalf("script printed %v, want %d pids", pids, n)
	}
	sort.SliceStable(pids, func(i, j int) bool { return labels[pids[i]] < labels[pids[j]] })
	return cmd, tr, pids
}

// running reports whether pid runs (not a zombie).
func running(pid int) bool {
	st, err := ReadStat(pid)
	return err == nil && !st.Zombie()
}

func waitGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for _, pid := range pids {
		for running(pid) {
			if time.Now().After(deadline) {
				st, _ := ReadStat(pid)
				t.Fatalf("process %d still runs: %+v", pid, st)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// A tree with a child, a grandchild in a session of its own (no group kill
// reaches it) and an orphan that detached and re-parented to us: all go,
// and so does the root.
func TestTreeKillsGrandchildrenAndDetachedOrphans(t *testing.T) {
	if err := EnableSubreaper(); err != nil {
		t.Skip(err)
	}
	marker := "ZERG_PROC_TEST=" + strconv.Itoa(os.Getpid())
	// sh → sh → (setsid) sleep: a grandchild in its own session;
	// sh → (setsid sleep &) whose parent exits: an orphan with the marker.
	script := `sh -c 'setsid sleep 300 & echo g $!; wait' &
( setsid sleep 301 & echo o $! )
wait`
	t.Setenv("ZERG_PROC_TEST", strconv.Itoa(os.Getpid()))
	cmd, tr, pids := startShell(t, script, 2, Options{Marker: marker})
	grandchild, orphan := pids[0], pids[1]
	time.Sleep(100 * time.Millisecond)
	if st, _ := ReadStat(grandchild); st.SID != grandchild {
		t.Fatalf("the grandchild %d is not in a session of its own: %+v", grandchild, st)
	}
	if st, _ := ReadStat(orphan); st.PPID != os.Getpid() {
		t.Fatalf("the orphan %d was not re-parented to the test: %+v", orphan, st)
	}
	left := tr.Terminate(time.Second)
	if len(left) > 0 {
		t.Fatalf("left %v", left)
	}
	waitGone(t, grandchild, orphan)
	_ = cmd.Wait()
	tr.SetExited()
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() {
		t.Fatalf("the root was not killed: %v", cmd.ProcessState)
	}
}

// A process that ignores SIGTERM is killed once the grace is over, not
// before.
func TestTreeKillsWhatIgnoresSIGTERM(t *testing.T) { bothPaths(t, treeKillsWhatIgnoresSIGTERM) }

func treeKillsWhatIgnoresSIGTERM(t *testing.T) {
	cmd, tr, _ := startShell(t, `trap '' TERM; echo $$; while :; do sleep 0.05; done`, 1, Options{})
	start := time.Now()
	grace := 300 * time.Millisecond
	if left := tr.Terminate(grace); len(left) > 0 {
		t.Fatalf("left %v", left)
	}
	if took := time.Since(start); took < grace {
		t.Fatalf("killed after %s, before the grace of %s", took, grace)
	}
	_ = cmd.Wait()
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the root ended %v, want SIGKILL", cmd.ProcessState)
	}
}

// A record whose PID now names another process (simulated: the right PID
// with another start time) is never signalled: not by Signal, not by a
// recorded tree.
func TestRecycledPIDIsNotSignalled(t *testing.T) { bothPaths(t, recycledPIDIsNotSignalled) }

func recycledPIDIsNotSignalled(t *testing.T) {
	victim := exec.Command("sleep", "300")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = victim.Process.Kill(); _ = victim.Wait() })
	id, err := Identify(victim.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	stale := ID{PID: id.PID, StartTime: id.StartTime - 1}
	if err := Signal(stale, syscall.SIGKILL); !errors.Is(err, ErrGone) {
		t.Fatalf("Signal of a stale record: %v, want ErrGone", err)
	}
	if left := Recorded([]ID{stale}, Options{}).Terminate(0); len(left) > 0 {
		t.Fatalf("recorded tree left %v", left)
	}
	if left := Terminate(Process(stale), 0, nil); len(left) > 0 {
		t.Fatalf("process target left %v", left)
	}
	time.Sleep(50 * time.Millisecond)
	if !running(victim.Process.Pid) {
		t.Fatal("a process with another start time than the record was killed")
	}
	// The control: the right record kills it.
	if left := Recorded([]ID{id}, Options{}).Terminate(0); len(left) > 0 {
		t.Fatalf("left %v", left)
	}
	// The recorded tree reaped it (it is the test's child): gone, not a
	// zombie.
	if _, err := ReadStat(victim.Process.Pid); err == nil {
		t.Fatal("the recorded process was not killed")
	}
}

// Cancelling the command's context terminates its whole tree, not only
// the command: a grandchild in a session of its own goes too.
func TestStartCancelKillsTheTree(t *testing.T) { bothPaths(t, startCancelKillsTheTree) }

func startCancelKillsTheTree(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "sh", "-c", `sh -c 'setsid sleep 300 & echo $!; wait' & wait`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Start(cmd, Options{}, 0); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	grandchild, _ := strconv.Atoi(strings.TrimSpace(line))
	t.Cleanup(func() { _ = syscall.Kill(grandchild, syscall.SIGKILL) })
	cancel()
	_ = cmd.Wait()
	waitGone(t, grandchild)
}

// KillMembers kills what the set lists and nothing else.
func TestKillMembers(t *testing.T) { bothPaths(t, killMembers) }

func killMembers(t *testing.T) {
	in, out := exec.Command("sleep", "300"), exec.Command("sleep", "300")
	for _, c := range []*exec.Cmd{in, out} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	}
	m := &listed{pids: []int{in.Process.Pid}}
	go func() { _ = in.Wait(); m.set(nil) }()
	KillMembers(m, "")
	if len(m.PIDs()) != 0 {
		t.Fatal("the member was not killed")
	}
	if !running(out.Process.Pid) {
		t.Fatal("a process not in the set was killed")
	}
}

type listed struct {
	mu   sync.Mutex
	pids []int
}

func (l *listed) PIDs() []int { l.mu.Lock(); defer l.mu.Unlock(); return append([]int(nil), l.pids...) }
func (l *listed) set(p []int) { l.mu.Lock(); l.pids = p; l.mu.Unlock() }
