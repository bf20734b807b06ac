package projectinit

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strings"
)

// GitignoreEntries are the paths zerg writes that must never be committed:
// run state (event logs, attempts, worker config dirs) and re-creatable
// caches such as the fetched security rules.
var GitignoreEntries = []string{".zerg/runs/", ".zerg/cache/", ".zerg/tasks/", ".zerg/audit.jsonl*"}

// GitignoreHeader is the comment above the entries zerg adds, written once.
const GitignoreHeader = "# zerg: run state and caches (added by zerg init)"

// CheckGitignore rejects a .gitignore that is not a regular file: init
// appends to it.
func CheckGitignore(root string) error {
	fi, err := os.Stat(abs(root, ".gitignore"))
	if err == nil && !fi.Mode().IsRegular() {
		return errors.New(".gitignore exists but is not a regular file; move it away and run zerg init again")
	}
	return nil
}

// UpdateGitignore appends the GitignoreEntries the file lacks, in its own
// line endings, and leaves every existing byte as it was.
func UpdateGitignore(root string) (Outcome, error) {
	path := abs(root, ".gitignore")
	old, err := os.ReadFile(path)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Outcome{}, err
	}
	missing := MissingIgnoreEntries(old, GitignoreEntries)
	if len(missing) == 0 {
		return exists(".gitignore", "zerg entries present"), nil
	}
	nl := "\n"
	if bytes.Contains(old, []byte("\r\n")) {
		nl = "\r\n" // keep the file's own line endings
	}
	var add []byte
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		add = append(add, nl...)
	}
	if !bytes.Contains(old, []byte(GitignoreHeader)) {
		add = append(add, GitignoreHeader+nl...)
	}
	for _, e := range missing {
		add = append(add, e+nl...)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return Outcome{}, err
	}
	if _, err := f.Write(add); err != nil {
		_ = f.Close() // the write's error is the one to report
		return Outcome{}, err
	}
	if err := f.Close(); err != nil {
		return Outcome{}, err
	}
	detail := "added " + strings.Join(missing, ", ")
	if existed {
		return Outcome{Updated, "updated", ".gitignore", detail}, nil
	}
	return created(".gitignore", detail), nil
}

// MissingIgnoreEntries returns the wanted entries the file does not already
// list. "/.zerg/runs", ".zerg/runs" and ".zerg/runs/" count as the same entry.
func MissingIgnoreEntries(content []byte, want []string) []string {
	norm := func(s string) string {
		s = strings.TrimSpace(s)
		return strings.TrimSuffix(strings.TrimPrefix(s, "/"), "/")
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(content), "\n") {
		have[norm(line)] = true
	}
	var missing []string
	for _, w := range want {
		if !have[norm(w)] {
			missing = append(missing, w)
		}
	}
	return missing
}
