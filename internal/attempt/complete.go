package attempt

import (
	"fmt"
	"path"
	"strings"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/spec"
)

// Incomplete says why an attempt's changes do not deliver its task: a
// worker that answers "done" without doing the work must not be
// committed, merged and reported delivered. inBase reports whether a path
// exists in the attempt's base (a file a task "creates" may exist already).
// It returns "" when the changes deliver the task, or when the task says
// its worker changes nothing ("expect_changes": false). Globs in files.*
// are not checked (no single path must exist); a "dir/" entry of
// files.create needs a file below it.
func Incomplete(t *spec.Task, changes []gitx.Change, inBase func(string) bool) (reason, detail string) {
	if t.NoChanges {
		return "", ""
	}
	if len(changes) == 0 {
		return outcome.ReasonEmptyChange, fmt.Sprintf("the worker changed nothing, although the task owns %s; do the task's work (a task meant to change nothing says \"expect_changes\": false in the graph)",
			ownedList(t))
	}
	status := map[string]string{}
	for _, c := range changes {
		status[c.Path] = c.Status
	}
	var missing, unchanged []string
	for _, e := range t.Files.Create {
		p, dir, glob := entry(e)
		switch {
		case glob:
		case dir:
			found := false
			for q, st := range status {
				if pathx.Below(p, q) && st != "D" {
					found = true
					break
				}
			}
			if !found {
				missing = append(missing, e)
			}
		default:
			st, changed := status[p]
			if changed && st == "D" || !changed && !inBase(p) {
				missing = append(missing, e)
			}
		}
	}
	for _, e := range t.Files.Modify {
		p, dir, glob := entry(e)
		if dir || glob {
			continue
		}
		if _, changed := status[p]; !changed {
			unchanged = append(unchanged, e)
		}
	}
	switch {
	case len(missing) > 0:
		return outcome.ReasonMissingFile, fmt.Sprintf("%s, which the task creates, does not exist after the attempt; create it", listOf(missing))
	case len(unchanged) > 0:
		return outcome.ReasonUnchangedFile, fmt.Sprintf("%s, which the task modifies, is unchanged; make the change there", listOf(unchanged))
	}
	return "", ""
}

// entry is a files.* entry as a clean repository path, and whether it is
// a directory ("dir/") or a glob.
func entry(e string) (p string, dir, glob bool) {
	p = strings.TrimPrefix(path.Clean(e), "./")
	return p, strings.HasSuffix(e, "/"), strings.ContainsAny(e, "*?[{")
}
