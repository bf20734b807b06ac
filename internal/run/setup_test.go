package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/runstate"
)

// A relative ZERG_WORKSPACES is refused (the reach of the worker user is
// driver's checkSetup, TestSetupRefusesWorkspacesTheWorkerCannotReach).
func TestWorkspaceRootRefusesARelativeDirectory(t *testing.T) {
	t.Setenv("ZERG_WORKSPACES", "relative/ws")
	if _, err := WorkspaceRoot(); err == nil || !strings.Contains(err.Error(), "is relative") {
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
// mode was recorded resume as before. The border is the capabilities the
// run recorded (the mode's when it recorded none).
func TestResumeTasksMode(t *testing.T) {
	session := &driver.Capabilities{Workspace: driver.CloneWorkspace}
	for _, tc := range []struct {
		rec, mode string
		caps      *driver.Capabilities
		refused   bool
	}{
		{"sandbox", "container", nil, false},
		{"tasks", "tasks", nil, false},
		{"", "tasks", nil, false},
		{"tasks", "sandbox", nil, true},
		{"subprocess", "tasks", nil, true},
		{"subprocess", "tasks", session, false},
		{"tasks", "subprocess", session, true},
	} {
		cfg := config.Default()
		cfg.Mode = tc.mode
		err := resumeTasksMode(&runstate.RunStarted{Feature: "f", Mode: tc.rec, Capabilities: tc.caps}, driver.CapabilitiesOf(cfg))
		if (err != nil) != tc.refused {
			t.Errorf("started in %q (%v), resumed in %q: %v", tc.rec, tc.caps, tc.mode, err)
		}
	}
}
