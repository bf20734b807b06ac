package fsx

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func modeOf(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestPrivateDir: every directory PrivateDir creates is 0700 whatever the
// umask; a directory that existed keeps its mode.
func TestPrivateDir(t *testing.T) {
	old := syscall.Umask(0o222) // would make a plain MkdirAll(0700) 0500
	defer syscall.Umask(old)
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(root, "a", "b", "c")
	if err := PrivateDir(deep); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(root, "a"), filepath.Join(root, "a", "b"), deep} {
		if m := modeOf(t, d); m != 0o700 {
			t.Errorf("%s: mode %o, want 700", d, m)
		}
	}
	if m := modeOf(t, root); m != 0o755 {
		t.Errorf("the existing parent became %o, want it kept at 755", m)
	}
	// An existing directory is left alone, and calling again is fine.
	shared := filepath.Join(root, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := PrivateDir(shared); err != nil {
		t.Fatal(err)
	}
	if m := modeOf(t, shared); m != 0o755 {
		t.Errorf("existing dir became %o, want 755", m)
	}
	if err := PrivateDir(deep); err != nil {
		t.Fatal(err)
	}
	// A file in the way is an error.
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := PrivateDir(filepath.Join(file, "x")); err == nil {
		t.Error("PrivateDir under a regular file succeeded")
	}
}

// TestWritePrivate: a new file is 0600, and so is a file that existed with a
// wider mode (WriteFileAtomic would have kept 0644).
func TestWritePrivate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "live.json")
	if err := WritePrivate(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if m := modeOf(t, p); m != 0o600 {
		t.Errorf("new file: mode %o, want 600", m)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WritePrivate(p, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if m := modeOf(t, p); m != 0o600 {
		t.Errorf("rewritten 0644 file: mode %o, want 600", m)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("content %q, want two", b)
	}
	if err := WritePrivate(filepath.Join(dir, "missing", "x"), nil); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

// TestOpenPrivate: created 0600; an existing world-readable file is narrowed
// and keeps its content when appended to; CreatePrivate truncates.
func TestOpenPrivate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "stream.jsonl")
	f, err := CreatePrivate(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("first\n")
	f.Close()
	if m := modeOf(t, p); m != 0o600 {
		t.Errorf("created: mode %o, want 600", m)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err = AppendPrivate(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("second\n")
	f.Close()
	if m := modeOf(t, p); m != 0o600 {
		t.Errorf("appended to a 0644 file: mode %o, want 600", m)
	}
	if b, _ := os.ReadFile(p); string(b) != "first\nsecond\n" {
		t.Errorf("after append: %q", b)
	}
	if err := os.Chmod(p, 0o664); err != nil {
		t.Fatal(err)
	}
	f, err = CreatePrivate(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, _ := os.ReadFile(p); len(b) != 0 {
		t.Errorf("CreatePrivate kept %q", b)
	}
	if m := modeOf(t, p); m != 0o600 {
		t.Errorf("recreated 0664 file: mode %o, want 600", m)
	}
}

// TestNarrow: group and other bits go, the owner's stay; a private or
// missing path is left alone.
func TestNarrow(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "events.jsonl.lock")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, want os.FileMode }{{0o644, 0o600}, {0o755, 0o700}, {0o400, 0o400}, {0o666, 0o600}} {
		if err := os.Chmod(p, c.from); err != nil {
			t.Fatal(err)
		}
		if err := Narrow(p); err != nil {
			t.Fatal(err)
		}
		if m := modeOf(t, p); m != c.want {
			t.Errorf("Narrow of a %o file: %o, want %o", c.from, m, c.want)
		}
	}
	if err := Narrow(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("Narrow of a missing file: %v", err)
	}
}
