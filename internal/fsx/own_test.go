package fsx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// otherUID owns what "another account" made in these tests.
const otherUID = 54321

// asOther gives p to another account; it needs root, which CI has.
func asOther(t *testing.T, p string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another account needs root (CI runs the unit tier as root)")
	}
	if err := os.Lchown(p, otherUID, otherUID); err != nil {
		t.Fatal(err)
	}
}

// base is a directory that passes the check, for the tests to build in
// (t.TempDir is zerg's user's, 0700, under a sticky /tmp).
func base(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	if err := CheckOwnDir(d); err != nil {
		t.Fatalf("the test's own temporary directory does not pass: %v", err)
	}
	return d
}

func wantNotOwn(t *testing.T, err error, path, problem string) {
	t.Helper()
	var no *NotOwnError
	if !errors.As(err, &no) || no.Path != path || !strings.Contains(no.Problem, problem) {
		t.Fatalf("err %v, want %s to be named for %q", err, path, problem)
	}
}

// TestOwnDirCreatesFresh: the missing components are made with the mode
// asked for, whatever the umask, and a second call accepts them.
func TestOwnDirCreatesFresh(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	b := base(t)
	dir := filepath.Join(b, "zerg-0", "worktrees", "repo-1234")
	if err := OwnDir(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(b, "zerg-0"), filepath.Join(b, "zerg-0", "worktrees"), dir} {
		if m := modeOf(t, d); m != 0o711 {
			t.Errorf("%s: mode %o, want 711", d, m)
		}
	}
	if err := OwnDir(dir, 0o711); err != nil {
		t.Errorf("again: %v", err)
	}
}

// TestOwnDirRefusesAnotherAccountsDirectory: the attack of issue 35, a
// /var/tmp/zerg-0 made beforehand by another account: refused, naming it,
// and nothing is created in it. CheckOwnDir says the same.
func TestOwnDirRefusesAnotherAccountsDirectory(t *testing.T) {
	b := base(t)
	planted := filepath.Join(b, "zerg-0")
	if err := os.Mkdir(planted, 0o755); err != nil {
		t.Fatal(err)
	}
	asOther(t, planted)
	dir := filepath.Join(planted, "worktrees")
	wantNotOwn(t, OwnDir(dir, 0o711), planted, "belongs to uid 54321")
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("OwnDir created %s in another account's directory", dir)
	}
	wantNotOwn(t, CheckOwnDir(dir), planted, "belongs to uid 54321")
	wantNotOwn(t, CheckOwnDir(planted), planted, "belongs to uid 54321")
}

// TestOwnDirModes: a directory others may write is refused, unless it is a
// sticky one above the directory wanted (as /tmp is); the directory wanted
// itself may be written by nobody else, sticky or not.
func TestOwnDirModes(t *testing.T) {
	b := base(t)
	open := filepath.Join(b, "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o777)
	wantNotOwn(t, OwnDir(filepath.Join(open, "ws"), 0o700), open, "may be written by other accounts")
	wantNotOwn(t, CheckOwnDir(open), open, "may be written by other accounts")

	group := filepath.Join(b, "group")
	os.Mkdir(group, 0o755)
	os.Chmod(group, 0o775)
	wantNotOwn(t, CheckOwnDir(group), group, "may be written by other accounts")

	sticky := filepath.Join(b, "sticky")
	os.Mkdir(sticky, 0o755)
	os.Chmod(sticky, 0o777|os.ModeSticky)
	if err := OwnDir(filepath.Join(sticky, "ws"), 0o700); err != nil {
		t.Errorf("under a sticky directory: %v", err)
	}
	wantNotOwn(t, CheckOwnDir(sticky), sticky, "may be written by other accounts")

	file := filepath.Join(b, "file")
	os.WriteFile(file, nil, 0o600)
	wantNotOwn(t, OwnDir(filepath.Join(file, "ws"), 0o700), file, "is not a directory")
}

// TestOwnDirSymlinks: a symlink of zerg's user is followed and its target
// checked (ZERG_WORKSPACES may be one); one another account made, or one
// that leads into another account's directory, is refused.
func TestOwnDirSymlinks(t *testing.T) {
	b := base(t)
	target := filepath.Join(b, "real")
	os.Mkdir(target, 0o755)
	mine := filepath.Join(b, "mine")
	if err := os.Symlink(target, mine); err != nil {
		t.Fatal(err)
	}
	if err := OwnDir(filepath.Join(mine, "ws"), 0o711); err != nil {
		t.Fatalf("through zerg's own symlink: %v", err)
	}
	if _, err := os.Stat(filepath.Join(target, "ws")); err != nil {
		t.Errorf("the directory was not made in the symlink's target: %v", err)
	}
	rel := filepath.Join(b, "rel")
	os.Symlink("real", rel)
	if err := CheckOwnDir(rel); err != nil {
		t.Errorf("a relative symlink: %v", err)
	}

	theirs := filepath.Join(b, "theirs")
	os.Symlink(target, theirs)
	asOther(t, theirs)
	wantNotOwn(t, OwnDir(filepath.Join(theirs, "ws"), 0o711), theirs, "belongs to uid 54321")

	elsewhere := filepath.Join(b, "elsewhere")
	os.Mkdir(elsewhere, 0o755)
	asOther(t, elsewhere)
	into := filepath.Join(b, "into")
	os.Symlink(elsewhere, into)
	wantNotOwn(t, CheckOwnDir(into), elsewhere, "belongs to uid 54321")

	loop := filepath.Join(b, "loop")
	os.Symlink(loop, loop)
	wantNotOwn(t, CheckOwnDir(loop), loop, "more than 40 symlinks")
}

// TestCheckOwnDirCreatesNothing: a missing directory is fine and stays
// missing.
func TestCheckOwnDirCreatesNothing(t *testing.T) {
	dir := filepath.Join(base(t), "a", "b")
	if err := CheckOwnDir(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Dir(dir)); !os.IsNotExist(err) {
		t.Errorf("CheckOwnDir created %s", filepath.Dir(dir))
	}
}

// TestMkdirTempChecksTheTemporaryDirectory: a TMPDIR others may write (not
// sticky) is refused; a sticky one, as /tmp, is used.
func TestMkdirTempChecksTheTemporaryDirectory(t *testing.T) {
	b := base(t)
	open := filepath.Join(b, "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o777)
	t.Setenv("TMPDIR", open)
	if d, err := MkdirTemp("zerg-x-"); err == nil || !strings.Contains(err.Error(), "set TMPDIR") {
		t.Errorf("MkdirTemp in a directory anyone may write: %q, %v", d, err)
	}
	if f, err := CreateTemp("zerg-x-"); err == nil {
		f.Close()
		t.Errorf("CreateTemp in a directory anyone may write: %s", f.Name())
	}
	os.Chmod(open, 0o777|os.ModeSticky)
	d, err := MkdirTemp("zerg-x-")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(d) != open || modeOf(t, d) != 0o700 {
		t.Errorf("MkdirTemp made %s, mode %o", d, modeOf(t, d))
	}
}
