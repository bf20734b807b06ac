package cgroup_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/cgroup"
	"github.com/zergrush/zerg/internal/sandbox"
	"github.com/zergrush/zerg/internal/sandbox/sandboxtest"
)

// The sandbox round's red team saw one slot's uid hold 3.1 GiB resident
// under memory_mb 2048 on this project's cgroup-v1 machine. Here a slot is
// what zerg makes of it: the real sandbox (bubblewrap, zerg's init, the
// prep step that joins the v1 groups) as an unprivileged user of its own,
// in a group of 256 MiB. Its command tries two ways past the limit: four
// processes of 96 MiB each, and one of 160 MiB with three children that
// share its pages (copy on write), so that the processes' resident sizes
// add up to some 640 MiB. While it runs, every process of the slot's user
// is sampled: each must be in the group, the sum of the memory they made
// (their proportional anonymous and shared-memory sizes, Pss_Anon and
// Pss_Shmem: a shared page counted once) must stay within the limit, and
// the group's peak too. Pages of files (python itself, its libraries) are
// left out: the group is charged for one only when its processes read it
// first, and another test's python may have. The resident sizes' sum (Rss,
// a shared page once per process) is what can pass the limit, and is
// logged. Control: under 1 GiB the four processes all hold their memory,
// so the limit is what stopped them, and the sum goes past what the 256
// MiB run may hold, so the sum would have seen a way past it.
func TestSlotMemoryIsATotal(t *testing.T) {
	m := detect(t)
	if os.Geteuid() != 0 {
		t.Skip("a slot's own user needs root")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Fatal("bubblewrap (bwrap) is not installed: the slot runs in the real sandbox")
	}
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("needs /usr/bin/python3")
	}
	bin, cleanup, err := sandboxtest.BuildZerg()
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	sandbox.Executable = func() (string, error) { return bin, nil }
	uid, gid, err := sandboxtest.User()
	if err != nil {
		t.Fatal(err)
	}
	const hold = `import os, sys, time
n = int(sys.argv[1]) << 20
b = bytearray(n)
b[::4096] = b"x" * len(b[::4096])
kids = int(sys.argv[2])
for _ in range(kids):
    if os.fork() == 0:
        s = sum(b[::4096])  # read, share
        time.sleep(3)
        print("child held", flush=True)
        os._exit(0)
time.sleep(3)
print("held", flush=True)
for _ in range(kids):
    os.wait()
`
	script := fmt.Sprintf(`cat > prog.py <<'EOF'
%s
EOF
for i in 1 2 3 4; do %s prog.py 96 0 & done; wait
%s prog.py 160 3
echo done`, hold, py, py)

	for _, c := range []struct {
		limitMiB int64
		control  bool
	}{{256, false}, {1024, true}} {
		t.Run(fmt.Sprintf("%d MiB", c.limitMiB), func(t *testing.T) {
			root := sandboxtest.Root(t)
			work := filepath.Join(root, "ws")
			if err := os.MkdirAll(work, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(work, uid, gid); err != nil {
				t.Fatal(err)
			}
			limit := c.limitMiB << 20
			g, err := m.New(fmt.Sprintf("zerg-test-slot-%d-%d", os.Getpid(), c.limitMiB), cgroup.Limits{MemoryBytes: limit, Processes: 200})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			spec := sandbox.Spec{Workdir: work, Home: work, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + work, "LANG=C.UTF-8"},
				UID: uid, GID: gid, Cgroup: g, Limits: sandbox.Limits{MemoryBytes: limit, Processes: 200}}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd, err := sandbox.Command(ctx, spec, "/bin/sh", "-c", script)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The control of the membership check: a sampler that knows no
			// group finds every process outside it.
			s, blind := sampler{uid: uid, groups: g.ProcsFiles()}, sampler{uid: uid}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); s.run(stop) }()
			go func() { defer wg.Done(); blind.run(stop) }()
			_ = cmd.Wait()
			close(stop)
			wg.Wait()
			peak := g.MemoryPeak()
			t.Logf("%d MiB: peak %d MiB; the slot's processes together at most: %d MiB made (Pss_Anon+Pss_Shmem), Pss %d MiB, Rss %d MiB; %d samples of up to %d processes; output:\n%s",
				c.limitMiB, peak>>20, s.maxMade>>20, s.maxPss>>20, s.maxRss>>20, s.samples, s.maxProcs, out.String())
			if s.samples == 0 || s.maxProcs < 4 {
				t.Fatalf("the sampler saw %d samples of at most %d processes of the slot's user: it did not watch the command", s.samples, s.maxProcs)
			}
			if len(s.outside) > 0 {
				t.Errorf("processes of the slot's user outside its group: %v", s.outside)
			}
			if len(blind.outside) == 0 {
				t.Error("control: a sampler that knows no group found no process outside it")
			}
			parents := 0 // the parents that held theirs: the four, then the one with children
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.TrimSpace(l) == "held" {
					parents++
				}
			}
			if c.control {
				if parents != 5 || !strings.Contains(out.String(), "done") {
					t.Errorf("control: under %d MiB not every process held its memory (%d of 5):\n%s", c.limitMiB, parents, out.String())
				}
				if s.maxMade <= madeLimit(256<<20) {
					t.Errorf("control: under %d MiB the processes made %d MiB together, not more than the 256 MiB run may: the sum does not see them", c.limitMiB, s.maxMade>>20)
				}
				return
			}
			if peak > limit {
				t.Errorf("the group peaked at %d MiB, above its %d MiB", peak>>20, c.limitMiB)
			}
			if s.maxMade > madeLimit(limit) {
				t.Errorf("the slot's processes held %d MiB they made together (Pss_Anon+Pss_Shmem), above the %d MiB limit", s.maxMade>>20, c.limitMiB)
			}
			if parents >= 5 {
				t.Errorf("all four processes of 96 MiB held their memory under %d MiB:\n%s", c.limitMiB, out.String())
			}
			if !strings.Contains(out.String(), "child held") {
				t.Errorf("the shared-page children did not run:\n%s", out.String())
			}
		})
	}
}

