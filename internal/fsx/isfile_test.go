package fsx

import (
	"os"
	"path/filepath"
	"testing"
)

func TestIsFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{f: true, filepath.Join(dir, "link"): true, dir: false, filepath.Join(dir, "none"): false} {
		if got := IsFile(p); got != want {
			t.Errorf("IsFile(%s) = %v, want %v", p, got, want)
		}
	}
}
