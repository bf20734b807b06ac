package run

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The flag's graph, relative to the working directory, or the feature's
// own; a missing one is bad input naming it relative to the directory.
func TestGraphFile(t *testing.T) {
	cwd := t.TempDir()
	own := filepath.Join(cwd, "own.md")
	p := Paths{Graph: own}
	if _, err := p.GraphFile(cwd, "", "auth"); !errors.Is(err, BadInput) || !strings.HasPrefix(err.Error(), `own.md: no task graph for feature "auth"`) {
		t.Errorf("no graph: %v", err)
	}
	if err := os.WriteFile(own, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if g, err := p.GraphFile(cwd, "", "auth"); err != nil || g != own {
		t.Errorf("the feature's own: %q, %v", g, err)
	}
	other := filepath.Join(cwd, "other.md")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if g, err := p.GraphFile(cwd, "other.md", "auth"); err != nil || g != other {
		t.Errorf("--graph: %q, %v", g, err)
	}
}
