package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadOrDefault(t *testing.T) {
	dir := t.TempDir()
	cfg, err := LoadOrDefault(filepath.Join(dir, "none.yaml"))
	if err != nil || !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("missing file: %+v, %v; want the defaults", cfg, err)
	}
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("version: 1\nmode: subprocess\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err := LoadOrDefault(good); err != nil || cfg.Mode != ModeSubprocess {
		t.Errorf("a file: mode %q, %v; want the file's subprocess", cfg.Mode, err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("version: 1\nmode: nope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ce *Error
	if _, err := LoadOrDefault(bad); !errors.As(err, &ce) || !strings.Contains(err.Error(), bad) {
		t.Errorf("an invalid file: %v; want Load's *Error naming %s", err, bad)
	}
	// A directory is there: not the defaults, an error.
	if _, err := LoadOrDefault(dir); err == nil {
		t.Error("a directory gave a config")
	}
}
