package proc_test

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

	"github.com/zergrush/zerg/internal/cgroup"
	"github.com/zergrush/zerg/internal/proc"
)

// escapee starts, through proc.Start, a command that leaves behind a
// process every other rule misses: a new session, an empty environment
// (no marker), its parent gone (re-parented away from the tree). It
// returns the tree and the escapee's PID.
func escapee(t *testing.T, o proc.Options) (*proc.Tree, int) {
	t.Helper()
	// The pause lets proc.Start move the shell into a v1 group before it
	// forks (docs: v1 joins right after the start).
	cmd := exec.Command("sh", "-c", `sleep 0.2; (setsid env -i sleep 300 >/dev/null 2>&1 & echo $!); exec sleep 300`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := proc.Start(cmd, o, -1)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); tr.SetExited() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	time.Sleep(50 * time.Millisecond)
	return tr, pid
}

func running(pid int) bool {
	st, err := proc.ReadStat(pid)
	return err == nil && !st.Zombie()
}

// A command started in a cgroup of its own: what escaped the tree is still
// in the group and is killed with it. The control: the same command without
// the group leaves its escapee running (the other rules do not find it).
func TestCgroupMembersAreKilled(t *testing.T) {
	m, err := cgroup.Detect()
	if err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	g, err := m.New(fmt.Sprintf("zerg-proc-test-%d", os.Getpid()), cgroup.Limits{Processes: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()

	tr, control := escapee(t, proc.Options{})
	tr.Terminate(0)
	if !running(control) {
		t.Fatal("control: the escapee of a command without a cgroup was killed; the test cannot tell the group's part")
	}

	tr, pid := escapee(t, proc.Options{Cgroup: g})
	if left := tr.Terminate(0); len(left) > 0 {
		t.Fatalf("left %v", left)
	}
	deadline := time.Now().Add(3 * time.Second)
	for running(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the escapee %d in the command's cgroup still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(g.PIDs()); n != 0 {
		t.Fatalf("%d processes left in the group", n)
	}
}
