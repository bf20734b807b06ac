package attempt

import (
	"fmt"
	"strings"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

// Owns reports whether the task may change p (spec.Task.Owns: the one
// meaning of ownership).
func Owns(t *spec.Task, p string) bool { return t.Owns(p) }

// Violations returns the changed paths the task does not own.
func Violations(t *spec.Task, changes []gitx.Change) []string {
	var bad []string
	for _, c := range changes {
		if !t.Owns(c.Path) {
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
