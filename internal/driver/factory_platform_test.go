package driver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/container"
	"github.com/zergrush/zerg/internal/sandbox"
	"github.com/zergrush/zerg/internal/security"
)

// On an OS without sandbox mode (macOS; played here) a run in sandbox mode
// is refused before anything else is looked at, with one line that names
// the modes that do run there: no slot user, no bwrap, no fall back.
func TestSandboxModeRefusedWhereItCannotRun(t *testing.T) {
	old := sandboxSupported
	sandboxSupported = func() error { return sandbox.SupportedOn("darwin") }
	t.Cleanup(func() { sandboxSupported = old })
	cfg := config.Default()
	cfg.Mode = config.ModeSandbox
	p, err := Ready(context.Background(), Env{Feature: "f", Config: cfg})
	if err == nil || IsInputError(err) {
		t.Fatalf("err %v, want a setup error", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "mode: subprocess") || !strings.Contains(msg, "macOS") {
		t.Fatalf("the refusal is not one line naming the modes that run: %q", msg)
	}
	if p.RunAs != nil || p.box != nil {
		t.Fatal("the refusal prepared a mode")
	}
}

// Container mode on macOS (played here) is refused the same way: the
// engines there run a Linux VM, which zerg's macOS binary cannot be the
// init of. No engine is looked for.
func TestContainerModeRefusedWhereItCannotRun(t *testing.T) {
	old := containerSupported
	containerSupported = func() error { return container.SupportedOn("darwin") }
	t.Cleanup(func() { containerSupported = old })
	cfg := config.Default()
	cfg.Mode = config.ModeContainer
	p, err := Ready(context.Background(), Env{Feature: "f", Config: cfg})
	if err == nil || IsInputError(err) {
		t.Fatalf("err %v, want a setup error", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "mode: subprocess") || !strings.Contains(msg, "macOS") || strings.Contains(msg, "zerg doctor") {
		t.Fatalf("the refusal is not one line naming the modes that run: %q", msg)
	}
	if p.RunAs != nil || p.box != nil {
		t.Fatal("the refusal prepared a mode")
	}
}

func TestSetupRefusesWorkspacesTheWorkerCannotReach(t *testing.T) {
	base := t.TempDir()
	for d := base; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755) // the test's own parents, which Go makes 0700
	}
	closed := filepath.Join(base, "closed")
	os.MkdirAll(closed, 0o700)
	// A user that owns nothing here: only the "other" mode bits apply to it.
	u := &security.WorkerUser{Name: "someone", UID: 54321, GID: 54321}
	root := func() (string, error) { return filepath.Join(closed, "ws"), nil }
	err := checkSetup(root, u)
	if err == nil || !strings.Contains(err.Error(), "access to "+closed+" ") {
		t.Fatalf("err %v, want the directory named", err)
	}
	os.Chmod(closed, 0o711)
	if err := checkSetup(root, u); err != nil {
		t.Errorf("reachable directory refused: %v", err)
	}
	if err := checkSetup(root, nil); err != nil {
		t.Errorf("no worker user: %v", err)
	}
}

// TestSaidOnce: a note is said once per process, whatever asks again.
func TestSaidOnce(t *testing.T) {
	line := "zerg: .devcontainer/devcontainer.json: zerg does not honour postCreateCommand (test " + t.Name() + ")"
	if !saidOnce(line) || saidOnce(line) || saidOnce(line) {
		t.Error("the note is said more than once")
	}
}
