package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// detect returns the machine's manager or skips: cgroups need root (v1)
// or a delegated v2 group.
func detect(t *testing.T) *Manager {
	t.Helper()
	m, err := Detect()
	if err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	return m
}

// inGroup runs script in a shell that joins g first.
func inGroup(g *Group, script string) (string, error) {
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
		g, err := m.New(fmt.Sprintf("zerg-test-%d-%d", os.Getpid(), c.limit), Limits{MemoryBytes: c.limit, Processes: 100})
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
	g, err := m.New(fmt.Sprintf("zerg-test-pids-%d", os.Getpid()), Limits{Processes: 10})
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

// Detection reads mountinfo and /proc/self/cgroup; a v2 group offering
// memory and pids is used, one that does not falls back to v1.
func TestDetectFromFiles(t *testing.T) {
	root := t.TempDir()
	old := fsRoot
	fsRoot = root
	defer func() { fsRoot = old }()
	v2 := filepath.Join(root, "unified")
	v1m, v1p := filepath.Join(root, "memory"), filepath.Join(root, "pids")
	for _, d := range []string{filepath.Join(v2, "me"), filepath.Join(v1m, "me"), filepath.Join(v1p, "me")} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(root, "mountinfo"), []byte(fmt.Sprintf(
		"35 31 0:32 / %s rw,relatime - cgroup cgroup rw,memory\n39 31 0:36 / %s rw,relatime - cgroup cgroup rw,pids\n41 31 0:38 / %s rw - cgroup2 cgroup2 rw\n",
		v1m, v1p, v2)), 0o644)
	os.WriteFile(filepath.Join(root, "cgroup"), []byte("4:memory:/me\n8:pids:/me\n0::/me\n"), 0o644)

	os.WriteFile(filepath.Join(v2, "me", "cgroup.controllers"), []byte("cpu io\n"), 0o644)
	m, err := Detect()
	if err != nil || m.v1["memory"] != filepath.Join(v1m, "me", "zerg") || m.v2 != "" {
		t.Fatalf("v2 without memory: %+v %v, want v1", m, err)
	}
	os.WriteFile(filepath.Join(v2, "me", "cgroup.controllers"), []byte("cpu io memory pids\n"), 0o644)
	m, err = Detect()
	if err != nil || m.v2 != filepath.Join(v2, "me", "zerg") {
		t.Fatalf("v2 with memory and pids: %+v %v", m, err)
	}
	if b, _ := os.ReadFile(filepath.Join(v2, "me", "zerg", "cgroup.subtree_control")); string(b) != "+memory +pids" {
		t.Errorf("subtree_control %q", b)
	}
	g, err := m.New("a", Limits{MemoryBytes: 1 << 30, Processes: 64})
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{"memory.max": "1073741824", "pids.max": "64", "memory.swap.max": "0"} {
		if b, _ := os.ReadFile(filepath.Join(v2, "me", "zerg", "a", file)); string(b) != want {
			t.Errorf("%s = %q, want %q", file, b, want)
		}
	}
	if g.FD() < 0 || len(g.ProcsFiles()) != 1 {
		t.Errorf("fd %d procs %v", g.FD(), g.ProcsFiles())
	}
	// (Close is not tried here: a plain directory keeps the files a
	// cgroupfs makes and drops itself.)
	if _, err := m.New("../x", Limits{}); err == nil {
		t.Error("a name with a path in it was accepted")
	}
}
