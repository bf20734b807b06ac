package policy

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/security"
)

func TestDecideRead(t *testing.T) {
	ws, outside, p := confineFixture(t)
	shared := filepath.Join(filepath.Dir(ws), "shared")
	cases := []struct {
		name  string
		tool  string
		input map[string]any
		allow bool
		want  string
	}{
		{"read inside", "Read", map[string]any{"file_path": "README.md"}, true, "inside the workspace"},
		{"read absolute inside", "Read", map[string]any{"file_path": filepath.Join(ws, "README.md")}, true, "inside"},
		{"read .git file", "Read", map[string]any{"file_path": ".git"}, true, "inside"},
		{"read a read dir", "Read", map[string]any{"file_path": filepath.Join(shared, "ctx.md")}, true, "inside"},
		{"read outside", "Read", map[string]any{"file_path": filepath.Join(outside, "id_rsa")}, false, "outside the workspace"},
		{"read /etc/shadow", "Read", map[string]any{"file_path": "/etc/shadow"}, false, "outside"},
		{"read dotdot", "Read", map[string]any{"file_path": "../outside/id_rsa"}, false, "outside"},
		{"read symlink out", "Read", map[string]any{"file_path": "link"}, false, "outside"},
		{"read through symlinked dir", "Read", map[string]any{"file_path": "sub/out/id_rsa"}, false, "outside"},
		{"read no path", "Read", map[string]any{}, false, "no file_path"},
		{"notebook read outside", "NotebookRead", map[string]any{"notebook_path": "/tmp/x.ipynb"}, false, "outside"},
		{"glob inside", "Glob", map[string]any{"pattern": "**/*.md"}, true, "inside"},
		{"glob subdir", "Glob", map[string]any{"pattern": "*", "path": "sub"}, true, "inside"},
		{"glob outside path", "Glob", map[string]any{"pattern": "*", "path": outside}, false, "outside"},
		{"glob symlinked dir", "Glob", map[string]any{"pattern": "*", "path": "sub/out"}, false, "outside"},
		{"glob absolute pattern", "Glob", map[string]any{"pattern": filepath.Join(outside, "*")}, false, "absolute pattern"},
		{"glob dotdot pattern", "Glob", map[string]any{"pattern": "../outside/*"}, false, `".."`},
		{"glob home pattern", "Glob", map[string]any{"pattern": "~/.ssh/*"}, false, "home"},
		{"glob brace escape", "Glob", map[string]any{"pattern": "{a,/etc}/*"}, false, "absolute alternative"},
		{"grep inside", "Grep", map[string]any{"pattern": "/etc/passwd", "path": "."}, true, "inside"},
		{"grep default path", "Grep", map[string]any{"pattern": "x"}, true, "inside"},
		{"grep outside", "Grep", map[string]any{"pattern": "SECRET", "path": outside}, false, "outside"},
		{"grep root", "Grep", map[string]any{"pattern": "SECRET", "path": "/"}, false, "outside"},
		{"grep file outside", "Grep", map[string]any{"pattern": "SECRET", "path": filepath.Join(outside, "id_rsa")}, false, "outside"},
		{"grep glob escape", "Grep", map[string]any{"pattern": "x", "glob": "../**"}, false, `".."`},
		{"grep path not string", "Grep", map[string]any{"pattern": "x", "path": 3}, false, "not a string"},
		{"todo passes", "TodoWrite", map[string]any{"todos": []any{}}, true, "reaches no files"},
		{"web fetch", "WebFetch", map[string]any{"url": "http://x"}, false, "not a tool"},
		{"mcp tool", "mcp__srv__x", map[string]any{}, false, "not a tool"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := p.Decide(hookInput(t, ws, tc.tool, tc.input))
			if d.Allow != tc.allow || !strings.Contains(d.Reason, tc.want) {
				t.Fatalf("allow = %v (want %v), reason %q (want %q)", d.Allow, tc.allow, d.Reason, tc.want)
			}
		})
	}
	// From a cwd outside the workspace a relative Read is outside too.
	if d := p.Decide(hookInput(t, outside, "Read", map[string]any{"file_path": "id_rsa"})); d.Allow {
		t.Fatal("relative read from an outside cwd allowed")
	}
}

// The hook refuses at once every write the check of the result would
// refuse: the same protected list (Policy.Protect), less the entries
// security.allow_protected opened for the task.
func TestDecideProtectedFiles(t *testing.T) {
	ws, _, p := confineFixture(t)
	att := t.TempDir()
	p.Allow = []string{"**"}
	p.Protected = []string{filepath.Join(att, "policy.json")}
	for _, path := range []string{filepath.Join(att, "policy.json"), ".git", ".git/hooks/pre-commit", "a/.git/config", ".claude/settings.json",
		".claude/settings.local.json", ".zerg/config.yaml", ".claude/commands/x.md", ".github/workflows/ci.yml", ".gitattributes", ".husky/pre-commit"} {
		if d := p.Decide(hookInput(t, ws, "Write", map[string]any{"file_path": path, "content": "x"})); d.Allow {
			t.Errorf("write %s allowed: %s", path, d.Reason)
		}
	}
	for _, path := range []string{"src/settings.json", "gitignore", ".github/CODEOWNERS"} {
		if d := p.Decide(hookInput(t, ws, "Write", map[string]any{"file_path": path, "content": "x"})); !d.Allow {
			t.Errorf("write %s denied: %s", path, d.Reason)
		}
	}
	// The config's own list, and what allow_protected opened for the task.
	p.Protect = append(security.DefaultProtected(), "deploy/**")
	p.Opened = []string{".github/workflows/"}
	for path, allow := range map[string]bool{"deploy/prod.yml": false, ".github/workflows/ci.yml": true, ".github/actions/a.yml": false} {
		if d := p.Decide(hookInput(t, ws, "Write", map[string]any{"file_path": path, "content": "x"})); d.Allow != allow {
			t.Errorf("write %s: allow %v, want %v (%s)", path, d.Allow, allow, d.Reason)
		}
	}
}
