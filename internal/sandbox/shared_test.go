package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/zergrush/zerg/internal/sandbox/sandboxtest"
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
	root := sandboxtest.Root(t)
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
