package sandbox

import (
	"strings"
	"testing"
)

func TestSupportedOn(t *testing.T) {
	if err := SupportedOn("linux"); err != nil {
		t.Fatalf("linux: %v", err)
	}
	err := SupportedOn("darwin")
	if err == nil {
		t.Fatal("darwin: sandbox mode accepted")
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "macOS") || !strings.Contains(msg, "mode: subprocess") {
		t.Fatalf("darwin: %q", msg)
	}
}
