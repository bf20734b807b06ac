package spec_test

import (
	"path/filepath"
	"testing"

	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

// TestCorpusProtectedPaths counts the real graphs with a task that owns a
// path zerg's own list protects (docs/task-graph.md): each such task could
// never pass, and validation with the list now says so before a run.
func TestCorpusProtectedPaths(t *testing.T) {
	prot, err := security.NewProtectedPaths(nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.task-graph.json"))
	if err != nil || len(files) != 50 {
		t.Fatalf("%d corpus graphs (%v), want 50", len(files), err)
	}
	graphs, issues := 0, 0
	for _, f := range files {
		r, err := spec.Load(f, spec.Options{Protected: prot})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range r.Errors {
			if e.Code == spec.CodeProtected {
				n++
			}
		}
		if n > 0 {
			graphs++
			issues += n
		}
	}
	t.Logf("%d of %d real graphs own protected paths (%d paths)", graphs, len(files), issues)
	if graphs != 18 {
		t.Errorf("%d graphs own protected paths, want the 18 docs/task-graph.md counts", graphs)
	}
}
