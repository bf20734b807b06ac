// Package pathx is zerg's one answer to "is this path inside that
// directory", a security check wherever it is asked (a workspace, a
// protected directory, a sandbox's mounts). It is lexical, on cleaned
// paths, with filepath.IsLocal's meaning of inside: no ".." component
// leaves the directory, and "..foo" is a name like any other. Callers that
// must see through symlinks resolve them first.
package pathx

import "path/filepath"

// Within reports whether p is dir itself or lies under it. Both must be
// absolute, or both relative to the same directory.
func Within(dir, p string) bool {
	if filepath.IsAbs(dir) != filepath.IsAbs(p) {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && filepath.IsLocal(rel)
}

// Below reports whether p lies under dir and is not dir itself.
func Below(dir, p string) bool {
	if filepath.IsAbs(dir) != filepath.IsAbs(p) {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && filepath.IsLocal(rel)
}
