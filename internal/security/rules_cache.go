package security

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// VerifyCache verifies the rules cache dest of commit against want (the
// expected checksum, "" for the manifest's own), as zerg rules verify and
// show check it: a missing cache, a failed checksum and a cache of another
// commit each say which zerg rules update fixes it.
func VerifyCache(dest, commit, want string) (Manifest, error) {
	if _, err := os.Stat(dest); errors.Is(err, fs.ErrNotExist) {
		return Manifest{}, fmt.Errorf("the rules at %s are not fetched (no %s); run zerg rules update", commit, dest)
	}
	m, err := VerifyRules(dest, want)
	if err != nil {
		return m, fmt.Errorf("%v; run zerg rules update --force to fetch them again", err)
	}
	if m.Commit != commit {
		return m, fmt.Errorf("%s holds the rules of commit %s, not %s; run zerg rules update --force", dest, m.Commit, commit)
	}
	return m, nil
}

// ResolveSource is a rules source as FetchRules takes it: a relative local
// path (./mirror) that exists under cwd made absolute, since git runs
// elsewhere; URLs, absolute paths, flags and names that do not exist are
// left as they are (ValidateSource judges them).
func ResolveSource(cwd, s string) string {
	if s == "" || filepath.IsAbs(s) || strings.Contains(s, "://") || strings.HasPrefix(s, "-") {
		return s
	}
	if _, err := os.Stat(filepath.Join(cwd, s)); err == nil {
		return filepath.Join(cwd, s)
	}
	return s
}
