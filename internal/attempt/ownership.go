package attempt

import (
	"strings"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/spec"
)

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

func ownedList(t *spec.Task) string {
	o := t.Files.Owned()
	if len(o) == 0 {
		return "nothing"
	}
	return strings.Join(o, ", ")
}
