package container_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/claude"
)

// A podman client killed while it starts a container (the coordinator's
// death takes it by the parent-death signal) can leave runc's init waiting
// for ever for a start that never comes, in a container podman has already
// forgotten: no label or podman rm finds it. The state is made here with
// runc itself (create, never start), a container whose working directory
// is an attempt's workspace: the kill of the attempt's recorded processes
// (a resume's, zerg stop's) takes it, and leaves one in another directory.
func TestStrandedContainerInitIsKilled(t *testing.T) {
	needPodman(t) // runc comes with it
	runc, err := exec.LookPath("runc")
	if err != nil {
		t.Fatalf("runc is not installed: %v", err)
	}
	state := t.TempDir()
	ws, other := filepath.Join(t.TempDir(), "ws"), filepath.Join(t.TempDir(), "other")
	a := strandInit(t, runc, state, "zerg-e2e-ws", ws)
	b := strandInit(t, runc, state, "zerg-e2e-other", other)
	for _, c := range []struct {
		pid int
		dir string
	}{{a, ws}, {b, other}} {
		// The strand is what a killed client leaves: runc's init in the
		// container's working directory.
		if cwd, _ := os.Readlink("/proc/" + strconv.Itoa(c.pid) + "/cwd"); cwd != c.dir {
			t.Fatalf("runc init %d is in %q, want %q", c.pid, cwd, c.dir)
		}
	}
	killed := claude.KillRecorded("", nil, 2*time.Second, ws)
	if !slices.Contains(killed, a) {
		t.Fatalf("the kill of the workspace's processes signalled %v, not the stranded init %d", killed, a)
	}
	if slices.Contains(killed, b) {
		t.Fatalf("the kill signalled %d, stranded in another directory", b)
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(a) {
		if time.Now().After(deadline) {
			t.Fatalf("runc init %d still runs", a)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !alive(b) {
		t.Fatalf("runc init %d, in another directory, is gone", b)
	}
}

// strandInit creates (and never starts) a runc container whose working
// directory is dir, bound from the host at its own path as zerg's
// containers have it, and returns its init's pid.
func strandInit(t *testing.T, runc, state, id, dir string) int {
	t.Helper()
	bundle := filepath.Join(t.TempDir(), "bundle")
	rootfs := filepath.Join(bundle, "rootfs")
	for _, d := range []string{rootfs, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The host's /usr, read-only, is the root's programs (merged /usr).
	for _, l := range []string{"bin", "lib", "lib64", "sbin"} {
		if _, err := os.Stat("/usr/" + l); err == nil {
			os.Symlink("usr/"+l, filepath.Join(rootfs, l))
		}
	}
	if out, err := exec.Command(runc, "spec", "--bundle", bundle).CombinedOutput(); err != nil {
		t.Fatalf("runc spec: %v\n%s", err, out)
	}
	path := filepath.Join(bundle, "config.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	process := spec["process"].(map[string]any)
	process["terminal"], process["args"], process["cwd"] = false, []string{"/bin/true"}, dir
	spec["root"] = map[string]any{"path": rootfs, "readonly": true}
	spec["mounts"] = append(spec["mounts"].([]any),
		map[string]any{"destination": "/usr", "type": "bind", "source": "/usr", "options": []string{"rbind", "ro"}},
		map[string]any{"destination": dir, "type": "bind", "source": dir, "options": []string{"rbind", "rw"}})
	if raw, err = json.Marshal(spec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(bundle, "pid")
	// The init keeps the container's standard streams: a file, not a pipe
	// that would never see its end.
	log, err := os.Create(filepath.Join(bundle, "create.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(runc, "--root", state, "create", "--bundle", bundle, "--pid-file", pidFile, id)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		out, _ := os.ReadFile(log.Name())
		t.Fatalf("runc create: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(runc, "--root", state, "delete", "--force", id).Run() })
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// A zombie has ended; its parent has not reaped it yet.
	f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}
