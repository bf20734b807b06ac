package slash

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/fsx"
)

// Action is what Install did with one file.
type Action string

const (
	Created Action = "created" // it did not exist
	Exists  Action = "exists"  // already exactly as zerg writes it
	Updated Action = "updated" // zerg's earlier version, untouched by the user, replaced
	Kept    Action = "kept"    // edited by the user (or not zerg's): left as is
	Skipped Action = "skipped" // zerg wrote it, the user deleted it: not recreated
	Removed Action = "removed" // zerg's untouched file for a command that is gone
)

// Result is what Install did with one path.
type Result struct {
	Path    string
	Action  Action
	Detail  string
	Command string // the zerg command the file is for; empty for the manifest
}

// manifest records the SHA-256 of every file as zerg last wrote it: a file
// whose content still has that hash is zerg's to update; any other content is
// the user's. It is meant to be committed with the files.
type manifest struct {
	Note  string            `json:"note"`
	Files map[string]string `json:"files"`
}

const manifestNote = "Written by zerg init: the SHA-256 of each slash command file as zerg last wrote it. " +
	"zerg init updates a file only while it still has that hash, so your edits are kept. Commit this file with .claude/."

// dirs are the directories Install writes into.
var dirs = []string{".claude", ".claude/commands", CommandsDir, AliasDir, DetailsDir, ".zerg"}

func abs(root, rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

// sum is a file's hash as the manifest records it. The "sha256:" prefix is
// not decoration: a bare 64-digit hex value after a name such as
// "mockapi.md" is what secret scanners (zerg's pre-commit hook among them)
// take for an API key, and the manifest is meant to be committed.
func sum(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// CheckTree is Check when there is a command tree to install (InstallTree),
// nothing without one.
func CheckTree(root string, cmds *cobra.Command) error {
	if cmds == nil {
		return nil
	}
	return Check(root)
}

// Check reports, before anything is written, what would stop Install: a
// file (or a link) where one of its directories must be, or a manifest that
// cannot be read.
func Check(root string) error {
	for _, d := range dirs {
		fi, err := os.Lstat(abs(root, d))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("check %s: %v", d, err)
		case !fi.IsDir():
			return fmt.Errorf("%s exists but is not a directory; move it away and run zerg init again", d)
		}
	}
	_, err := readManifest(root)
	return err
}

func readManifest(root string) (*manifest, error) {
	m := &manifest{Files: map[string]string{}}
	b, err := os.ReadFile(abs(root, ManifestPath))
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %v", ManifestPath, err)
	}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v); delete it and run zerg init again (files that differ from zerg's are then kept as yours)", ManifestPath, err)
	}
	if m.Files == nil {
		m.Files = map[string]string{}
	}
	// The manifest is committed, so it comes from whoever wrote the
	// repository: zerg updates and removes only the files it names, and
	// only files zerg itself installs may be named.
	for p := range m.Files {
		if !installable(p) {
			return nil, fmt.Errorf("%s lists %q, which is not a slash command file zerg installs; remove that entry and run zerg init again", ManifestPath, p)
		}
	}
	return m, nil
}

// manifestEntryRE is a file Install writes: <dir>/<name>.md in one of its
// three directories, the name a command's or an alias's.
var manifestEntryRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*\.md$`)

func installable(p string) bool {
	dir, name := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	return (dir == CommandsDir || dir == AliasDir || dir == DetailsDir) && manifestEntryRE.MatchString(name)
}

// Install writes files under root, never over a user's edit:
//
//   - a missing file is created, unless zerg wrote it before (the user
//     deleted it: it stays deleted);
//   - a file already as zerg writes it is left alone;
//   - a file that still is what zerg last wrote is replaced by the new version;
//   - any other file is the user's and is kept;
//   - a file zerg wrote for a command that no longer exists is removed if
//     untouched, kept otherwise.
//
// The manifest is rewritten only when it changes, so a second run writes
// nothing.
func Install(root string, files []File) ([]Result, error) {
	m, err := readManifest(root)
	if err != nil {
		return nil, err
	}
	next := map[string]string{}
	for p, h := range m.Files {
		next[p] = h
	}
	var out []Result
	want := map[string]bool{}
	for _, f := range files {
		want[f.Path] = true
		h := sum(f.Content)
		path := abs(root, f.Path)
		res := Result{Path: f.Path, Command: f.Command}
		last, known := m.Files[f.Path]
		fi, err := os.Lstat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if known {
				res.Action, res.Detail = Skipped, "you deleted it; it stays deleted (remove its entry from "+ManifestPath+" to get it back)"
				break
			}
			if err := writeFile(path, f.Content); err != nil {
				return out, err
			}
			next[f.Path] = h
			res.Action = Created
		case err != nil:
			return out, err
		case !fi.Mode().IsRegular():
			res.Action, res.Detail = Kept, "not a regular file; left as is"
		default:
			cur, err := os.ReadFile(path)
			if err != nil {
				return out, err
			}
			switch ch := sum(cur); {
			case ch == h:
				next[f.Path] = h
				res.Action = Exists
			case known && ch == last:
				if err := writeFile(path, f.Content); err != nil {
					return out, err
				}
				next[f.Path] = h
				res.Action, res.Detail = Updated, "zerg's new version; you had not edited it"
			case known:
				res.Action, res.Detail = Kept, "you edited it; zerg's new version is not written over your edits"
			default:
				res.Action, res.Detail = Kept, "not written by zerg; left as is"
			}
		}
		out = append(out, res)
	}
	var stale []string
	for p := range m.Files {
		if !want[p] {
			stale = append(stale, p)
		}
	}
	sort.Strings(stale)
	for _, p := range stale {
		delete(next, p)
		path := abs(root, p)
		cur, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return out, err
		case sum(cur) == m.Files[p]:
			if err := os.Remove(path); err != nil {
				return out, err
			}
			out = append(out, Result{Path: p, Action: Removed, Detail: "zerg no longer has this command"})
		default:
			out = append(out, Result{Path: p, Action: Kept, Detail: "zerg no longer has this command; your edited file stays, and is now only yours"})
		}
	}
	res, err := writeManifest(root, next)
	if err != nil {
		return out, err
	}
	return append(out, res), nil
}

func writeManifest(root string, files map[string]string) (Result, error) {
	b, err := json.MarshalIndent(manifest{Note: manifestNote, Files: files}, "", "  ")
	if err != nil {
		return Result{}, err
	}
	b = append(b, '\n')
	path := abs(root, ManifestPath)
	old, err := os.ReadFile(path)
	res := Result{Path: ManifestPath, Detail: "what zerg wrote, so your edits are kept; commit it with .claude/"}
	switch {
	case err == nil && bytes.Equal(old, b):
		res.Action, res.Detail = Exists, ""
		return res, nil
	case err == nil:
		res.Action = Updated
	case errors.Is(err, fs.ErrNotExist):
		res.Action = Created
	default:
		return res, err
	}
	return res, writeFile(path, b)
}

// writeFile replaces path through a temporary file and a rename, so the file
// is never seen half written.
func writeFile(path string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return fsx.WriteFileAtomicMode(path, content, 0o644)
}
