package claude

import (
	"os"
	"path/filepath"
	"testing"
)

// Under go test the binary is not named zerg: the running executable is
// the hook's binary. Run as "zerg" (a testscript stand-in), the path that
// name resolves to on PATH is.
func TestHookBinary(t *testing.T) {
	if got := HookBinary("/opt/zerg/bin/zerg"); got != "/opt/zerg/bin/zerg" {
		t.Errorf("HookBinary = %q, want self", got)
	}
	self, err := ZergBinary()
	if exe, _ := os.Executable(); err != nil || self != exe {
		t.Errorf("ZergBinary = %q, %v; want the test binary %q", self, err, exe)
	}

	dir := t.TempDir()
	stand := filepath.Join(dir, "zerg")
	if err := os.WriteFile(stand, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	args := os.Args
	os.Args = append([]string{"zerg"}, args[1:]...)
	defer func() { os.Args = args }()
	if got := HookBinary("/tmp/the-test-binary"); got != stand {
		t.Errorf("run as zerg: HookBinary = %q, want %q (what zerg resolves to)", got, stand)
	}
	os.Args[0] = filepath.Join(dir, "nope", "zerg")
	if got := HookBinary("/tmp/the-test-binary"); got != "/tmp/the-test-binary" {
		t.Errorf("run as a zerg that does not resolve: HookBinary = %q, want self", got)
	}
}
