package driver

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestShellExitCodeAndOutput(t *testing.T) {
	code, out := Shell{Command: "echo hello; echo oops >&2; exit 7", Dir: t.TempDir()}.Run(context.Background())
	if code != 7 || !strings.Contains(out, "hello") || !strings.Contains(out, "oops") {
		t.Fatalf("code %d out %q", code, out)
	}
}

// TestShellTimeoutKillsGroup: on timeout the whole process group goes,
// including a background child, and the exit code is 124.
func TestShellTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	code, out := Shell{Command: "sleep 60 & echo $! > child.pid; wait", Dir: dir, Timeout: 300 * time.Millisecond}.Run(context.Background())
	if code != 124 || !strings.Contains(out, "timed out") {
		t.Fatalf("code %d out %q", code, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(2 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); strings.Contains(string(stat), ") Z ") {
			break // a zombie awaiting its reaper is dead
		}
		if time.Now().After(deadline) {
			t.Fatalf("background child %d survived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestShellEnvironmentIsAllowlisted: zerg's own variables do not reach the
// command unless passed by name.
func TestShellEnvironmentIsAllowlisted(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "not-for-commands")
	t.Setenv("ZERG_PASSED", "yes")
	_, out := Shell{Command: "env", Dir: t.TempDir(), Pass: []string{"ZERG_PASSED"}, Env: []string{"EXTRA=1"}}.Run(context.Background())
	if strings.Contains(out, "AWS_SECRET_ACCESS_KEY") {
		t.Error("an unlisted variable reached the command")
	}
	for _, want := range []string{"ZERG_PASSED=yes", "EXTRA=1", "PATH="} {
		if !strings.Contains(out, want) {
			t.Errorf("env lacks %s:\n%s", want, out)
		}
	}
}

// The command sees the user's terminal type, not a forced TERM=dumb; and
// none when zerg has none.
func TestShellKeepsTheUsersTerminalType(t *testing.T) {
	t.Setenv("TERM", "xterm-256color")
	if _, out := (Shell{Command: "echo term=$TERM", Dir: t.TempDir()}).Run(context.Background()); !strings.Contains(out, "term=xterm-256color") {
		t.Errorf("the command saw %q", out)
	}
	os.Unsetenv("TERM")
	if _, out := (Shell{Command: "echo term=${TERM-unset}", Dir: t.TempDir()}).Run(context.Background()); !strings.Contains(out, "term=unset") {
		t.Errorf("without a TERM the command saw %q", out)
	}
}
