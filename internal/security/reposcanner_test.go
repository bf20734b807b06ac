package security

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The repository's allowlist applies; one that cannot be used is
// ErrBadAllowlist with its own message, whether it does not parse or
// cannot be read.
func TestRepoScanner(t *testing.T) {
	root := t.TempDir()
	c := secretCorpus(1)[0]
	diff := newFileDiff(c.path, c.content)
	s, err := RepoScanner(root)
	if err != nil {
		t.Fatal(err)
	}
	found := s.ScanDiff(diff)
	if len(found) == 0 {
		t.Fatalf("no allowlist: %s not found", c.path)
	}
	allow := filepath.Join(root, filepath.FromSlash(SecretsAllowFile))
	if err := os.MkdirAll(filepath.Dir(allow), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(allow, []byte(found[0].Fingerprint+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err = RepoScanner(root); err != nil || len(s.ScanDiff(diff)) != len(found)-1 {
		t.Fatalf("allowlisted %s: %v, the finding is still there", found[0].Fingerprint, err)
	}

	if err := os.WriteFile(allow, []byte("nonsense here and there\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = RepoScanner(root)
	if !errors.Is(err, ErrBadAllowlist) || !strings.Contains(err.Error(), SecretsAllowFile+":1:") {
		t.Errorf("an allowlist that does not parse: %v", err)
	}
	if err := os.Remove(allow); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(allow, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = RepoScanner(root)
	if !errors.Is(err, ErrBadAllowlist) || strings.Contains(err.Error(), ErrBadAllowlist.Error()) {
		t.Errorf("an allowlist that cannot be read: %v, want ErrBadAllowlist with the read's own message", err)
	}
}
