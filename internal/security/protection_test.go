package security

import (
	"strings"
	"testing"
)

// TestProtection: the one value answers every reader the same: the graph's
// validation (an entry naming an opened path is not protected, a glob
// never opens), the hooks (never-written paths whatever opens, an opened
// path only for a writer owning it) and the commit check (opened only when
// the task names the path).
func TestProtection(t *testing.T) {
	p, err := NewProtection([]string{"deploy/**"}, []string{".github/workflows/**"})
	if err != nil {
		t.Fatal(err)
	}
	if pats := p.Patterns(); pats[len(pats)-1] != "deploy/**" || len(pats) != len(DefaultProtected())+1 {
		t.Errorf("patterns %q", pats)
	}
	g := p.ForEntries()
	if _, ok := g.Match(".github/workflows/ci.yml"); ok {
		t.Error("graph: an entry naming an opened path is protected")
	}
	if _, ok := g.Match(".github/workflows/*.yml"); !ok {
		t.Error("graph: a glob opened a protected path")
	}
	if _, ok := g.Match("deploy/x"); !ok {
		t.Error("graph: security.protected_paths not protected")
	}
	if got := p.OpenedEntries([]string{".github/workflows/ci.yml", "src/", ".git/config"}); len(got) != 1 || got[0] != ".github/workflows/ci.yml" {
		t.Errorf("opened entries %q", got)
	}
	owns := func(rel string) bool { return rel == ".github/workflows/ci.yml" } // the writer's opened entry
	for rel, want := range map[string]string{
		"src/a.go":                 "",
		"deploy/x":                 `protected by "deploy/**"`,
		".git/config":              "inside .git",
		"sub/.zerg/x":              "inside .zerg",
		".claude/settings.json":    "a Claude Code settings file",
		".github/workflows/ci.yml": "", // owned through an opened entry
	} {
		if got := p.RefusesWrite(rel, owns); (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("RefusesWrite(%s) = %q, want %q", rel, got, want)
		}
	}
	if got := p.RefusesWrite(".github/workflows/ci.yml", nil); !strings.Contains(got, "protected by") {
		t.Errorf("a writer owning no opened entry wrote an opened path: %q", got)
	}
	if !p.OpensFor(".github/workflows/ci.yml", owns) || p.OpensFor(".github/workflows/ci.yml", func(string) bool { return false }) {
		t.Error("commit: opened only when the task names it")
	}
	if p.OpensFor(".git/config", owns) {
		t.Error("commit: .git opened")
	}
	if _, err := NewProtection([]string{"/abs"}, nil); err == nil {
		t.Error("an absolute pattern accepted")
	}
	if _, err := NewProtection(nil, []string{"**"}); err == nil {
		t.Error("an opening of everything accepted")
	}
}
