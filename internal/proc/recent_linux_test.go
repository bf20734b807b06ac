package proc

import (
	"os/exec"
	"sync/atomic"
	"testing"
	"time"
)

// The periodic scans of many trees share one read of the process table; a
// kill's scan (full) reads afresh every time, and so does a periodic one
// once the shared scan is older than recentAge.
func TestPeriodicScansShareOneScan(t *testing.T) {
	var scans atomic.Int32
	scanTable = func() (map[int]Stat, error) { scans.Add(1); return Scan() }
	t.Cleanup(func() { scanTable = Scan })
	recent.mu.Lock()
	recent.procs = nil
	recent.mu.Unlock()

	var trees []*Tree
	for range 8 {
		cmd := exec.Command("sleep", "30")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		trees = append(trees, NewTree(cmd.Process.Pid, Options{}))
	}
	for _, tr := range trees {
		tr.Reap()
	}
	if n := scans.Load(); n != 1 {
		t.Fatalf("eight periodic scans read the process table %d times, want once", n)
	}
	// The control: a kill's scan is never a shared one.
	for _, tr := range trees[:3] {
		if got := tr.Collect(true); len(got) != 1 {
			t.Fatalf("a full scan found %d processes of a one-process tree", len(got))
		}
	}
	if n := scans.Load(); n != 4 {
		t.Fatalf("three full scans after one periodic: %d reads, want 4", n)
	}
	time.Sleep(recentAge + 20*time.Millisecond)
	trees[0].Reap()
	if n := scans.Load(); n != 5 {
		t.Fatalf("a periodic scan after recentAge: %d reads, want 5", n)
	}
}

// A zombie seen in an old scan is reaped only while its PID still names
// that same zombie: a PID reaped and reused since belongs to another
// child, whose exit status is for its own Wait.
func TestStillZombieChecksTheProcessNow(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	var st Stat
	for deadline := time.Now().Add(5 * time.Second); ; {
		var err error
		if st, err = ReadStat(pid); err == nil && st.Zombie() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child %d did not become a zombie: %+v", pid, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !stillZombie(st) {
		t.Fatalf("the zombie %d is not recognised: %+v", pid, st)
	}
	other := st
	other.StartTime--
	if stillZombie(other) {
		t.Fatal("a zombie with another start time than the scan's was taken for it")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if stillZombie(st) {
		t.Fatal("a reaped zombie is still taken for one")
	}
}
