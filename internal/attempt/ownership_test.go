package attempt

import (
	"testing"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/security"
)

func TestProtectedChanges(t *testing.T) {
	changes := []gitx.Change{
		{Status: "A", Path: "deploy/run.sh"}, {Status: "M", Path: "src/a.go"},
		{Status: "D", Path: ".github/workflows/ci.yml"}, {Status: "M", Path: ".Zerg/config.yaml"},
	}
	bad, err := ProtectedChanges(append(security.DefaultProtected(), "deploy/**"), changes)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"deploy/run.sh":            `added; "deploy/**" is protected`,
		".github/workflows/ci.yml": `deleted; ".github/workflows/**" is protected`,
		".Zerg/config.yaml":        `changed; ".zerg/**" is protected`,
	}
	if len(bad) != len(want) {
		t.Fatalf("problems %+v, want %d", bad, len(want))
	}
	for _, p := range bad {
		if p.Kind != security.ProblemProtected || p.Detail != want[p.Path] {
			t.Errorf("%+v, want detail %q", p, want[p.Path])
		}
	}
	// An empty list protects nothing; a bad pattern is an error, never a
	// check that silently passes.
	if bad, err := ProtectedChanges([]string{}, changes); err != nil || len(bad) != 0 {
		t.Errorf("empty list: %+v %v", bad, err)
	}
	if _, err := ProtectedChanges([]string{"/etc/**"}, changes); err == nil {
		t.Error("an absolute pattern was accepted")
	}
}
