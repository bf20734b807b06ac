package mockapi

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRequestLogPrivate: the request log (prompts, answers) is created 0600,
// and a log an older zerg left 0644 is narrowed when appended to.
func TestRequestLogPrivate(t *testing.T) {
	dir := t.TempDir()
	fresh, old := filepath.Join(dir, "new.jsonl"), filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(old, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(old, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fresh, old} {
		srv := NewServer(nil, WithLogFile(p))
		if _, err := srv.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if err := srv.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %o, want 600", filepath.Base(p), m)
		}
	}
	if b, _ := os.ReadFile(old); string(b) != "{}\n" {
		t.Errorf("the old log lost its content: %q", b)
	}
}
