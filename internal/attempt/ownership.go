package attempt

import (
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

// ownedPatterns are the task's create/modify paths as the hook and the diff
// check understand them: a "dir/" entry owns everything below it.
func ownedPatterns(t *spec.Task) []string {
	var out []string
	for _, p := range t.Files.Owned() {
		c := strings.TrimPrefix(path.Clean(p), "./")
		if strings.HasSuffix(p, "/") {
			c += "/**"
		}
		out = append(out, c)
	}
	return out
}

// Owns reports whether the task may change p.
func Owns(t *spec.Task, p string) bool {
	for _, pat := range ownedPatterns(t) {
		if pat == p {
			return true
		}
		if ok, err := doublestar.Match(pat, p); err == nil && ok {
			return true
		}
	}
	return false
}

// Violations returns the changed paths the task does not own.
func Violations(t *spec.Task, changes []gitx.Change) []string {
	var bad []string
	for _, c := range changes {
		if !Owns(t, c.Path) {
			bad = append(bad, c.Path)
		}
	}
	return bad
}

// ProtectedChanges returns the changes to protected paths (pats as
// security.NewProtectedPaths takes them), as the commit check of sandbox
// mode words them.
func ProtectedChanges(pats []string, changes []gitx.Change) ([]security.CommitProblem, error) {
	prot, err := security.NewProtectedPaths(pats)
	if err != nil {
		return nil, err
	}
	var bad []security.CommitProblem
	for _, c := range changes {
		if pat, ok := prot.Match(c.Path); ok {
			verb := map[string]string{"A": "added", "D": "deleted"}[c.Status]
			if verb == "" {
				verb = "changed"
			}
			bad = append(bad, security.CommitProblem{Path: c.Path, Kind: security.ProblemProtected, Detail: fmt.Sprintf("%s; %q is protected", verb, pat)})
		}
	}
	return bad, nil
}

func ownedList(t *spec.Task) string {
	o := t.Files.Owned()
	if len(o) == 0 {
		return "nothing"
	}
	return strings.Join(o, ", ")
}
