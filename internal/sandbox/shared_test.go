package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSharedPrep(t *testing.T) {
	blocked := map[string]string{
		"/root/go/pkg/mod":      "/root",
		"/root/.cache/go-build": "/root",
		"/root/deep/x/tools":    "/root/deep", // inside /root too: /root alone is covered
		"/opt/sdk":              "",
	}
	c := sharedPrep([]string{"/opt/sdk", "/root/go/pkg/mod", "/root/.cache/go-build", "/root/deep/x/tools"},
		func(d string) string { return blocked[d] })
	want := &PrepConfig{Cover: []string{"/root"}, Share: []string{"/root/go/pkg/mod", "/root/.cache/go-build", "/root/deep/x/tools"}}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("sharedPrep = %+v, want %+v", c, want)
	}
	if c := sharedPrep([]string{"/opt/sdk"}, func(d string) string { return blocked[d] }); c != nil {
		t.Fatalf("reachable directories need no prep, got %+v", c)
	}
}

func TestBlockedAncestor(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the directories belong to another user than the one checked")
	}
	root := testRoot(t)
	home := filepath.Join(root, "home")
	cache := filepath.Join(home, "cache", "mod")
	mkdir(t, cache)
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if got := blockedAncestor(cache, 4242, 4242); got != home {
		t.Fatalf("blockedAncestor = %q, want %q", got, home)
	}
	if got := blockedAncestor(cache, 0, 0); got != "" {
		t.Fatalf("root is blocked at %q", got)
	}
	if err := os.Chmod(home, 0o711); err != nil {
		t.Fatal(err)
	}
	if got := blockedAncestor(cache, 4242, 4242); got != "" {
		t.Fatalf("a searchable home is blocked at %q", got)
	}
}

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
		cmd, err := Command(t.Context(), b.spec, "/bin/true")
		if err != nil {
			t.Fatal(err)
		}
		if cmd.Args[1] != PrepCommand {
			t.Fatalf("a sandbox with an unreachable shared directory starts %q, not through %s", cmd.Args, PrepCommand)
		}
		b.spec.Shared = nil
		b.spec.ReadOnly = []string{cache}
		if r := b.sh("true"); r.code == 0 {
			t.Fatalf("bwrap bound an unreachable directory by itself, so the prep step tests nothing: %s", r)
		}
	}
}
