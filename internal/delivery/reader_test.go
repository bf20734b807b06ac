package delivery

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/journey"
	"github.com/zergrush/zerg/internal/security"
)

func TestClassifyReaderChanges(t *testing.T) {
	prot := security.DefaultProtection()
	c := ClassifyReaderChanges(prot, []string{"", "src/main.go", ".github/workflows/ci.yml", "CLAUDE.md", "pkg/AGENTS.md", "README.md", ""})
	if want := []string{".github/workflows/ci.yml"}; !slices.Equal(c.Protected, want) {
		t.Errorf("protected = %q, want %q", c.Protected, want)
	}
	if want := []string{"CLAUDE.md", "pkg/AGENTS.md"}; !slices.Equal(c.Instructions, want) {
		t.Errorf("instructions = %q, want %q", c.Instructions, want)
	}
	if c.Empty() {
		t.Error("changes with protected paths are Empty")
	}
	if c := ClassifyReaderChanges(prot, []string{"a.go", ""}); !c.Empty() {
		t.Errorf("ordinary files: %+v, want Empty", c)
	}

	fs := c.Findings()
	if len(fs) != 3 {
		t.Fatalf("%d findings, want 3: %+v", len(fs), fs)
	}
	for i, want := range []struct{ source, file string }{{"protected", ".github/workflows/ci.yml"}, {"instructions", "CLAUDE.md"}, {"instructions", "pkg/AGENTS.md"}} {
		f := fs[i]
		if f.Severity != journey.Blocking || f.Source != want.source || f.File != want.file || !strings.Contains(f.Title, want.file) || !strings.Contains(f.Detail, "--force") {
			t.Errorf("finding %d = %+v, want a blocking %s finding on %s saying --force", i, f, want.source, want.file)
		}
	}
}

func TestFindReaderChanges(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	g := gitx.New(dir)
	git := func(args ...string) string {
		t.Helper()
		out, err := g.Run(ctx, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	write := func(p, s string) {
		t.Helper()
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "--quiet", "-b", "main")
	write(".github/workflows/ci.yml", "on: push\n")
	write("a.go", "package a\n")
	git("add", "-A")
	git("commit", "--quiet", "-m", "base")
	base := git("rev-parse", "HEAD")
	// A rename away from a protected path counts as a change to it.
	git("mv", ".github/workflows/ci.yml", "ci.yml")
	write("AGENTS.md", "do this\n")
	write("a.go", "package a // changed\n")
	git("add", "-A")
	git("commit", "--quiet", "-m", "head")
	head := git("rev-parse", "HEAD")

	repo := &gitx.Repo{Runner: g}
	c, err := FindReaderChanges(ctx, repo, security.DefaultProtection(), base, head)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Protected, []string{".github/workflows/ci.yml"}) || !slices.Equal(c.Instructions, []string{"AGENTS.md"}) {
		t.Errorf("changes = %+v, want the workflow protected and AGENTS.md instructions", c)
	}
	if _, err := FindReaderChanges(ctx, repo, security.DefaultProtection(), base, "no-such-rev"); err == nil {
		t.Error("an unknown revision gave no error")
	}
}

func TestMergeFailure(t *testing.T) {
	conflict := &gitx.MergeConflict{Branch: "zerg/f", Paths: []string{"a.go", "b.go"}, Err: errors.New("exit status 1")}
	for _, c := range []struct {
		name       string
		err        error
		checkedOut string
		squash     bool
		want       string
	}{
		{"conflict", &MergeError{Err: conflict}, "", false,
			"zerg/f conflicts with main on a.go, b.go; nothing changed. Resolve it by hand: git switch main && git merge zerg/f, fix those files, git add them and git commit (zerg review f first if you have not)"},
		{"conflict, checked out, squash", conflict, "/repo", true,
			"zerg/f conflicts with main on a.go, b.go; nothing changed. Resolve it by hand: in /repo: git merge --squash zerg/f, fix those files, git add them and git commit (zerg review f first if you have not)"},
		{"git failed", &gitx.Error{Args: []string{"merge", "secret-argv"}, Stderr: "fatal: something\n  broke\n"}, "", false,
			"merge into main failed; nothing changed: fatal: something broke"},
		{"other", errors.New("disk full"), "", false,
			"merge into main failed; nothing changed: disk full"},
	} {
		got := MergeFailure(c.err, "f", "main", "zerg/f", c.checkedOut, c.squash)
		if got.Error() != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}
