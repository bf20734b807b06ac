package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeBuildVersion: the binary make build makes prints the version git
// describe gives its checkout, whatever GOFLAGS says of VCS stamping (this
// machine's go env has -buildvcs=false).
func TestMakeBuildVersion(t *testing.T) {
	for _, tool := range []string{"make", "git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bin := filepath.Join(t.TempDir(), "zerg")
	mk := exec.CommandContext(ctx, "make", "--no-print-directory", "build", "ZERG="+bin)
	mk.Dir = root
	mk.Env = append(mk.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	describe := exec.CommandContext(ctx, "git", "describe", "--tags", "--always", "--dirty", "--abbrev=12")
	describe.Dir = root
	want, err := describe.Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), "zerg "+strings.TrimSpace(string(want)); got != want {
		t.Errorf("zerg --version = %q, want %q", got, want)
	}
}
