package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The tests against the machine's real control groups are in e2e/cgroup.

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
