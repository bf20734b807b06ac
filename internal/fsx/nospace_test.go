package fsx

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A durable write that meets a full disk (its fsync fails with ENOSPC, as
// a delayed allocation does) is written once there is room and leaves no
// temporary file behind; a cache write does not wait. Control: with too few
// tries the write fails, and the old content is still there.
func TestDurableWriteWaitsForRoom(t *testing.T) {
	defer func(w time.Duration, n int) { NoSpaceWait, NoSpaceTries = w, n }(NoSpaceWait, NoSpaceTries)
	NoSpaceWait = time.Millisecond
	old := syncFile
	t.Cleanup(func() { syncFile = old })
	for _, c := range []struct {
		name  string
		tries int
		ok    bool
	}{
		{"room after three tries", 10, true},
		{"no room in time (control)", 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			NoSpaceTries = c.tries
			full := 3
			syncFile = func(f *os.File) error {
				if fi, err := f.Stat(); err == nil && !fi.IsDir() && full > 0 {
					full--
					return syscall.ENOSPC
				}
				return f.Sync()
			}
			dir := t.TempDir()
			p := filepath.Join(dir, "anchor")
			if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			err := WritePrivate(p, []byte("new"))
			if (err == nil) != c.ok {
				t.Fatalf("write on a full disk: %v", err)
			}
			if err != nil && !IsNoSpace(err) {
				t.Errorf("the error %v does not say the disk is full", err)
			}
			want := "new"
			if !c.ok {
				want = "old"
			}
			if b, _ := os.ReadFile(p); string(b) != want {
				t.Errorf("content %q, want %q", b, want)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("the directory holds %d files, want only the anchor: %v", len(ents), ents)
			}
		})
	}
}

func TestIsNoSpace(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, true},
		{syscall.EDQUOT, true},
		{syscall.EACCES, false},
		{nil, false},
	} {
		if got := IsNoSpace(c.err); got != c.want {
			t.Errorf("IsNoSpace(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
