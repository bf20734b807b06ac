package bash

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/pathx"
)

// Scope is what a command line is judged against: the hook policy's
// directories with symlinks resolved, and its rules for the paths no worker
// may write. internal/policy builds it (the same one its write and read
// tools are judged against).
type Scope struct {
	Workspace string
	// Reads are the extra directories the worker may read.
	Reads []string
	// Protected are files no tool may touch, as given and resolved.
	Protected []string
	// Scratch and SharedTmp are the worker's scratch space (Policy.Scratch,
	// Policy.SharedTmp), resolved.
	Scratch   []string
	SharedTmp string
	// NeverWritten says why a workspace-relative path may never be written
	// whatever the allow list says (git metadata, zerg's state, Claude Code
	// settings), empty when it may be.
	NeverWritten func(rel string) string
	// WriteProtected is NeverWritten and also the commit check's protected
	// list unless the task opened the path.
	WriteProtected func(rel string) string
}

// Rel returns the slash-separated path of resolved inside the workspace, or
// false when it is the workspace itself or outside it.
func (sc Scope) Rel(resolved string) (string, bool) {
	rel, ok := pathx.Rel(sc.Workspace, resolved)
	if !ok || rel == "." {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Readable reports whether resolved may be read: the workspace (itself
// included) or a read dir.
func (sc Scope) Readable(resolved string) bool {
	return within(resolved, sc.Workspace) || within(resolved, sc.Reads...)
}

// IsProtected reports whether resolved is one of the protected files or
// lies under one.
func (sc Scope) IsProtected(resolved string) bool { return within(resolved, sc.Protected...) }

// within reports whether the clean path p is one of dirs or lies under one.
func within(p string, dirs ...string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool { return pathx.Within(d, p) })
}

// set is the set of the space-separated words in s.
func set(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// hasPrefix reports whether s starts with one of prefixes.
func hasPrefix(s string, prefixes ...string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) })
}
