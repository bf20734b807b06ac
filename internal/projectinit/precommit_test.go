package projectinit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrecommitBinary(t *testing.T) {
	for _, tt := range []struct{ exe, want string }{
		{"/usr/local/bin/zerg", "/usr/local/bin/zerg"},
		{filepath.Join(os.TempDir(), "clone", "bin", "zerg"), filepath.Join(os.TempDir(), "clone", "bin", "zerg")},
		{filepath.Join(os.TempDir(), "go-build123", "b001", "exe", "zerg"), "zerg"},
		{"/home/u/.cache/go-build/ab/zerg", "zerg"},
		{"relative/zerg", "zerg"},
		{"", "zerg"},
	} {
		if got := PrecommitBinary(tt.exe, nil); got != tt.want {
			t.Errorf("PrecommitBinary(%q) = %q, want %q", tt.exe, got, tt.want)
		}
	}
	if got := PrecommitBinary("/usr/local/bin/zerg", errors.New("no executable")); got != "zerg" {
		t.Errorf("PrecommitBinary with an error = %q, want zerg", got)
	}
}

// gitRepo is a fresh repository whose git reads no user or system config.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("HOME", dir)
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	return dir
}

// Each state of .git/hooks/pre-commit gets its outcome: created, exists,
// updated only when it is zerg's, and a user's hook is kept byte for byte.
func TestInstallPrecommitHook(t *testing.T) {
	ctx := context.Background()
	root := gitRepo(t)
	if err := CheckPrecommitHook(ctx, root); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(root, ".git", "hooks", "pre-commit")
	install := func(exe string) Outcome {
		t.Helper()
		o, err := InstallPrecommitHook(ctx, root, exe)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	if o := install("/opt/zerg"); o.Kind != Created || o.Path != ".git/hooks/pre-commit" {
		t.Fatalf("first install: %+v", o)
	}
	got, _ := os.ReadFile(hook)
	if string(got) != PrecommitScript("/opt/zerg") || !strings.Contains(string(got), "zerg='/opt/zerg'") {
		t.Fatalf("hook:\n%s", got)
	}
	if o := install("/opt/zerg"); o.Kind != Existing || o.Verb != "exists" {
		t.Fatalf("second install: %+v", o)
	}
	if o := install("/usr/bin/zerg"); o.Kind != Updated {
		t.Fatalf("another zerg binary: %+v", o)
	}
	if got, _ := os.ReadFile(hook); string(got) != PrecommitScript("/usr/bin/zerg") {
		t.Fatalf("rewritten hook:\n%s", got)
	}
	mine := "#!/bin/sh\nmake lint\n"
	if err := os.WriteFile(hook, []byte(mine), 0o755); err != nil {
		t.Fatal(err)
	}
	o := install("/opt/zerg")
	if o.Kind != Existing || o.Verb != "kept" || !strings.HasSuffix(o.Detail, "add this line to it: '/opt/zerg' scan --staged") {
		t.Fatalf("user's hook: %+v", o)
	}
	if got, _ := os.ReadFile(hook); string(got) != mine {
		t.Fatalf("the user's hook was changed:\n%s", got)
	}
}
