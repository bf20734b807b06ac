// Package claude_test holds the end-to-end tests of the worker driver
// (internal/claude): the real pinned Claude Code CLI against the scripted
// Messages API (internal/mockapi), launched through claude.Start exactly as
// the coordinator does, with the hook running a built zerg binary. They
// live here rather than in internal/claude so that the unit tier
// (go test ./internal/...) starts no real CLI; internal/claude keeps the
// tests that drive a fake one.
package claude_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/proc"
)

var (
	zergBin string          // zerg built for the hook, in a directory every user can reach
	cli     claude.Location // the real, pinned CLI
	// portable is ZERG_PORTABLE_PROC=1: the driver kills on proc's
	// portable paths (no pidfd, parent-death signal or subreaper).
	portable = os.Getenv(proc.EnvPortable) == "1"
)

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/claude:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// setup finds the real CLI (missing is a failure, not a skip: make test
// installs it) and builds zerg once for every test's hook.
func setup(m *testing.M) (int, error) {
	// As the coordinator does: processes a worker detaches re-parent to us,
	// so a run can find, kill and reap them. Not where there is none (macOS,
	// ZERG_PORTABLE_PROC=1): the marker finds them there.
	if err := claude.EnableSubreaper(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return 1, err
	}
	loc, err := claude.Locate("")
	if err != nil {
		return 1, fmt.Errorf("real claude CLI not found: %v (run `make claude`)", err)
	}
	if loc.RepoRoot == "" {
		return 1, fmt.Errorf("repository root not found from %s", loc.Path)
	}
	cli = loc
	dir, err := os.MkdirTemp("", "zerg-claude-e2e-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)
	// Workers may run as another user: it must reach the hook binary.
	if err := os.Chmod(dir, 0o755); err != nil {
		return 1, err
	}
	zergBin = filepath.Join(dir, "zerg")
	cmd := exec.Command("go", "build", "-o", zergBin, "./cmd/zerg")
	cmd.Dir = loc.RepoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return 1, fmt.Errorf("build zerg: %v\n%s", err, out)
	}
	return m.Run(), nil
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// waitOutcome waits for r to end, killing it after limit.
func waitOutcome(t *testing.T, r *claude.Run, limit time.Duration) claude.Outcome {
	t.Helper()
	select {
	case <-r.Done():
		return r.Wait()
	case <-time.After(limit):
		r.Kill()
		t.Fatalf("run did not end within %v", limit)
		return claude.Outcome{}
	}
}

// waitPidFile waits for the pid file a scripted Bash command writes.
func waitPidFile(t *testing.T, path string, limit time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 {
				return pid
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
	return 0
}

// assertNoSecret fails if s holds the API key (or anything marked SECRET).
func assertNoSecret(t *testing.T, s string) {
	t.Helper()
	for _, secret := range []string{e2eKey, "SECRET"} {
		if strings.Contains(s, secret) {
			t.Fatalf("secret %q leaked into %q", secret, s)
		}
	}
}

// The driver's own /proc readers are unexported; these small ones read the
// same fields from the outside, which is what the tests assert on anyway.

// procStat is what the tests need of /proc/PID/stat.
type procStat struct {
	ppid, sid int
	state     byte
}

// readStat parses /proc/PID/stat; comm may hold spaces and parentheses, so
// fields are counted from the last ')'.
func readStat(pid int) (procStat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	f := strings.Fields(string(data[i+1:]))
	// f[0] is field 3 (state); field N is f[N-3].
	if len(f) < 4 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat: %d fields", pid, len(f))
	}
	ppid, err1 := strconv.Atoi(f[1])
	sid, err2 := strconv.Atoi(f[3])
	if err := errors.Join(err1, err2); err != nil {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
	}
	return procStat{ppid: ppid, sid: sid, state: f[0][0]}, nil
}

// assertGone fails if any of pids still exists (zombies included: the run
// must reap what re-parented to us). Without a subreaper (macOS, played
// with ZERG_PORTABLE_PROC=1) a detached process re-parents to PID 1
// instead, and a zombie whose parent is not us is dead, waiting for that
// parent to reap it: gone, as far as the run can make it.
func assertGone(t *testing.T, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		st, err := readStat(pid)
		if err != nil || (portable && st.state == 'Z' && st.ppid != os.Getpid()) {
			continue
		}
		t.Errorf("process %d still exists (state %c, ppid %d)", pid, st.state, st.ppid)
	}
}

// pidsWithEnv lists every process whose initial environment holds kv
// (KEY=value).
func pidsWithEnv(t *testing.T, kv string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, ent := range bytes.Split(data, []byte{0}) {
			if string(ent) == kv {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}
