package attempt

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/spec"
)

// The policy follows the task: its owned paths (a directory owns what is
// below it), its verification command, and the mode; it is the one the
// hook reads back from policy.json in the attempt's directory.
func TestCheckPolicy(t *testing.T) {
	ws, att := t.TempDir(), t.TempDir()
	task := &spec.Task{ID: "T1", Files: spec.Files{Create: []string{"src/a.go", "docs/"}},
		Verification: &spec.Verification{Command: "go test ./..."}}
	const zerg = "/opt/zerg/bin/zerg"
	sub, err := CheckPolicy(config.Default(), config.ModeSubprocess, task, ws, att, zerg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sub.Allow, []string{"src/a.go", "docs/"}) || sub.Workspace != ws || !slices.Equal(sub.Protected, []string{att}) {
		t.Errorf("subprocess policy: allow %q, workspace %s, protected %q", sub.Allow, sub.Workspace, sub.Protected)
	}
	if sub.Bash.Unrestricted || sub.Bash.Sandboxed || !slices.Equal(sub.Bash.Commands, []string{"go test ./..."}) || !slices.Contains(sub.Bash.Allow, "go test") {
		t.Errorf("subprocess bash policy: %+v", sub.Bash)
	}
	if !slices.Contains(sub.Bash.Allow, "go") || sub.Bash.SharedTmp != "/tmp" || !slices.Equal(sub.Bash.Scratch, []string{filepath.Join(att, "tmp")}) {
		t.Errorf("subprocess bash policy: the verification's program, the scratch space: %+v", sub.Bash)
	}
	if _, err := os.Stat(filepath.Join(att, "policy.json")); err != nil {
		t.Errorf("the policy is not in the attempt's directory: %v", err)
	}
	sb, err := CheckPolicy(config.Default(), config.ModeSandbox, task, ws, att, zerg)
	if err != nil {
		t.Fatal(err)
	}
	if !sb.Bash.Sandboxed || sb.Bash.Unrestricted || len(sb.Bash.Allow) != 0 || !slices.Equal(sb.Allow, sub.Allow) {
		t.Errorf("sandbox policy: allow %q, bash %+v", sb.Allow, sb.Bash)
	}

	// The config's worker_policy reaches the hook, as in a worker's launch.
	cfg := config.Default()
	cfg.WorkerPolicy.DenyCommands = []string{"gofmt"}
	if p, err := CheckPolicy(cfg, config.ModeSubprocess, task, ws, att, zerg); err != nil || !slices.Contains(p.Bash.Deny, "gofmt") {
		t.Errorf("worker_policy.deny_commands: %v, bash %+v", err, p.Bash)
	}

	// An attempt dir inside the workspace is refused, as a launch would be;
	// so is a hook without an absolute zerg binary.
	if _, err := CheckPolicy(config.Default(), config.ModeSandbox, task, ws, filepath.Join(ws, "att"), zerg); err == nil {
		t.Error("an attempt dir inside the workspace was accepted")
	}
	if _, err := CheckPolicy(config.Default(), config.ModeSandbox, task, ws, att, "zerg"); err == nil {
		t.Error("a relative zerg binary was accepted")
	}
}
