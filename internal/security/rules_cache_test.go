package security

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// VerifyCache says what is wrong with a cache and which update fixes it.
func TestVerifyCache(t *testing.T) {
	t.Parallel()
	dest, m := fetchSnapshot(t)
	if got, err := VerifyCache(dest, m.Commit, m.Checksum); err != nil || got.Checksum != m.Checksum {
		t.Fatalf("intact cache: %+v, %v", got, err)
	}
	missing := filepath.Join(t.TempDir(), "none")
	if _, err := VerifyCache(missing, m.Commit, ""); err == nil || err.Error() != "the rules at "+m.Commit+" are not fetched (no "+missing+"); run zerg rules update" {
		t.Errorf("missing cache: %v", err)
	}
	other := strings.Repeat("b", 40)
	if _, err := VerifyCache(dest, other, ""); err == nil || err.Error() != dest+" holds the rules of commit "+m.Commit+", not "+other+"; run zerg rules update --force" {
		t.Errorf("cache of another commit: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dest, "rules", "_core", "evil.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyCache(dest, m.Commit, m.Checksum); err == nil || !strings.HasSuffix(err.Error(), "; run zerg rules update --force to fetch them again") {
		t.Errorf("edited cache: %v", err)
	}
}

func TestResolveSource(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	if err := os.Mkdir(filepath.Join(cwd, "mirror"), 0o755); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"":                         "",
		"mirror":                   filepath.Join(cwd, "mirror"),
		"./mirror":                 filepath.Join(cwd, "mirror"),
		"absent":                   "absent",
		"/abs/rules":               "/abs/rules",
		"https://github.com/x/y":   "https://github.com/x/y",
		"-uupload-pack=touch pwnd": "-uupload-pack=touch pwnd",
	} {
		if got := ResolveSource(cwd, in); got != want {
			t.Errorf("ResolveSource(%q) = %q, want %q", in, got, want)
		}
	}
}
