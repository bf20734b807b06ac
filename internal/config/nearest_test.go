package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The nearest config above the directory is loaded; none is nil, nil; one
// that does not load is its error, not a fall back to the defaults.
func TestLoadNearest(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	at := func(dir string) func() (string, error) { return func() (string, error) { return dir, nil } }
	if cfg, err := LoadNearest(at(sub)); cfg != nil || err != nil {
		t.Fatalf("no config: %v, %v", cfg, err)
	}
	if cfg, err := LoadNearest(func() (string, error) { return "", errors.New("gone") }); cfg != nil || err != nil {
		t.Fatalf("no working directory: %v, %v", cfg, err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".zerg"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, ".zerg", "config.yaml")
	if err := os.WriteFile(file, []byte("version: 1\nmode: subprocess\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadNearest(at(sub))
	if err != nil || cfg == nil || cfg.Mode != "subprocess" {
		t.Fatalf("config above: %+v, %v", cfg, err)
	}
	if err := os.WriteFile(file, []byte("version: 1\nmode: nope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err := LoadNearest(at(sub)); cfg != nil || err == nil {
		t.Fatalf("a config that does not load: %v, %v", cfg, err)
	}
}
