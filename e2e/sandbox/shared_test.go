package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/sandbox"
)

// A shared directory is readable inside at its own path and never
// writable. As root, the one tested here sits in a home of mode 0700 that
// the sandbox's user cannot enter: only the prep step makes it visible.
func TestSharedDirectoryReadOnly(t *testing.T) {
	b := newBox(t)
	home := filepath.Join(b.root, "userhome")
	cache := filepath.Join(home, "go", "pkg", "mod")
	writeFile(t, filepath.Join(cache, "example.com", "m@v1", "m.go"), "package m\n")
	writeFile(t, filepath.Join(home, ".ssh", "id_ed25519"), "private key")
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	b.spec.Shared = []string{cache}

	out := b.ok("cat " + filepath.Join(cache, "example.com", "m@v1", "m.go"))
	if out != "package m\n" {
		t.Fatalf("shared file reads %q", out)
	}
	if r := b.sh("echo x > " + filepath.Join(cache, "new") + " || exit 3; echo y > " + filepath.Join(cache, "example.com", "m@v1", "m.go")); r.code == 0 {
		t.Fatalf("a shared directory was writable: %s", r)
	}
	if r := b.sh("cat " + filepath.Join(home, ".ssh", "id_ed25519")); r.code == 0 || strings.Contains(r.stdout, "private") {
		t.Fatalf("the rest of the home showed through: %s", r)
	}
	if os.Geteuid() == 0 {
		// The control: without the prep step, bwrap cannot bind it.
		cmd, err := sandbox.Command(t.Context(), b.spec, "/bin/true")
		if err != nil {
			t.Fatal(err)
		}
		if cmd.Args[1] != sandbox.PrepCommand {
			t.Fatalf("a sandbox with an unreachable shared directory starts %q, not through %s", cmd.Args, sandbox.PrepCommand)
		}
		b.spec.Shared = nil
		b.spec.ReadOnly = []string{cache}
		if r := b.sh("true"); r.code == 0 {
			t.Fatalf("bwrap bound an unreachable directory by itself, so the prep step tests nothing: %s", r)
		}
	}
}