// madeLimit is the most memory a slot's processes may hold together that
// they made under a group of limit bytes: the limit, and an eighth for
// their page tables and stacks, which a sample of smaps_rollup counts
// while the group's charge may lag.
func madeLimit(limit int64) int64 { return limit + limit/8 }

// sampler watches the processes of one user: whether each is in the
// group (a cgroup v1 memory group: its memory line), and the sums of the
// memory they made and of their proportional and resident sizes.
type sampler struct {
	uid            int
	groups         []string // the group's cgroup.procs files
	samples        int
	maxProcs       int
	maxPss, maxRss int64
	maxMade        int64 // Pss_Anon + Pss_Shmem
	outside        []string
}

func (s *sampler) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(50 * time.Millisecond):
		}
		members := s.members()
		entries, _ := os.ReadDir("/proc")
		var pss, rss, made int64
		procs := 0
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || !ownedBy(pid, s.uid) {
				continue
			}
			sz, ok := sizes(pid)
			if !ok {
				continue // it ended
			}
			procs++
			pss, rss, made = pss+sz.pss, rss+sz.rss, made+sz.made
			// A process forked after the group was read is not in that
			// reading but is in the group (a child starts in its parent's):
			// the group is read again before a process counts as outside.
			if !members[pid] && !s.members()[pid] && ownedBy(pid, s.uid) {
				comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
				s.outside = append(s.outside, fmt.Sprintf("%d (%s)", pid, strings.TrimSpace(string(comm))))
			}
		}
		if procs > 0 {
			s.samples++
		}
		s.maxProcs, s.maxPss, s.maxRss, s.maxMade = max(s.maxProcs, procs), max(s.maxPss, pss), max(s.maxRss, rss), max(s.maxMade, made)
	}
}

// members is the pids the group's cgroup.procs files list now.
func (s *sampler) members() map[int]bool {
	m := map[int]bool{}
	for _, f := range s.groups {
		b, _ := os.ReadFile(f)
		for _, l := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(l); err == nil {
				m[pid] = true
			}
		}
	}
	return m
}

func ownedBy(pid, uid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" {
			return f[1] == strconv.Itoa(uid)
		}
	}
	return false
}

// procSizes are a process's sizes in bytes (smaps_rollup): what it made
// (Pss_Anon + Pss_Shmem), Pss and Rss.
type procSizes struct{ made, pss, rss int64 }

func sizes(pid int) (sz procSizes, ok bool) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return sz, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(fs[1], 10, 64)
		switch fs[0] {
		case "Pss:":
			sz.pss, ok = n<<10, true
		case "Rss:":
			sz.rss = n << 10
		case "Pss_Anon:", "Pss_Shmem:":
			sz.made += n << 10
		}
	}
	return sz, ok
}
