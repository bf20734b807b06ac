// Package resolve says where a path lands the way the kernel resolves it,
// symlinks and ".." included, before anything is written: the write tools'
// check (internal/policy) and the Bash check (internal/policy/bash) judge a
// path by its resolved place, never by its spelling.
package resolve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Path resolves the absolute path p the way the kernel does: each
// existing component in turn, a symlink replaced by its target, ".." taken
// from the directory reached so far (so "link/.." is the parent of the link's
// target, not the directory holding the link). The components that do not
// exist yet are appended as they are, a ".." among them removing the one
// before, so a write through a symlinked directory (or a symlink as the file
// itself) is judged by where it really lands.
func Path(p string) (string, error) {
	r, _, err := Walk(p)
	return r, err
}

// Walk is Path that also reports whether the result assumes
// anything about components that do not exist yet: more than the last one
// missing, or a ".." after a missing one. Such a path lands where it says only
// if nothing creates a symlink on its way first.
func Walk(p string) (resolved string, assumed bool, err error) {
	if !filepath.IsAbs(p) {
		return "", false, fmt.Errorf("%s is not absolute", p)
	}
	cur := string(filepath.Separator)
	var rest []string // the components below cur that do not exist
	for _, c := range strings.Split(p, string(filepath.Separator)) {
		switch {
		case c == "" || c == ".":
			continue
		case c == "..":
			if len(rest) > 0 {
				rest = rest[:len(rest)-1]
				assumed = true
			} else {
				cur = filepath.Dir(cur)
			}
			continue
		case len(rest) > 0:
			rest = append(rest, c)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			// under a regular file: cannot exist, like a missing path
			rest = append(rest, c)
			continue
		case err != nil:
			return "", false, fmt.Errorf("stat %s: %w", next, err)
		case fi.Mode()&os.ModeSymlink == 0:
			cur = next
			continue
		}
		// cur has no symlinks, so only next may be one; EvalSymlinks
		// follows its chain (and the ".." in targets) physically.
		t, err := filepath.EvalSymlinks(next)
		if err != nil {
			// A dangling symlink: the write would create its target
			// somewhere we cannot see yet, so refuse rather than guess.
			return "", false, fmt.Errorf("resolve %s: %w", next, err)
		}
		cur = t
	}
	if len(rest) > 1 {
		assumed = true
	}
	return filepath.Join(append([]string{cur}, rest...)...), assumed, nil
}

// From returns where the path p, absolute or relative to cwd, may
// land: as the kernel resolves it, and as a program that first cleans it
// lexically (a shell's logical cd, many path libraries) resolves it. The two
// differ only when a ".." follows a symlink; a check must accept both. It
// also says whether either reading assumes something about components that
// do not exist yet (Walk).
func From(cwd, p string) ([]string, bool, error) {
	t := p
	if !filepath.IsAbs(t) {
		t = cwd + string(filepath.Separator) + t
	}
	phys, a1, err := Walk(t)
	if err != nil {
		return nil, false, err
	}
	lex, a2, err := Walk(filepath.Clean(t))
	if err != nil {
		return nil, false, err
	}
	if lex == phys {
		return []string{phys}, a1 || a2, nil
	}
	return []string{phys, lex}, a1 || a2, nil
}
