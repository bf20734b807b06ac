package security

import "testing"

func TestDefaultProtectedMatches(t *testing.T) {
	c, err := NewProtectedPaths(nil)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		".gitattributes": true, "src/.gitattributes": true, ".GITATTRIBUTES": true, ".gitmodules": true,
		".zerg": true, ".zerg/config.yaml": true, ".claude": true, "a/b/.claude/settings.json": true,
		".mcp.json": true, ".github": true, ".github/workflows": true, ".github/workflows/ci.yml": true,
		".gitlab-ci.yml": true, ".husky/pre-commit": true, ".pre-commit-config.yaml": true, "x/.git/hooks/pre-commit": true,
		".gitignore": false, ".github/ISSUE_TEMPLATE/bug.md": false, "docs/zerg.md": false, "src/claude.go": false,
		".devcontainer.json": true, ".devcontainer/Dockerfile": true,
		"README.md": false, ".gitkeep": false, "zerg/config.yaml": false, "sub/.devcontainer.json": false,
	} {
		if _, got := c.Match(p); got != want {
			t.Errorf("Match(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestProtectedCustomPatterns(t *testing.T) {
	c, err := NewProtectedPaths([]string{"db/*/schema.sql", "**/Secrets/*.key", "./Makefile"})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		"db/main/schema.sql": true, "db/main": true, "db": true, "DB/Main/Schema.SQL": true,
		"a/b/secrets/x.key": true, "a/b/secrets": true, "secrets": true, "makefile": true,
		"db/main/other.sql": false, "dbx": false, "db/main/schema.sql/x": false,
		"a/b": false, "a/b/secrets/x.txt": false, "src/makefile": false,
	} {
		if _, got := c.Match(p); got != want {
			t.Errorf("Match(%q) = %v, want %v", p, got, want)
		}
	}
}

// Covers is Match without the directories a pattern reaches into.
func TestProtectedCovers(t *testing.T) {
	c, err := NewProtectedPaths(nil)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		".github/workflows/ci.yml": true, ".zerg": true, ".zerg/hooks/x": true,
		".github/workflows": true, ".github": false, "src": false,
	} {
		if _, got := c.Covers(p); got != want {
			t.Errorf("Covers(%q) = %v, want %v", p, got, want)
		}
		if _, got := c.Match(p); !got && (want || p == ".github") {
			t.Errorf("Match(%q) = false", p)
		}
	}
}

// allow_protected opens CI and editor paths by name, never git's, zerg's
// or Claude Code's own files, and no pattern may open everything.
func TestOpening(t *testing.T) {
	o, err := NewOpening([]string{".github/workflows/**", ".devcontainer/**", "Jenkinsfile"})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		".github/workflows/ci.yml": true, ".devcontainer/devcontainer.json": true, "Jenkinsfile": true,
		".github/actions/x.yml": false, ".gitattributes": false, ".zerg/config.yaml": false, "src/.git/config": false,
	} {
		if got := o.Opens(p); got != want {
			t.Errorf("Opens(%q) = %v", p, got)
		}
	}
	for _, bad := range []string{"**", "*", "**/*.yml", ".git/**", ".git*", ".zerg/**", ".claude/**", ".claude/settings.json", ".mcp.json", "/etc/x", "[bad"} {
		if _, err := NewOpening([]string{bad}); err == nil {
			t.Errorf("NewOpening(%q) accepted", bad)
		}
	}
	// A task opens a path only by naming it: a path or a "dir/", never a glob.
	for e, want := range map[string]bool{".github/workflows/": true, ".github/workflows/ci.yml": true, ".github/workflows/*.yml": false, ".github/**": false} {
		if got := o.OpensEntry(e); got != want {
			t.Errorf("OpensEntry(%q) = %v", e, got)
		}
	}
	var none *Opening
	if none.Opens(".github/workflows/ci.yml") {
		t.Error("a nil opening opened a path")
	}
}

// TestInstructionFile: the instruction files of coding agents anywhere in
// the tree, in any case; their look-alikes are not.
func TestInstructionFile(t *testing.T) {
	for _, p := range []string{"CLAUDE.md", "docs/CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "pkg/api/AGENTS.md", "agents.md",
		"GEMINI.md", ".cursorrules", ".cursor/rules/go.mdc", ".cursor/mcp.json", ".windsurfrules", ".windsurf/rules/a.md",
		".clinerules", ".clinerules/01.md", ".roo/rules/x.md", ".github/copilot-instructions.md", ".github/instructions/go.instructions.md",
		".github/prompts/release.prompt.md", ".gemini/settings.json", ".vscode/mcp.json", ".kiro/steering/tech.md", ".agents/skills/x/SKILL.md"} {
		if _, ok := InstructionFile(p); !ok {
			t.Errorf("%s is not an instruction file", p)
		}
	}
	for _, p := range []string{"README.md", "docs/claude.md.txt", "CLAUDE.mdx", "src/agents.go", ".github/workflows/ci.yml", "my.cursorrules.bak", ".vscode/settings.json"} {
		if pat, ok := InstructionFile(p); ok {
			t.Errorf("%s matched %s", p, pat)
		}
	}
}
