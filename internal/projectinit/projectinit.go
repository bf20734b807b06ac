// Package projectinit is what zerg init writes into a repository and what it
// checks first: the config file, the specs directory, zerg's .gitignore
// entries, the pre-commit hook and the paths of the rules cache. Every Check
// runs before any write, so rejected input (an invalid existing config, a
// file where a directory must be) leaves the repository untouched; every
// write is idempotent, reporting what exists instead of writing it again.
// Check errors are the user's input to fix; write errors are failures.
package projectinit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Kind is which list of init's report an outcome belongs to.
type Kind int

const (
	// Existing: the path was already there, or is deliberately left alone;
	// nothing was written.
	Existing Kind = iota
	// Created: the path is new.
	Created
	// Updated: an existing file was changed.
	Updated
)

// Outcome is what one step did to one path.
type Outcome struct {
	Kind   Kind
	Verb   string // the report's word: created, updated, exists, kept, skipped
	Path   string // slash-separated, relative to the repository root when inside it
	Detail string // why, or what it holds; may be empty
}

func created(path, detail string) Outcome { return Outcome{Created, "created", path, detail} }
func exists(path, detail string) Outcome  { return Outcome{Existing, "exists", path, detail} }

func abs(root, rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

// CheckDirOrAbsent rejects rel (relative to root) when it exists but is not
// a directory: init would have to create it, and never moves a file away.
func CheckDirOrAbsent(root, rel string) error {
	fi, err := os.Lstat(abs(root, rel))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("check %s: %v", rel, err)
	case !fi.IsDir():
		return fmt.Errorf("%s exists but is not a directory; move it away and run zerg init again", rel)
	}
	return nil
}

// SpecsDir is where feature specs live, relative to the repository root.
const SpecsDir = ".zerg/specs/"

// CheckSpecsDir rejects a specs path that is not a directory.
func CheckSpecsDir(root string) error { return CheckDirOrAbsent(root, SpecsDir) }

// MakeSpecsDir creates the specs directory unless it exists.
func MakeSpecsDir(root string) (Outcome, error) {
	path := abs(root, SpecsDir)
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return exists(SpecsDir, ""), nil
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return Outcome{}, err
	}
	return created(SpecsDir, ""), nil
}
