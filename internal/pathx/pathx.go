// Package pathx is zerg's one answer to "is this path inside that
// directory", a security check wherever it is asked (a workspace, a
// protected directory, a sandbox's mounts). It is lexical, on cleaned
// paths, with filepath.IsLocal's meaning of inside: no ".." component
// leaves the directory, and "..foo" is a name like any other. Callers that
// must see through symlinks resolve them first (filepath.EvalSymlinks on
// both), then ask the same question. Repository paths (slash-separated,
// relative to the top of the tree) are asked the same way: both relative.
package pathx

import "path/filepath"

// Within reports whether p is dir itself or lies under it. Both must be
// absolute, or both relative to the same directory.
func Within(dir, p string) bool {
	_, ok := Rel(dir, p)
	return ok
}

// Below reports whether p lies under dir and is not dir itself.
func Below(dir, p string) bool {
	rel, ok := Rel(dir, p)
	return ok && rel != "."
}

// Rel is the path of p from dir when p is Within dir ("." for dir itself),
// in the system's separators, for a caller that needs the path inside as
// well as the answer. Both must be absolute, or both relative.
func Rel(dir, p string) (string, bool) {
	if filepath.IsAbs(dir) != filepath.IsAbs(p) {
		return "", false
	}
	rel, err := filepath.Rel(dir, p)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	return rel, true
}

// RelOrAbs is p relative to base with forward slashes when p is Within
// base, else p itself with forward slashes: how a message names a path the
// user knows from the repository's top.
func RelOrAbs(base, p string) string {
	if r, ok := Rel(base, p); ok {
		return filepath.ToSlash(r)
	}
	return filepath.ToSlash(p)
}

// Short is p as a person in dir reads it: its path from dir when p is
// Within dir, else p as given (a path outside is clearer whole than as a
// climb of "..").
func Short(dir, p string) string {
	if r, ok := Rel(dir, p); ok {
		return r
	}
	return p
}
