package attempt

import (
	"testing"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/spec"
)

func TestIncomplete(t *testing.T) {
	task := &spec.Task{ID: "T", Files: spec.Files{Create: []string{"new.go", "docs/", "gen/*.pb.go"}, Modify: []string{"old.go", "lib/"}}}
	base := map[string]bool{"old.go": true, "exists.go": true}
	inBase := func(p string) bool { return base[p] }
	ch := func(pairs ...string) []gitx.Change {
		var out []gitx.Change
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, gitx.Change{Status: pairs[i], Path: pairs[i+1]})
		}
		return out
	}
	for _, c := range []struct {
		name    string
		task    *spec.Task
		changes []gitx.Change
		want    string
	}{
		{"all done", task, ch("A", "new.go", "A", "docs/a.md", "M", "old.go"), ""},
		{"nothing", task, nil, outcome.ReasonEmptyChange},
		{"the created file missing", task, ch("A", "docs/a.md", "M", "old.go"), outcome.ReasonMissingFile},
		{"the created file deleted again", task, ch("D", "new.go", "A", "docs/a.md", "M", "old.go"), outcome.ReasonMissingFile},
		{"nothing in the created dir", task, ch("A", "new.go", "M", "old.go", "A", "elsewhere/x"), outcome.ReasonMissingFile},
		{"the modified file unchanged", task, ch("A", "new.go", "A", "docs/a.md"), outcome.ReasonUnchangedFile},
		{"a created file that was there", &spec.Task{Files: spec.Files{Create: []string{"exists.go"}}}, ch("M", "other.go"), ""},
		{"only globs", &spec.Task{Files: spec.Files{Create: []string{"*.txt"}}}, ch("A", "a.txt"), ""},
		{"a check-only task", &spec.Task{NoChanges: true, Files: spec.Files{Create: []string{"x"}}}, nil, ""},
	} {
		got, detail := Incomplete(c.task, c.changes, inBase)
		if got != c.want {
			t.Errorf("%s: %q (%s), want %q", c.name, got, detail, c.want)
		}
	}
}
