package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/sandbox/sandboxtest"
)

// fakeBwrap puts a bwrap script first on PATH.
func fakeBwrap(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	if err := sandboxtest.Open(dir); err != nil { // the sandbox's user runs it
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bwrap"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
}

func TestCheckOldBwrap(t *testing.T) {
	fakeBwrap(t, `echo "bubblewrap 0.7.0"`)
	err := Check(context.Background(), testUID, testGID)
	if err == nil || !strings.Contains(err.Error(), "0.7.0") || !strings.Contains(err.Error(), "0.8.0 or later") {
		t.Fatalf("Check with bwrap 0.7.0: %v", err)
	}
}

func TestCheckNoBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := Check(context.Background(), testUID, testGID)
	if err == nil || !strings.Contains(err.Error(), "apt-get install bubblewrap") {
		t.Fatalf("Check without bwrap: %v", err)
	}
}

// bwrap failing the way it does where user namespaces are off.
func TestCheckNoUserNamespaces(t *testing.T) {
	fakeBwrap(t, `case "$1" in --version) echo "bubblewrap 0.8.0";; *) echo "bwrap: No permission to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2; exit 1;; esac`)
	err := Check(context.Background(), testUID, testGID)
	if err == nil || !strings.Contains(err.Error(), "No permission to create new namespace") || !strings.Contains(err.Error(), "max_user_namespaces") {
		t.Fatalf("Check without user namespaces: %v", err)
	}
}
