package platform

import (
	"strings"
	"testing"
)

func TestLinuxOnly(t *testing.T) {
	if err := LinuxOnly("linux", "sandbox", "x"); err != nil {
		t.Fatalf("linux: %v", err)
	}
	err := LinuxOnly("darwin", "container", "its init is Linux's")
	if err == nil {
		t.Fatal("darwin: no refusal")
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "container mode runs on Linux only (its init is Linux's); on macOS set mode: subprocess") {
		t.Fatalf("darwin: %q", msg)
	}
}
