package cli

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryCommandRefusesWhatConfigCheckRefuses: a config with a key set
// twice is refused by zerg config check, and by every command that reads
// the config, with the same line: none of them goes on with a guess of it
// (the defaults, or the second value).
func TestEveryCommandRefusesWhatConfigCheckRefuses(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if out, err := exec.Command("git", "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	writeFile(t, filepath.Join(dir, ".zerg", "config.yaml"), []byte("version: 1\nworkers: 2\nworkers: 7\n"))
	writeFile(t, filepath.Join(dir, ".zerg", "specs", "f", "task-graph.json"), []byte(`{"feature":"f","tasks":[
 {"id":"A","title":"a","level":1,"files":{"create":["a.txt"]},"verification":{"command":"test -s a.txt"}}]}`))
	writeFile(t, filepath.Join(dir, ".zerg", "specs", "f", "scenario.yaml"), []byte("tasks: []\n"))
	const why = "workers: set twice (first on line 2); keep one"
	for _, args := range [][]string{
		{"config", "check"},
		{"graph", "validate", "f"},
		{"graph", "validate", "--json", "f"},
		{"graph", "show", "f"},
		{"check", "f"},
		{"rush", "f", "--dry-run"},
		{"mockapi", "check", "f"},
	} {
		code, stdout, stderr := runZerg(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, why) {
			t.Errorf("zerg %s: exit %d, want %d naming %q\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, ExitUsage, why, stdout, stderr)
		}
	}
	var out bytes.Buffer
	err := runDoctor(context.Background(), newApp(&out, &out), fakeDoctorDeps(dir, false, false, "2.1.197"), "", false)
	if exitCode(err) != ExitFailed || !strings.Contains(out.String(), "FAIL    config") || !strings.Contains(out.String(), why) {
		t.Errorf("zerg doctor: exit %d, want %d with a FAIL line naming %q:\n%s", exitCode(err), ExitFailed, why, out.String())
	}
}
