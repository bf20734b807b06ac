package run

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCheckWorker: the configured CLI when it is there, none when it is
// not (a check calls no model); the hook's zerg binary either way.
func TestCheckWorker(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := CheckWorker(bin, "/usr/local/bin/zerg")
	if w.Binary != bin || w.Hook.ZergBinary != "/usr/local/bin/zerg" {
		t.Errorf("a configured CLI: %+v", w)
	}
	w = CheckWorker(filepath.Join(t.TempDir(), "missing"), "/usr/local/bin/zerg")
	if w.Binary != "" || w.Hook.ZergBinary != "/usr/local/bin/zerg" {
		t.Errorf("a missing CLI: %+v", w)
	}
}
