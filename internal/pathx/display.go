package pathx

import "path/filepath"

// AbsFrom is p made absolute against cwd (p itself, cleaned, when it is
// absolute already): a path the user typed, relative to where they are.
func AbsFrom(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// SlashRelOrAbs is path relative to base with forward slashes when it is
// Within base, else the whole path with forward slashes: how a report names
// a file, short when it can be and never with a "..".
func SlashRelOrAbs(base, path string) string {
	r, ok := Rel(base, path)
	if !ok {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(r)
}

// RelOr is p relative to dir when it is Within dir, else p unchanged.
func RelOr(dir, p string) string {
	if r, ok := Rel(dir, p); ok {
		return r
	}
	return p
}
