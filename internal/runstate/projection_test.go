package runstate

import (
	"testing"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/spec"
)

// TestProjectionFirstRequest: the first request writes the CLI's own part,
// which depends on the model (opus's prompts are the shorter), and the
// prompt to the cache.
func TestProjectionFirstRequest(t *testing.T) {
	r := spec.Check([]byte(`{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "level": 1, "estimate_minutes": 2, "files": {"create": ["a.go"]}},
 {"id": "B", "title": "b", "level": 1, "estimate_minutes": 10, "model": "opus", "files": {"create": ["b.go"]}},
 {"id": "D", "title": "d", "level": 2, "dependencies": ["A"], "files": {"create": ["d.md"]}}
]}`), spec.Options{})
	if !r.Valid() {
		t.Fatalf("test graph invalid: %v", r.Err())
	}
	p := Project(ProjectOptions{Graph: r.Graph, Config: config.Default(), Workers: 4})
	if len(p.Tasks) != 3 {
		t.Fatalf("projection %+v", p)
	}
	// The first request writes the CLI's own part, which depends on the
	// model (opus's prompts are the shorter), and the prompt to the cache.
	for _, tp := range p.Tasks {
		first := tp.Tokens.CacheWrite - growthPerTurn*int64(tp.Turns)
		if want := cliOverheadTokens(tp.Model) + tp.PromptTokens; first != want {
			t.Errorf("%s (%s): first request of %d tokens, want %d", tp.Task, tp.Model, first, want)
		}
	}
	if o, s := cliOverheadTokens("claude-opus-4-8"), cliOverheadTokens("sonnet"); o >= s {
		t.Errorf("the CLI's part with opus (%d) is not smaller than with sonnet (%d)", o, s)
	}
}
