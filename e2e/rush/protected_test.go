package rush

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAllowProtected: a protected path (here docs/**, by
// security.protected_paths) opened by security.allow_protected may be
// changed by a task that names it: the graph validates, the rush delivers
// and audits the change, and zerg merge will not take it without a
// person (no terminal: --force). The control is TestGraphOwningAProtectedPath:
// the same graph without allow_protected is refused. git's, zerg's and
// Claude Code's own files can never be opened.
func TestAllowProtected(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
			return s + "security:\n  protected_paths: [\"docs/**\"]\n  allow_protected: [\"docs/**\"]\n"
		})
	})
	if r := p.zerg("graph", "validate", "demo"); r.code != 0 {
		t.Fatalf("graph validate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := p.zerg("rush", "demo", "--rehearse"); r.code != 0 || !strings.Contains(r.stdout, "demo: DELIVERED") {
		t.Fatalf("rush: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	audit, err := os.ReadFile(filepath.Join(p.dir, ".zerg", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(audit), `"protected_opened"`) || !strings.Contains(string(audit), `docs/usage.md`) {
		t.Errorf("the audit log does not record the opened change:\n%s", audit)
	}
	base := p.git("rev-parse", "main")
	m := p.zerg("merge", "demo", "--into", "main")
	if m.code != 1 || !strings.Contains(m.stderr, "docs/usage.md") || !strings.Contains(m.stderr, "--force") {
		t.Fatalf("merge of a protected change without --force: exit %d\n%s%s", m.code, m.stdout, m.stderr)
	}
	if head := p.git("rev-parse", "main"); head != base {
		t.Fatal("main moved although the merge was refused")
	}
	m = p.zerg("merge", "demo", "--into", "main", "--force")
	if m.code != 0 || !strings.Contains(m.stderr, "merging anyway (--force)") {
		t.Fatalf("merge --force: exit %d\n%s%s", m.code, m.stdout, m.stderr)
	}

	// Never: a config that opens .zerg/ is bad input naming the field.
	q := newProject(t, func(dir string) {
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
			return s + "security:\n  allow_protected: [\".zerg/**\"]\n"
		})
	})
	if r := q.zerg("rush", "demo", "--rehearse"); r.code != 2 || !strings.Contains(r.stderr, "security.allow_protected[0]") {
		t.Errorf("allow_protected .zerg/**: exit %d, want 2 naming the field\n%s", r.code, r.stderr)
	}
}
