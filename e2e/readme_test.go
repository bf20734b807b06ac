package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeQuickStartCommits: the README's quick start commits what zerg
// init (and plan and design) wrote before the rush and the merge: zerg merge
// refuses a checked-out branch with uncommitted changes, and init edits
// .gitignore (internal/cli TestMergeAfterInitNeedsACommit shows it).
func TestReadmeQuickStartCommits(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, quick, ok := strings.Cut(string(b), "## Quick start with a real model")
	if !ok {
		t.Fatal("no quick start in README.md")
	}
	quick, _, _ = strings.Cut(quick, "\n```\n")
	at := map[string]int{}
	for i, l := range strings.Split(quick, "\n") {
		for _, step := range []string{"zerg init", "git add .zerg .claude .gitignore && git commit ", "zerg rush my-feature --workers", "zerg merge "} {
			if _, seen := at[step]; !seen && strings.HasPrefix(l, step) {
				at[step] = i
			}
		}
	}
	commit, ok := at["git add .zerg .claude .gitignore && git commit "]
	if !ok {
		t.Fatalf("the quick start does not commit what zerg init wrote:\n%s", quick)
	}
	if at["zerg init"] > commit || commit > at["zerg rush my-feature --workers"] || commit > at["zerg merge "] {
		t.Errorf("the commit is not between zerg init and the rush and merge: %v", at)
	}
	if !strings.Contains(quick, "zerg merge refuses") || !strings.Contains(quick, "init edits .gitignore") {
		t.Errorf("the quick start does not say why the commit is needed:\n%s", quick)
	}
}
