package proc

import (
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A process with a parent of its own (not the caller, not init) whose
// working directory is the tree's and whose command line Stranded
// recognises is the tree's in a kill's scan, and only then: a container's
// init stranded under its engine's monitor.
func TestTreeClaimsAStrandedProcessInItsDirs(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	// sh stays as the sleep's parent: nothing but the new rule attributes
	// the sleep (sh is in the test's own process group).
	parent := exec.Command("sh", "-c", `cd "$1" && sleep 302 & echo $!; wait; exec sleep 303`, "sh", dir)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	var line [32]byte
	n, _ := out.Read(line[:])
	pid, err := strconv.Atoi(strings.TrimSpace(string(line[:n])))
	if err != nil {
		t.Fatalf("no pid: %q", line[:n])
	}
	t.Cleanup(func() { _ = Signal(ID{PID: pid}, 9) })
	for cwdOf(pid) != dir {
		time.Sleep(10 * time.Millisecond) // the sleep has not run cd yet
	}
	isSleep := func(argv []string) bool { return len(argv) == 2 && argv[0] == "sleep" && argv[1] == "302" }
	live := func(o Options) []int {
		var pids []int
		for _, p := range Recorded(nil, o).Live() {
			pids = append(pids, p.PID)
		}
		return pids
	}
	// Controls: each part of the rule alone claims nothing.
	if got := live(Options{Dirs: []string{dir}}); slices.Contains(got, pid) {
		t.Fatalf("without Stranded the tree claims %d", pid)
	}
	if got := live(Options{Dirs: []string{other}, Stranded: isSleep}); slices.Contains(got, pid) {
		t.Fatalf("the tree claims %d in a directory not its own", pid)
	}
	if got := live(Options{Dirs: []string{dir}, Stranded: func([]string) bool { return false }}); slices.Contains(got, pid) {
		t.Fatalf("the tree claims %d whose command line it does not recognise", pid)
	}
	o := Options{Dirs: []string{dir}, Stranded: isSleep}
	tr := Recorded(nil, o)
	for _, st := range tr.Collect(false) {
		if st.PID == pid {
			t.Fatal("a periodic scan (not full) claims a stranded process")
		}
	}
	if got := live(o); !slices.Equal(got, []int{pid}) {
		t.Fatalf("live %v, want the stranded %d", got, pid)
	}
	if left := tr.Terminate(time.Second); len(left) > 0 {
		t.Fatalf("left %v", left)
	}
	waitGone(t, pid)
	if !running(parent.Process.Pid) {
		t.Error("the stranded process's parent, not the tree's, was signalled")
	}
}
