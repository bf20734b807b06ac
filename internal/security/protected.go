package security

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ProtectedPaths matches the paths no worker may add, change or delete,
// whatever its task owns: the commit check of sandbox mode and the change
// check of subprocess mode use the same one.
type ProtectedPaths struct {
	pats []string // lower-cased doublestar globs
}

// NewProtectedPaths compiles doublestar globs of slash paths from the top
// of the tree, matched case-insensitively. nil means DefaultProtected(); an
// empty non-nil slice protects nothing. A pattern that is not a relative
// glob is an error.
func NewProtectedPaths(pats []string) (*ProtectedPaths, error) {
	if pats == nil {
		pats = DefaultProtected()
	}
	p := &ProtectedPaths{}
	for _, pat := range pats {
		lp := strings.ToLower(strings.TrimPrefix(pat, "./"))
		if lp == "" || strings.HasPrefix(lp, "/") || !doublestar.ValidatePattern(lp) {
			return nil, fmt.Errorf("protected path pattern %q is not a valid relative glob", pat)
		}
		p.pats = append(p.pats, lp)
	}
	return p, nil
}

// Match reports the pattern that protects path: path matches it, or path
// stands for a directory the pattern reaches into (".github" for
// ".github/workflows/**"), where a symlink or a file would take the place
// of what is protected.
func (p *ProtectedPaths) Match(path string) (string, bool) {
	if pat, ok := p.Covers(path); ok {
		return pat, true
	}
	comps := strings.Split(strings.ToLower(path), "/")
	for _, pat := range p.pats {
		if reachesInto(strings.Split(pat, "/"), comps) {
			return pat, true
		}
	}
	return "", false
}

// Covers reports the pattern path itself matches: a directory that only
// holds protected paths (".github") is not covered.
func (p *ProtectedPaths) Covers(path string) (string, bool) {
	lp := strings.ToLower(path)
	for _, pat := range p.pats {
		if ok, _ := doublestar.Match(pat, lp); ok {
			return pat, true
		}
	}
	return "", false
}

// reachesInto reports whether the pattern's components pat can match the
// path components p followed by more components, with p's last component
// matched by a name of the pattern, not absorbed by "**": a directory
// anywhere could hold a protected name, but only one the pattern names
// can be replaced by a link to unprotected content.
func reachesInto(pat, p []string) bool {
	if len(pat) == 0 || len(p) == 0 {
		return false
	}
	if pat[0] == "**" {
		return reachesInto(pat[1:], p) || len(p) > 1 && reachesInto(pat, p[1:])
	}
	if ok, _ := doublestar.Match(pat[0], p[0]); !ok {
		return false
	}
	if len(p) == 1 {
		return len(pat) > 1
	}
	return reachesInto(pat[1:], p[1:])
}
