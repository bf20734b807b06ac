package security

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestValidWorkerUserName(t *testing.T) {
	for name, ok := range map[string]bool{
		"zerg-worker": true, "_w": true, "w1": true,
		"root": false, "": false, "1abc": false, "-x": false, "Zerg": false, "a b": false, "a/b": false,
		strings.Repeat("a", 32): false,
	} {
		if err := ValidWorkerUserName(name); (err == nil) != ok {
			t.Errorf("%q: %v", name, err)
		}
	}
}

// requireRoot fails (never skips): CI runs these as root, where workers must
// run as another user.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root: it creates the worker user and changes file owners (CI runs as root)")
	}
}

// testWorkerUser returns the default worker user, creating it if needed.
func testWorkerUser(t *testing.T) *WorkerUser {
	t.Helper()
	requireRoot(t)
	u, err := EnsureWorkerUser(context.Background(), DefaultWorkerUser)
	if err != nil {
		t.Fatalf("cannot create the worker user %s (useradd must be available): %v", DefaultWorkerUser, err)
	}
	return u
}

func TestEnsureWorkerUser(t *testing.T) {
	u := testWorkerUser(t)
	if u.UID == 0 || u.GID == 0 || u.Name != DefaultWorkerUser {
		t.Fatalf("worker user %+v", u)
	}
	// Idempotent.
	again, err := EnsureWorkerUser(context.Background(), DefaultWorkerUser)
	if err != nil || *again != *u {
		t.Fatalf("second ensure: %+v %v", again, err)
	}
	uid, gid, _, err := ResolveWorkerUser(DefaultWorkerUser)
	if err != nil || uid != u.UID || gid != u.GID {
		t.Fatalf("resolve: %d %d %v", uid, gid, err)
	}
	if _, err := EnsureWorkerUser(context.Background(), "root"); !errors.Is(err, ErrWorkerUser) {
		t.Fatalf("root accepted: %v", err)
	}
}

func TestCheckAccessAndPrepare(t *testing.T) {
	u := testWorkerUser(t)
	root := openTempDir(t)
	private := filepath.Join(root, "private")
	ws := filepath.Join(private, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(ws, "src", "a.go"), filepath.Join(ws, ".git")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A 0700 root directory on the way is named in the error.
	err := u.PrepareWorkspace(ws)
	if err == nil || !strings.Contains(err.Error(), "cannot enter "+private) {
		t.Fatalf("unreachable workspace: %v", err)
	}
	if err := os.Chmod(private, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := u.PrepareWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	for p, wantUID := range map[string]int{ws: u.UID, filepath.Join(ws, "src", "a.go"): u.UID, filepath.Join(ws, ".git"): 0} {
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := int(st.Sys().(*syscall.Stat_t).Uid); got != wantUID {
			t.Errorf("%s owned by %d, want %d", p, got, wantUID)
		}
	}
	att := filepath.Join(root, "attempt")
	if err := u.PrepareAttemptDir(att, "home", "tmp"); err != nil {
		t.Fatal(err)
	}
	if err := u.CheckAccess(filepath.Join(att, "home"), AccessWrite|AccessExec); err != nil {
		t.Fatal(err)
	}
	if err := u.CheckAccess(att, AccessWrite); err == nil {
		t.Fatal("the attempt dir itself is writable by the worker")
	}
	// Executables: a root-only binary is refused with its path.
	bin := filepath.Join(root, "tool")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := u.CheckAccess(bin, AccessExec); err == nil || !strings.Contains(err.Error(), bin) {
		t.Fatalf("root-only binary: %v", err)
	}
	// Through a symlink the target's directories count too.
	if err := os.Symlink(filepath.Join(private, "ws", "src", "a.go"), filepath.Join(root, "ln")); err != nil {
		t.Fatal(err)
	}
	if err := u.CheckAccess(filepath.Join(root, "ln"), AccessRead); err != nil {
		t.Fatal(err)
	}
}

// openTempDir is a t.TempDir the worker user can enter: testing creates it
// (and its parent) 0700.
func openTempDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	for _, p := range []string{filepath.Dir(d), d} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// Only root needs a worker user; one that cannot be had says what to set.
func TestWorkerUserFor(t *testing.T) {
	if u, err := workerUserFor(context.Background(), 1000, "no such user"); u != nil || err != nil {
		t.Errorf("not root: %v, %v", u, err)
	}
	_, err := workerUserFor(context.Background(), 0, "Not A Name!")
	if err == nil || !strings.Contains(err.Error(), `running as root needs the unprivileged worker user "Not A Name!"`) || !strings.Contains(err.Error(), "security.worker_user") {
		t.Errorf("a bad name: %v", err)
	}
}
