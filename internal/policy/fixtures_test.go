package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/zergrush/zerg/internal/policy/bash"
)

// The Bash analyser's tests (internal/policy/bash) have the same fixtures:
// the read and write tools are judged in the workspaces the Bash cases use.

// confineFixture is a workspace with scripts, a subdirectory, a .git file, a
// symlink to a secret outside, and a secret outside next to it.
func confineFixture(t testing.TB) (ws, outside string, p *Policy) {
	t.Helper()
	root := t.TempDir()
	ws = filepath.Join(root, "ws")
	outside = filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(ws, "bin"), filepath.Join(ws, "tests"), filepath.Join(ws, "sub", "deep"), outside, filepath.Join(root, "shared")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{
		filepath.Join(ws, "bin", "greet-all"):   "echo hi\n",
		filepath.Join(ws, "tests", "run.sh"):    "exit 0\n",
		filepath.Join(ws, "README.md"):          "readme\n",
		filepath.Join(ws, ".git"):               "gitdir: /elsewhere\n",
		filepath.Join(outside, "id_rsa"):        "SECRET\n",
		filepath.Join(root, "shared", "ctx.md"): "context\n",
	} {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustSymlink(t, filepath.Join(outside, "id_rsa"), filepath.Join(ws, "link"))
	mustSymlink(t, outside, filepath.Join(ws, "sub", "out"))
	p = &Policy{
		Version: Version, Workspace: ws, Allow: []string{"src/**"},
		ReadDirs: []string{filepath.Join(root, "shared")},
		Bash:     bash.Policy{Allow: bash.DefaultAllow(), Commands: []string{"go test ./... && curl -s http://127.0.0.1:1/health"}},
	}
	p.Bash.Allow = append(p.Bash.Allow, bash.ToolchainRules("go vet ./... && go test ./...")...)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return ws, outside, p
}

// modeFixture is confineFixture's workspace with the two policies an
// attempt gets: subprocess mode (rules, scratch space, a shared tmp of the
// test's own) and sandbox mode (only what reaches outside is refused).
func modeFixture(t testing.TB) (ws string, sub, sb *Policy) {
	t.Helper()
	ws, _, sub = confineFixture(t)
	root := filepath.Dir(ws)
	sub.Bash.Allow = append(sub.Bash.Allow, "uv", "python3", "npx", "npm", "mise", "bd")
	sub.Bash.Scratch = []string{filepath.Join(root, "attempt", "tmp")}
	sub.Bash.SharedTmp = mkdirs(t, filepath.Join(root, "sharedtmp"))
	sub.Bash.Deny = []string{"terraform-local"}
	sb = &Policy{Version: Version, Workspace: ws, Allow: sub.Allow, ReadDirs: sub.ReadDirs,
		Bash: bash.Policy{Sandboxed: true, Deny: []string{"terraform-local"}, Scratch: sub.Bash.Scratch}}
	for _, p := range []*Policy{sub, sb} {
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	return ws, sub, sb
}

func mkdirs(t testing.TB, d string) string {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
