package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadAs(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadAs(filepath.Join(dir, "missing.yaml"), "shown.yaml")
	if !errors.Is(err, fs.ErrNotExist) || err.Error() != "shown.yaml does not exist; run zerg init to create it: file does not exist" {
		t.Errorf("missing file: %v", err)
	}
	if _, err := LoadAs(dir, "d"); err == nil || err.Error() != "d is a directory, not a config file" {
		t.Errorf("directory: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("workers: -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadAs(bad, "bad-shown.yaml")
	var ce *Error
	if !errors.As(err, &ce) || len(ce.Problems) == 0 || !strings.Contains(ce.Problems[0].String(), "bad-shown.yaml") {
		t.Errorf("invalid file: %v, want an *Error naming the display path", err)
	}
}

func TestLoadRepo(t *testing.T) {
	root := t.TempDir()
	cfg, err := LoadRepo(root)
	if err != nil || cfg.SecurityRules != Default().SecurityRules {
		t.Fatalf("no config: %+v, %v; want the defaults", cfg.SecurityRules, err)
	}
	path := filepath.Join(root, filepath.FromSlash(FileName))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("security_rules:\n  enabled: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err = LoadRepo(root)
	if err != nil || cfg.SecurityRules.Enabled {
		t.Fatalf("config disabling the rules: %+v, %v", cfg.SecurityRules, err)
	}
}

func TestLocate(t *testing.T) {
	noRepo := func() (string, error) {
		t.Error("the repository was looked up although --file was given")
		return "", errors.New("no repository")
	}
	if p, d, err := Locate("/work/sub", "c.yaml", noRepo); err != nil || p != filepath.Join("/work/sub", "c.yaml") || d != "c.yaml" {
		t.Errorf("relative --file: %s %s %v", p, d, err)
	}
	if p, d, err := Locate("/work/sub", "/etc/c.yaml", noRepo); err != nil || p != "/etc/c.yaml" || d != "/etc/c.yaml" {
		t.Errorf("absolute --file: %s %s %v", p, d, err)
	}
	repo := func() (string, error) { return "/work", nil }
	want := filepath.Join("/work", filepath.FromSlash(FileName))
	if p, d, err := Locate("/work/sub", "", repo); err != nil || p != want || d != filepath.Join("..", filepath.FromSlash(FileName)) {
		t.Errorf("repository file: %s %s %v", p, d, err)
	}
	failed := errors.New("not a repository")
	if _, _, err := Locate("/x", "", func() (string, error) { return "", failed }); err != failed {
		t.Errorf("repository lookup error: %v, want it returned as is", err)
	}
}
