package container

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/sandbox"
)

// hasSeq reports whether args holds want as consecutive elements.
func hasSeq(args []string, want ...string) bool {
	for i := 0; i+len(want) <= len(args); i++ {
		if slices.Equal(args[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

func testSpec(t *testing.T) sandbox.Spec {
	dir := t.TempDir()
	for _, d := range []string{"ws", "home", "cache", "ro"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return sandbox.Spec{Workdir: filepath.Join(dir, "ws"), Home: filepath.Join(dir, "home"),
		Writable: []string{filepath.Join(dir, "cache")}, ReadOnly: []string{filepath.Join(dir, "ro")},
		Hide: []string{"/root"}, UID: 1001, GID: 1001,
		Env:    []string{"ANTHROPIC_API_KEY=sk-ant-zerg-sandbox-placeholder", "PATH=/home/u/go/bin:/usr/bin"},
		Limits: sandbox.Limits{MemoryBytes: 512 << 20, Processes: 100, CPUSeconds: 60, OpenFiles: 256}}
}

// The run arguments carry every isolation the mode promises; each check
// names the flag, so a dropped one fails here.
func TestRunArgsIsolation(t *testing.T) {
	s := testSpec(t)
	exe, _ := os.Executable()
	b := Box{Runtime: Runtime{Name: Podman}, Image: "localhost/img:1", Run: "/repo/.zerg/runs/f"}
	args, err := b.runArgs(s, "zerg-x", "/tmp/envfile", exe, []string{"/bin/sh", "-c", "true"})
	if err != nil {
		t.Fatal(err)
	}
	real := func(p string) string { r, _ := filepath.EvalSymlinks(p); return r }
	for _, want := range [][]string{
		{"--network", "none"}, {"--read-only"}, {"--cap-drop", "ALL"}, {"--security-opt", "no-new-privileges"},
		{"--user", "1001:1001"}, {"--pull", "never"}, {"--env-file", "/tmp/envfile"}, {"--label", LabelRun + "=/repo/.zerg/runs/f"},
		{"--memory", "536870912"}, {"--pids-limit", "100"}, {"--ulimit", "nofile=256:256"}, {"--read-only-tmpfs=false", "--http-proxy=false"},
		{"--tmpfs", "/tmp:rw,nosuid,nodev,mode=1777,size=536870912"},
		{"-v", real(s.Workdir) + ":" + real(s.Workdir) + ":rw"}, {"-v", real(s.Home) + ":" + real(s.Home) + ":rw"},
		{"-v", real(s.Writable[0]) + ":" + real(s.Writable[0]) + ":rw"}, {"-v", real(s.ReadOnly[0]) + ":" + real(s.ReadOnly[0]) + ":ro"},
		{"-v", real(exe) + ":" + sandbox.InsideExecutable + ":ro"},
		{"--entrypoint", sandbox.InsideExecutable}, {"localhost/img:1", sandbox.InitCommand},
		{"--cpu-seconds", "60", "--open-files", "256", "--", "/bin/sh", "-c", "true"},
	} {
		if !hasSeq(args, want...) {
			t.Errorf("run arguments lack %q:\n%q", want, args)
		}
	}
	joined := strings.Join(args, " ")
	// The environment is in the file only; the host's PATH nowhere; a
	// hidden directory is simply not there; the data-segment limit is the
	// cgroup's, not each process's.
	for _, bad := range []string{"sk-ant", "/home/u/go/bin", "/root", "--memory-bytes"} {
		if strings.Contains(joined, bad) {
			t.Errorf("run arguments contain %q:\n%s", bad, joined)
		}
	}
	if env := b.env(s.Env); !slices.Contains(env, "PATH="+DefaultPath) || slices.Contains(env, "PATH=/home/u/go/bin:/usr/bin") {
		t.Errorf("container env = %q: want the image's PATH", env)
	}
}

func TestRunArgsProxyAndRootless(t *testing.T) {
	s := testSpec(t)
	sock := filepath.Join(t.TempDir(), "s")
	os.WriteFile(sock, nil, 0o600)
	s.ProxySocket = sock
	exe, _ := os.Executable()
	b := Box{Runtime: Runtime{Name: Podman, Rootless: true}, Image: "img"}
	args, err := b.runArgs(s, "n", "/e", exe, []string{"/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := filepath.EvalSymlinks(sock)
	if !hasSeq(args, "-v", r+":"+sandbox.InsideProxy+":ro") || !hasSeq(args, "--proxy", sandbox.InsideProxy) {
		t.Errorf("no proxy socket: %q", args)
	}
	if !hasSeq(args, "--userns", "keep-id") || hasSeq(args, "--user", "1001:1001") {
		t.Errorf("rootless: want keep-id as zerg's own user: %q", args)
	}
}

func TestRunArgsRefusals(t *testing.T) {
	exe, _ := os.Executable()
	b := Box{Runtime: Runtime{Name: Docker}, Image: "img"}
	for name, edit := range map[string]func(*sandbox.Spec){
		"root": func(s *sandbox.Spec) { s.UID, s.GID = 0, 0 },
		"colon in path": func(s *sandbox.Spec) {
			d := filepath.Join(s.Workdir, "a:b")
			os.Mkdir(d, 0o755)
			s.Writable = append(s.Writable, d)
		},
		"missing path":    func(s *sandbox.Spec) { s.ReadOnly = append(s.ReadOnly, "/no/such/dir") },
		"under /run/zerg": func(s *sandbox.Spec) { s.ReadOnly = append(s.ReadOnly, "/run/zerg") },
		"negative limit":  func(s *sandbox.Spec) { s.Limits.Processes = -1 },
	} {
		s := testSpec(t)
		edit(&s)
		if _, err := b.runArgs(s, "n", "/e", exe, []string{"/bin/true"}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := b.runArgs(testSpec(t), "n", "/e", exe, []string{"true"}); err == nil {
		t.Error("a relative command was accepted")
	}
}

func TestEnvFile(t *testing.T) {
	f, err := writeEnvFile([]string{"A=1", "B=x y"})
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f)
	fi, _ := os.Stat(f)
	b, _ := os.ReadFile(f)
	if fi.Mode().Perm() != 0o600 || string(b) != "A=1\nB=x y\n" {
		t.Errorf("env file %v %q", fi.Mode(), b)
	}
	if _, err := writeEnvFile([]string{"A=1\nB=2"}); err == nil {
		t.Error("a value with a newline was written (it would set another variable)")
	}
}

// The engine's client gets what it needs to find its engine, not the API
// key or anything else of zerg's environment.
func TestClientEnv(t *testing.T) {
	got := clientEnv([]string{"PATH=/bin", "ANTHROPIC_API_KEY=sk-ant-x", "XDG_RUNTIME_DIR=/run/user/1", "DOCKER_HOST=unix:///x",
		"HTTPS_PROXY=http://u:p@proxy", "CONTAINERS_STORAGE_CONF=/s"})
	want := []string{"PATH=/bin", "XDG_RUNTIME_DIR=/run/user/1", "DOCKER_HOST=unix:///x", "CONTAINERS_STORAGE_CONF=/s"}
	if !slices.Equal(got, want) {
		t.Errorf("clientEnv = %q, want %q", got, want)
	}
}
