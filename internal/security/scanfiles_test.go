package security

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestScanStaged(t *testing.T) {
	s := sharedScanner(t)
	w := newCheckRepo(t)
	w.run("add", "-A")
	w.run("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "base")
	ctx := context.Background()

	res, err := s.ScanStaged(ctx, w.dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Findings == nil || len(res.Findings) != 0 || res.Files != 0 {
		t.Fatalf("nothing staged: %+v, want no findings (an empty list) in 0 files", res)
	}

	c := secretCorpus(3)[0] // an AWS access key id
	w.write(c.path, c.content)
	w.write("notes.txt", "nothing to see\n")
	w.run("add", "-A")
	res, err = s.ScanStaged(ctx, w.dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 2 || len(res.Findings) != 1 || res.Findings[0].File != c.path {
		t.Fatalf("staged %s and notes.txt: %+v, want one finding in %s, 2 files", c.path, res, c.path)
	}
	if leaks(res.Findings[0].String(), c.secret) {
		t.Fatalf("the finding shows the secret: %s", res.Findings[0])
	}

	if _, err := s.ScanStaged(ctx, t.TempDir()); err == nil {
		t.Fatal("a directory outside any repository scanned without an error")
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.ScanStaged(canceled, w.dir); !errors.Is(err, context.Canceled) {
		t.Fatalf("a canceled scan: %v, want context.Canceled", err)
	}
}

func TestReadScannable(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name    string
		content []byte
		why     string
	}{
		{"text", []byte("hello\n"), ""},
		{"empty", nil, ""},
		{"binary", []byte("ab\x00cd"), "binary"},
		{"late-nul", append(bytes.Repeat([]byte("a"), 8000), 0), ""},
		{"big", bytes.Repeat([]byte("x"), MaxScanFileSize+1), "larger than 1 MiB"},
		{"at-limit", bytes.Repeat([]byte("x"), MaxScanFileSize), ""},
	} {
		b, why := ReadScannable(write(c.name, c.content))
		if why != c.why {
			t.Errorf("%s: skipped because %q, want %q", c.name, why, c.why)
		}
		if why == "" && !bytes.Equal(b, c.content) {
			t.Errorf("%s: read %d bytes, want %d", c.name, len(b), len(c.content))
		}
	}
	if _, why := ReadScannable(filepath.Join(dir, "missing")); why == "" || why[:12] != "cannot read:" {
		t.Errorf("a missing file: %q, want cannot read: ...", why)
	}
}
