package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkspaceRootMustBeZergsOwn: a ZERG_WORKSPACES (or a /var/tmp/zerg-0)
// that another account made, or that others may write, is refused with one
// line naming it and the way out; a missing one is fine, and
// MakeWorkspaceDirs makes it, mode 0711 down to the feature's directory.
func TestWorkspaceRootMustBeZergsOwn(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a directory to another account needs root (CI runs the unit tier as root)")
	}
	base := t.TempDir()
	planted := filepath.Join(base, "planted")
	os.Mkdir(planted, 0o755)
	if err := os.Chown(planted, 54321, 54321); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZERG_WORKSPACES", filepath.Join(planted, "worktrees"))
	_, err := WorkspaceRoot()
	if err == nil || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "ZERG_WORKSPACES="+filepath.Join(planted, "worktrees")+" is not zerg's own: "+planted+" belongs to uid 54321") ||
		!strings.Contains(err.Error(), "set ZERG_WORKSPACES to a directory only you can write") {
		t.Fatalf("another account's directory: %v", err)
	}

	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o777)
	t.Setenv("ZERG_WORKSPACES", open)
	if _, err := WorkspaceRoot(); err == nil || !strings.Contains(err.Error(), "may be written by other accounts") {
		t.Fatalf("a directory anyone may write: %v", err)
	}

	mine := filepath.Join(base, "mine", "worktrees")
	t.Setenv("ZERG_WORKSPACES", mine)
	root, err := WorkspaceRoot()
	if err != nil || root != mine {
		t.Fatalf("a missing directory: %q %v", root, err)
	}
	if _, err := os.Stat(filepath.Dir(mine)); !os.IsNotExist(err) {
		t.Fatal("WorkspaceRoot created a directory")
	}
	p := Paths{Workspaces: filepath.Join(mine, "repo-1234", "auth")}
	p.State = filepath.Join(p.Workspaces, "_state")
	if err := p.MakeWorkspaceDirs(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(mine), mine, filepath.Dir(p.Workspaces), p.Workspaces, p.State} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != WorkspaceDirMode {
			t.Errorf("%s: %v %v, want mode %o", d, fi.Mode(), err, WorkspaceDirMode)
		}
	}

	// Tasks mode's workspaces are in the repository: the advice says so.
	repo := filepath.Join(base, "repo")
	tasks := filepath.Join(repo, ".zerg", "tasks")
	os.MkdirAll(tasks, 0o755)
	os.Chown(tasks, 54321, 54321)
	p = Paths{Root: repo, Workspaces: filepath.Join(tasks, "auth")}
	if err := p.MakeWorkspaceDirs(); err == nil || strings.Contains(err.Error(), "ZERG_WORKSPACES") || !strings.Contains(err.Error(), tasks+" belongs to uid 54321") {
		t.Errorf("tasks mode's workspaces in another account's directory: %v", err)
	}
}
