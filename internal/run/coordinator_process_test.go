package run

import (
	"os"
	"testing"
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

// TestCoordinatorProcess: no process, and a live process that is no zerg
// rush (this test), are never named.
func TestCoordinatorProcess(t *testing.T) {
	for _, pid := range []int{0, -1, os.Getpid()} {
		if id := CoordinatorProcess(pid); id.PID != 0 {
			t.Errorf("CoordinatorProcess(%d) = %+v, want the zero ID", pid, id)
		}
	}
}
