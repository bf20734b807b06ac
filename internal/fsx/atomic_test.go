package fsx

import (
	"os"
	"path/filepath"
	"testing"
)

// syncLog records what syncFile was called on and what path held then.
type syncLog struct {
	path  string
	calls []string // "file:<content of path then>" or "dir"
}

func (l *syncLog) install(t *testing.T) {
	t.Helper()
	old := syncFile
	t.Cleanup(func() { syncFile = old })
	syncFile = func(f *os.File) error {
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if fi.IsDir() {
			l.calls = append(l.calls, "dir")
		} else {
			b, _ := os.ReadFile(l.path)
			l.calls = append(l.calls, "file:"+string(b))
		}
		return f.Sync()
	}
}

// TestWriteFileAtomicSyncs: the durable writes fsync the new file while
// path still holds the old content (before the rename) and the directory
// after it; the cache write fsyncs nothing.
func TestWriteFileAtomicSyncs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(path string, data []byte, perm os.FileMode) error
		want  []string
	}{
		{"WriteFileAtomic", WriteFileAtomic, []string{"file:old", "dir"}},
		{"WriteFileAtomicMode", WriteFileAtomicMode, []string{"file:old", "dir"}},
		{"WritePrivate", func(p string, b []byte, _ os.FileMode) error { return WritePrivate(p, b) }, []string{"file:old", "dir"}},
		{"WriteCacheFile", WriteCacheFile, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			l := &syncLog{path: p}
			l.install(t)
			if err := tc.write(p, []byte("new"), 0o644); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(p); string(b) != "new" {
				t.Errorf("content %q, want new", b)
			}
			if len(l.calls) != len(tc.want) {
				t.Fatalf("syncs %q, want %q", l.calls, tc.want)
			}
			for i := range tc.want {
				if l.calls[i] != tc.want[i] {
					t.Fatalf("syncs %q, want %q", l.calls, tc.want)
				}
			}
		})
	}
}

// TestWriteFileAtomicModes: WriteFileAtomic keeps an existing file's mode
// and gives a new one perm; WriteFileAtomicMode and WriteCacheFile give
// exactly perm, whatever the umask or the old mode.
func TestWriteFileAtomicModes(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing")
	if err := os.WriteFile(existing, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(existing, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(existing, []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m := modeOf(t, existing); m != 0o600 {
		t.Errorf("WriteFileAtomic over a 0600 file: %o, want 600 kept", m)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "new"), []byte("y"), 0o640); err != nil {
		t.Fatal(err)
	}
	if m := modeOf(t, filepath.Join(dir, "new")); m != 0o640 {
		t.Errorf("WriteFileAtomic of a new file: %o, want 640", m)
	}
	for name, w := range map[string]func(string, []byte, os.FileMode) error{"mode": WriteFileAtomicMode, "cache": WriteCacheFile} {
		if err := w(existing, []byte("z"), 0o755); err != nil {
			t.Fatal(err)
		}
		if m := modeOf(t, existing); m != 0o755 {
			t.Errorf("%s over a 0600 file: %o, want exactly 755", name, m)
		}
		if err := os.Chmod(existing, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWriteFileAtomicFailureLeavesNothing: a rename that fails (path is a
// directory) leaves the directory as it was and no temporary file.
func TestWriteFileAtomicFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "d")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "inside"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomicMode(target, []byte("x"), 0o644); err == nil {
		t.Fatal("replacing a non-empty directory succeeded")
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "d" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left %q, want only d", names)
	}
}
