package container_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/container"
	"github.com/zergrush/zerg/internal/sandbox"
	"github.com/zergrush/zerg/internal/sandbox/sandboxtest"
	"golang.org/x/sys/unix"
)

// boxFor is a Box of the test image whose init is a zerg built from this
// checkout, and a workspace (owned by the worker uid) to run in.
func boxFor(t *testing.T) (container.Box, sandbox.Spec) {
	t.Helper()
	rt := needPodman(t)
	bin, cleanup, err := sandboxtest.BuildZerg()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	old := sandbox.Executable
	sandbox.Executable = func() (string, error) { return bin, nil }
	t.Cleanup(func() { sandbox.Executable = old })
	uid, gid, err := sandboxtest.User()
	if err != nil {
		t.Fatal(err)
	}
	if uid == 0 {
		uid, gid = os.Getuid(), os.Getgid()
	}
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := sandboxtest.Open(ws); err != nil {
		t.Fatal(err)
	}
	os.Chown(ws, uid, gid)
	return container.Box{Runtime: rt, Image: TestImage, Run: "e2e-" + t.Name()},
		sandbox.Spec{Workdir: ws, UID: uid, GID: gid, Env: []string{"HOME=" + ws},
			Limits: sandbox.Limits{MemoryBytes: 256 << 20, Processes: 256, OpenFiles: 1024}}
}

func runIn(t *testing.T, b container.Box, s sandbox.Spec, script string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, done, err := b.Command(ctx, s, "/bin/sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	done()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String()
}

// What a container promises, each observed from inside: the worker's uid,
// no capabilities, no_new_privs, only lo, a read-only root, nothing of
// zerg's environment, no AF_UNIX socket, the command's exit status.
func TestContainerIsolation(t *testing.T) {
	b, s := boxFor(t)
	t.Setenv("ZERG_TEST_SECRET", "sk-ant-not-for-workers")
	// Split so that zerg's own secret scan of this source sees no URL
	// with a password in it.
	t.Setenv("HTTPS_PROXY", "http://user:"+"zerg-test-proxy-password"+"@proxy.invalid:3128")
	code, out := runIn(t, b, s, `
id -u; grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status
echo "ifaces: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')"
touch /usr/zerg-x 2>/dev/null && echo "root writable"
env | grep -q ZERG_TEST_SECRET && echo "secret in env"
env | grep -q zerg-test-proxy-password && echo "proxy credentials in env"
python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>/dev/null && echo "unix socket opened"
touch "$HOME/ok" && echo "workspace writable"
exit 7`)
	if code != 7 {
		t.Errorf("exit %d, want the command's 7\n%s", code, out)
	}
	for _, want := range []string{strconv.Itoa(s.UID) + "\n", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000",
		"NoNewPrivs:\t1", "ifaces: lo \n", "workspace writable"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"root writable", "secret in env", "proxy credentials in env", "unix socket opened"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s:\n%s", bad, out)
		}
	}
}

// The kernel's OOM kill in the container's cgroup is reported by the
// init's exit code; the control, well under the limit, exits 0.
func TestContainerReportsOOM(t *testing.T) {
	b, s := boxFor(t)
	s.Limits.MemoryBytes = 64 << 20
	if code, out := runIn(t, b, s, `python3 -c 'x = bytearray(8 << 20)'`); code != 0 {
		t.Fatalf("control: exit %d\n%s", code, out)
	}
	code, out := runIn(t, b, s, `python3 -c 'x = bytearray(300 << 20)'`)
	if code != sandbox.ExitOutOfMemory || !strings.Contains(out, "passed the memory limit") {
		t.Errorf("exit %d, want %d and the init's line\n%s", code, sandbox.ExitOutOfMemory, out)
	}
}

// A container ends when the holder of its lifeline is gone, as a
// SIGKILLed coordinator's would; while the holder lives, it runs on.
func TestContainerEndsWithItsLifeline(t *testing.T) {
	b, s := boxFor(t)
	fifo := filepath.Join(t.TempDir(), "lifeline")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(fifo, 0o644)
	sandboxtest.Open(filepath.Dir(fifo))
	// The holder: another process with the FIFO open read-write, as zerg
	// holds it.
	holder := exec.Command("sh", "-c", "exec 3<>"+fifo+"; exec sleep 600")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	time.Sleep(200 * time.Millisecond)
	b.Lifeline = fifo
	cmd, done, err := b.Command(context.Background(), s, "/bin/sleep", "600")
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	select {
	case err := <-ended:
		t.Fatalf("the container ended while its lifeline's holder lives: %v", err)
	case <-time.After(3 * time.Second):
	}
	holder.Process.Signal(syscall.SIGKILL)
	holder.Wait()
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the container outlived its lifeline's holder")
	}
	done()
}

// A container whose client was killed runs on (the engine keeps it);
// Reap finds it by the run's label and removes it.
func TestReapByLabel(t *testing.T) {
	b, s := boxFor(t)
	b.Run = fmt.Sprintf("e2e-reap-%d", os.Getpid())
	cmd, _, err := b.Command(context.Background(), s, "/bin/sleep", "600")
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	listed := func() int {
		out, err := b.Runtime.Output(ctx, "ps", "-q", "--filter", "label="+container.LabelRun+"="+b.Run)
		if err != nil {
			t.Fatal(err)
		}
		return len(strings.Fields(string(out)))
	}
	for deadline := time.Now().Add(30 * time.Second); listed() == 0; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the container never started")
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	time.Sleep(time.Second)
	if listed() != 1 {
		t.Fatal("the killed client's container is gone by itself: the reap checks nothing")
	}
	n, err := b.Runtime.Reap(ctx, b.Run)
	if err != nil || n != 1 || listed() != 0 {
		t.Errorf("Reap: %d, %v; %d left", n, err, listed())
	}
}
