package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/sandbox"
)

func TestCheck(t *testing.T) {
	needBwrap(t)
	if err := sandbox.Check(context.Background(), testUID, testGID); err != nil {
		t.Fatalf("Check on this machine: %v", err)
	}
}

func TestCheckRefusesRoot(t *testing.T) {
	needBwrap(t)
	if os.Geteuid() != 0 {
		t.Skip("only root can be refused")
	}
	if err := sandbox.Check(context.Background(), 0, 0); err == nil || !strings.Contains(err.Error(), "root") {
		t.Fatalf("Check as root: %v", err)
	}
}

// The sandbox's user must reach the zerg binary; a private directory stops
// it, and sandbox.Check says so.
func TestCheckUnreachableBinary(t *testing.T) {
	needBwrap(t)
	if testUID == 0 {
		t.Skip("needs root: the binary is hidden from another user")
	}
	dir := t.TempDir() // 0700, root's
	exe := filepath.Join(dir, "zerg")
	if err := os.WriteFile(exe, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := sandbox.Executable
	sandbox.Executable = func() (string, error) { return exe, nil }
	defer func() { sandbox.Executable = old }()
	err := sandbox.Check(context.Background(), testUID, testGID)
	if err == nil || !strings.Contains(err.Error(), "cannot reach the zerg binary") {
		t.Fatalf("Check with an unreachable binary: %v", err)
	}
}
