package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/proc"
)

func TestIsRushCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"/usr/local/bin/zerg", "rush", "auth"}, true},
		{[]string{"./zerg-dev", "--verbose", "rush"}, true},
		{[]string{"zerg"}, false},
		{[]string{"zerg", "status", "auth"}, false},
		{[]string{"/usr/bin/python3", "rush"}, false},
		{[]string{"/opt/zerg/bin/sleep", "rush"}, false}, // the directory is not the program
		{nil, false},
	} {
		if got := IsRushCommand(c.args); got != c.want {
			t.Errorf("IsRushCommand(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// TestCoordinatorProcess: a live zerg rush is named by its identity; no
// process, and a live process that is no zerg rush (this test), are not.
func TestCoordinatorProcess(t *testing.T) {
	for _, pid := range []int{0, -1, os.Getpid()} {
		if id := CoordinatorProcess(pid); id.PID != 0 {
			t.Errorf("CoordinatorProcess(%d) = %+v, want the zero ID", pid, id)
		}
	}
	// A shell copied to a file named zerg, its command line holding rush:
	// what a coordinator's looks like to the process table.
	sh, err := os.ReadFile("/bin/sh")
	if err != nil {
		t.Skip("no /bin/sh to pose as a coordinator:", err)
	}
	zerg := filepath.Join(t.TempDir(), "zerg")
	if err := os.WriteFile(zerg, sh, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(zerg, "-c", "sleep 30; true", "rush")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// Start returns once the exec began: the kernel sets the new command
	// line a moment later, and until then /proc shows an empty one.
	for deadline := time.Now().Add(5 * time.Second); len(proc.Cmdline(cmd.Process.Pid)) == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if id := CoordinatorProcess(cmd.Process.Pid); id.PID != cmd.Process.Pid {
		t.Errorf("a live zerg rush (pid %d) was not named: %+v", cmd.Process.Pid, id)
	}
}
