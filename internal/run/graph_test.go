package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

// TestLoadGraphChecksProtection: every load of a graph zerg will run
// checks its protected paths, with zerg's own list when no protection is
// given. Before the one loader, rush's warnings, its dry run, hook check,
// context and the dashboard loaded with the symlink check only, and a task
// owning a protected path was found (or not) later. A recorded graph is
// read as it was checked when its run started.
func TestLoadGraphChecksProtection(t *testing.T) {
	file := filepath.Join(t.TempDir(), "g.json")
	if err := os.WriteFile(file, []byte(`{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "level": 1, "files": {"create": [".github/workflows/ci.yml"]}},
 {"id": "B", "title": "b", "level": 1, "files": {"create": ["deploy/x"]}}
]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	protected := func(o GraphLoad) []string {
		r, err := LoadGraph(file, o)
		if err != nil {
			t.Fatal(err)
		}
		var tasks []string
		for _, e := range r.Errors {
			if e.Code == spec.CodeProtected {
				tasks = append(tasks, e.Task)
			}
		}
		return tasks
	}
	if got := protected(GraphLoad{}); len(got) != 1 || got[0] != "A" {
		t.Errorf("no protection given: protected-path errors of %q, want A (zerg's own list)", got)
	}
	cfg := config.Default()
	cfg.Security.ProtectedPaths = []string{"deploy/**"}
	if got := protected(GraphLoadFor("", cfg, nil)); len(got) != 2 {
		t.Errorf("the config's protection: errors of %q, want A and B", got)
	}
	cfg.Security.AllowProtected = []string{".github/workflows/ci.yml"}
	if got := protected(GraphLoad{Protection: cfg.Protection()}); len(got) != 1 || got[0] != "B" {
		t.Errorf("allow_protected opening A's path: errors of %q, want B", got)
	}
	if got := protected(GraphLoad{Protection: security.DefaultProtection(), Recorded: true}); len(got) != 0 {
		t.Errorf("a recorded graph: errors of %q, want none", got)
	}
}
