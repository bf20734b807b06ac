package run

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoWithFeatures makes a repository with .git and .zerg, and a task graph
// for each feature; a directory without a graph is no feature.
func repoWithFeatures(t *testing.T, features ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{".git", filepath.Join(".zerg", "specs", "draft")} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range features {
		if err := os.MkdirAll(SpecDir(root, f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(GraphFile(root, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestFindZergRootAndRepoRootOf(t *testing.T) {
	root := repoWithFeatures(t, "auth")
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := FindZergRoot(sub); got != root {
		t.Errorf("FindZergRoot(%s) = %q, want %q", sub, got, root)
	}
	if got := FindZergRoot(t.TempDir()); got != "" {
		t.Errorf("FindZergRoot outside any .zerg = %q, want \"\"", got)
	}
	if got := RepoRootOf(GraphFile(root, "auth")); got != root {
		t.Errorf("RepoRootOf = %q, want %q", got, root)
	}
	if got := RepoRootOf(filepath.Join(t.TempDir(), "g.json")); got != "" {
		t.Errorf("RepoRootOf outside a repository = %q, want \"\"", got)
	}
}

func TestFeaturesAreTheDirectoriesWithAGraph(t *testing.T) {
	root := repoWithFeatures(t, "auth", "billing")
	if got := strings.Join(Features(root), ","); got != "auth,billing" {
		t.Errorf("Features = %q, want auth,billing (draft has no graph)", got)
	}
	if got := Features(t.TempDir()); got != nil {
		t.Errorf("Features without .zerg/specs = %v, want none", got)
	}
}

func TestResolveGraph(t *testing.T) {
	one := repoWithFeatures(t, "auth")
	two := repoWithFeatures(t, "auth", "billing")
	none := repoWithFeatures(t)
	bare := t.TempDir()
	for _, c := range []struct {
		name, cwd, arg string
		want           string // the path, or a part of the error
		bad            bool
	}{
		{"the only feature", one, "", filepath.Join(".zerg", "specs", "auth", "task-graph.json"), false},
		{"the only feature from below", filepath.Join(one, ".zerg"), "", filepath.Join("specs", "auth", "task-graph.json"), false},
		{"a named feature", two, "billing", filepath.Join(".zerg", "specs", "billing", "task-graph.json"), false},
		{"several features", two, "", "several features (auth, billing); name one", true},
		{"no feature", none, "", "no feature in " + filepath.Join(".zerg", "specs") + "; pass", true},
		{"no .zerg", bare, "", "no task graph given and no .zerg directory", true},
		{"a path is a file, existing or not", bare, "x/task-graph.json", "x/task-graph.json", false},
		{"a .json name is a file", bare, "g.json", "g.json", false},
		{"not a feature name", one, ".x", `.x: no such file, and ".x" is not a feature name`, true},
		{"an unknown feature", two, "nope", "nope: no such file or feature; features: auth, billing", true},
		{"an unknown feature, no features", none, "nope", "nope: no such file or feature; pass a task-graph.json path", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ResolveGraph(c.cwd, c.arg)
			if !c.bad {
				if err != nil || got != c.want {
					t.Fatalf("ResolveGraph(%q) = %q, %v; want %q", c.arg, got, err, c.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, BadInput) {
				t.Fatalf("ResolveGraph(%q) = %q, %v; want bad input with %q", c.arg, got, err, c.want)
			}
		})
	}
}
