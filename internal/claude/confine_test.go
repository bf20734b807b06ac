package claude

// Confinement checks that need the unprivileged worker user (these tests
// need root, as CI has) but no real CLI: the runs of the real CLI as the
// worker user are in e2e/claude.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/policy"
	"github.com/zergrush/zerg/internal/security"
)

// workerUser returns the default worker user, creating it (CI runs as root
// on Debian with useradd). Never a skip: without root the test fails.
func workerUser(t *testing.T) *WorkerUser {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("confinement tests need root: they run the worker as " + security.DefaultWorkerUser)
	}
	u, err := security.EnsureWorkerUser(context.Background(), security.DefaultWorkerUser)
	if err != nil {
		t.Fatalf("create worker user %s: %v", security.DefaultWorkerUser, err)
	}
	return u
}

// openDir is a t.TempDir every user can enter (testing makes it and its
// parent 0700), so the worker can reach what is put there.
func openDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	for _, p := range []string{filepath.Dir(d), d} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// TestConfineSpecChecks: a worker user that cannot reach the workdir or the
// hook binary fails at Start with the directory named.
func TestConfineSpecChecks(t *testing.T) {
	u := workerUser(t)
	root := openDir(t)
	ws := filepath.Join(root, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	// Start must refuse before it launches anything, so stand-ins do for
	// the CLI and the hook binary: what is checked is that the worker user
	// can reach them.
	bin := filepath.Join(root, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	fakeCLI, fakeZerg := filepath.Join(bin, "claude"), filepath.Join(bin, "zerg")
	for _, p := range []string{fakeCLI, fakeZerg} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := Spec{Binary: fakeCLI, Workdir: ws, AttemptDir: filepath.Join(root, "att"), Prompt: "x",
		RunAs: u, Hook: HookSpec{ZergBinary: fakeZerg}}
	// Not handed over: the worker cannot write the workdir.
	_, err := Start(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), "workdir") {
		t.Fatalf("unprepared workdir: %v", err)
	}
	if err := u.PrepareWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	hidden := filepath.Join(root, "hidden")
	if err := os.Mkdir(hidden, 0o700); err != nil {
		t.Fatal(err)
	}
	zerg := filepath.Join(hidden, "zerg")
	if err := os.WriteFile(zerg, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.Hook.ZergBinary = zerg
	_, err = Start(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), hidden) || !strings.Contains(err.Error(), "zerg binary") {
		t.Fatalf("unreachable hook binary: %v", err)
	}
	// Settings and policy are readable but not writable by the worker; its
	// private dirs are its own.
	s.Hook.ZergBinary = fakeZerg
	n, err := s.normalize()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.prepare(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{n.settingsPath(), n.policyPath()} {
		if err := u.CheckAccess(p, security.AccessRead); err != nil {
			t.Error(err)
		}
		if err := u.CheckAccess(p, security.AccessWrite); err == nil {
			t.Errorf("%s writable by the worker", p)
		}
	}
	if err := u.CheckAccess(n.homePath(), security.AccessWrite|security.AccessExec); err != nil {
		t.Error(err)
	}
	var pol policy.Policy
	data, _ := os.ReadFile(n.policyPath())
	if err := json.Unmarshal(data, &pol); err != nil || pol.Bash.Unrestricted || len(pol.Bash.Allow) == 0 || pol.Protected[0] != n.AttemptDir {
		t.Errorf("policy %s: %v", data, err)
	}
}
