package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/security"
)

func TestSetupRefusesWorkspacesTheWorkerCannotReach(t *testing.T) {
	base := t.TempDir()
	for d := base; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755) // the test's own parents, which Go makes 0700
	}
	closed := filepath.Join(base, "closed")
	os.MkdirAll(closed, 0o700)
	// A user that owns nothing here: only the "other" mode bits apply to it.
	u := &security.WorkerUser{Name: "someone", UID: 54321, GID: 54321}
	t.Setenv("ZERG_WORKSPACES", filepath.Join(closed, "ws"))
	err := checkSetup(u)
	if err == nil || !strings.Contains(err.Error(), "access to "+closed+" ") {
		t.Fatalf("err %v, want the directory named", err)
	}
	os.Chmod(closed, 0o711)
	if err := checkSetup(u); err != nil {
		t.Errorf("reachable directory refused: %v", err)
	}
	if err := checkSetup(nil); err != nil {
		t.Errorf("no worker user: %v", err)
	}
	t.Setenv("ZERG_WORKSPACES", "relative/ws")
	if err := checkSetup(nil); err == nil || !strings.Contains(err.Error(), "is relative") {
		t.Errorf("relative ZERG_WORKSPACES: %v", err)
	}
}

// planSetup: a workspace of this repository with uncommitted work stops a
// new run before anything is written; what git does not know is moved
// aside, never deleted.
func TestPlanSetupForANewRun(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	r := gitx.New(root)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "one"}} {
		if _, err := r.Run(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	repo := &gitx.Repo{Runner: r}
	ws := filepath.Join(t.TempDir(), "f")
	paths := Paths{Workspaces: ws, Merge: filepath.Join(ws, "_merge")}

	if p, err := planSetup(ctx, repo, paths, false); err != nil || p.aside != "" || len(p.remove) > 0 {
		t.Fatalf("nothing there: %+v %v", p, err)
	}
	// A foreign directory (a deleted repository's workspace): moved aside.
	os.MkdirAll(filepath.Join(ws, "T-1"), 0o755)
	os.WriteFile(filepath.Join(ws, "T-1", "work.txt"), []byte("x"), 0o644)
	p, err := planSetup(ctx, repo, paths, false)
	if err != nil || p.aside == "" {
		t.Fatalf("foreign workspace: %+v %v", p, err)
	}
	if err := p.apply(ctx, newProgress(nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(p.aside, "T-1", "work.txt")); err != nil {
		t.Errorf("moved-aside work lost: %v", err)
	}
	// A workspace of this repository with uncommitted work: refused.
	dirty := filepath.Join(ws, "U-1")
	if err := repo.AddWorktree(ctx, dirty, "zerg/f/task/U/1", "HEAD"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dirty, "new.txt"), []byte("unsaved"), 0o644)
	_, err = planSetup(ctx, repo, paths, false)
	var re *Error
	if !errors.As(err, &re) || re.Kind != StaleWorkspace || re.Path != dirty {
		t.Fatalf("dirty workspace: %v", err)
	}
	// Clean, it is removed.
	os.Remove(filepath.Join(dirty, "new.txt"))
	p, err = planSetup(ctx, repo, paths, false)
	if err != nil || len(p.remove) != 1 || p.aside != "" {
		t.Fatalf("clean workspace: %+v %v", p, err)
	}
	// A resume leaves the run's own workspaces alone.
	if p, err := planSetup(ctx, repo, paths, true); err != nil || len(p.remove)+len(p.discard) > 0 || p.aside != "" {
		t.Errorf("resume: %+v %v", p, err)
	}
}

// TestResumeTasksMode: a run resumes in another mode zerg starts workers in,
// but not across tasks mode's border, either way; runs recorded before the
// mode was recorded resume as before.
func TestResumeTasksMode(t *testing.T) {
	for _, tc := range []struct {
		rec, mode string
		refused   bool
	}{
		{"sandbox", "container", false},
		{"tasks", "tasks", false},
		{"", "tasks", false},
		{"tasks", "sandbox", true},
		{"subprocess", "tasks", true},
	} {
		err := resumeTasksMode(&RunStarted{Feature: "f", Mode: tc.rec}, tc.mode)
		if (err != nil) != tc.refused {
			t.Errorf("started in %q, resumed in %q: %v", tc.rec, tc.mode, err)
		}
	}
}

// TestSaidOnce: a note is said once per process, whatever asks again.
func TestSaidOnce(t *testing.T) {
	line := "zerg: .devcontainer/devcontainer.json: zerg does not honour postCreateCommand (test " + t.Name() + ")"
	if !saidOnce(line) || saidOnce(line) || saidOnce(line) {
		t.Error("the note is said more than once")
	}
}
