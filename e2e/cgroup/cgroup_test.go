// Package cgroup_test holds the tests of internal/cgroup against the
// machine's real control groups (they need root or a delegated cgroup v2
// group, and skip without one): processes that allocate memory until the
// kernel kills one, and more processes than a group may start. They live
// here, not in internal/cgroup, so that the unit tier starts none of them;
// internal/cgroup keeps detection from laid-out files.
package cgroup_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/cgroup"
)

// detect returns the machine's manager or skips: cgroups need root (v1)
// or a delegated v2 group.
func detect(t *testing.T) *cgroup.Manager {
	t.Helper()
	m, err := cgroup.Detect()
	if err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	return m
}

// inGroup runs script in a shell that joins g first.
func inGroup(g *cgroup.Group, script string) (string, error) {
	var join []string
	for _, f := range g.ProcsFiles() {
		join = append(join, "echo $$ > "+f)
	}
	cmd := exec.Command("sh", "-c", strings.Join(join, " && ")+" && "+script)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Memory is a total over the group's processes: three processes of 48 MiB
// each under a 96 MiB limit cannot all hold theirs; the control, the same
// under 256 MiB, can.
func TestMemoryIsATotal(t *testing.T) {
	m := detect(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3")
	}
	script := `for i in 1 2 3; do python3 -c 'import time; b = bytearray(48<<20); b[::4096] = b"x" * len(b[::4096]); time.sleep(1); print("held")' & done; wait`
	for _, c := range []struct {
		limit int64
		held  int
	}{{96 << 20, 1}, {256 << 20, 3}} {
		g, err := m.New(fmt.Sprintf("zerg-test-%d-%d", os.Getpid(), c.limit), cgroup.Limits{MemoryBytes: c.limit, Processes: 100})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := inGroup(g, script)
		held := strings.Count(out, "held")
		oom := g.OOMKills()
		peak := g.MemoryPeak()
		if err := g.Close(); err != nil {
			t.Error(err)
		}
		switch {
		case c.held == 3 && held != 3:
			t.Errorf("limit %d MiB: %d of 3 held their memory, want all (the control): %s", c.limit>>20, held, out)
		case c.held < 3 && (held == 3 || oom == 0):
			t.Errorf("limit %d MiB: %d of 3 held 48 MiB each, %d OOM kills; the limit is not a total", c.limit>>20, held, oom)
		}
		if peak > c.limit {
			t.Errorf("limit %d MiB: peak %d MiB", c.limit>>20, peak>>20)
		}
	}
}

// Processes are a total too: a group of 10 cannot start 30.
func TestProcessesAreATotal(t *testing.T) {
	m := detect(t)
	g, err := m.New(fmt.Sprintf("zerg-test-pids-%d", os.Getpid()), cgroup.Limits{Processes: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	out, _ := inGroup(g, `n=0; for i in $(seq 30); do sleep 2 2>/dev/null & n=$((n+1)); done; sleep 0.3; echo "running: $(jobs -r | wc -l)"`)
	if !strings.Contains(out, "fork") && !strings.Contains(out, "Resource temporarily unavailable") && !strings.Contains(out, "running: ") {
		t.Fatalf("output: %s", out)
	}
	var running int
	if i := strings.Index(out, "running: "); i >= 0 {
		fmt.Sscanf(out[i+len("running: "):], "%d", &running)
	}
	if running >= 10 {
		t.Errorf("%d processes ran in a group of 10: %s", running, out)
	}
	if err := g.Close(); err != nil {
		t.Error(err)
	}
	if left := g.PIDs(); len(left) != 0 {
		t.Errorf("processes left after Close: %v", left)
	}
}
