package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/toolchain"
)

// A mode is its factory and one registration: a new mode, registered
// through driver.Register alone (no line of internal/run knows its name),
// runs a whole attempt through the real coordinator, pipeline, checks and
// merge, and the run records the factory's capabilities in its first
// event and the workspace kind in the attempt's.
func TestANewModeThroughTheRegistryAloneDeliversARun(t *testing.T) {
	ctx := context.Background()
	t.Setenv("ZERG_WORKSPACES", filepath.Join(t.TempDir(), "ws"))
	root := t.TempDir()
	r := gitx.New(root)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"}} {
		if _, err := r.Run(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	graph := `{"feature":"f","tasks":[{"id":"T1","title":"greet","level":1,"files":{"create":["greet.txt"],"modify":[],"read":[]},"verification":{"command":"true"}}]}`
	for name, body := range map[string]string{"README.md": "x\n", ".zerg/specs/f/task-graph.json": graph, ".gitignore": ".zerg/\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"add", "README.md", ".gitignore"}, {"commit", "-q", "-m", "base"}} {
		if _, err := r.Run(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}

	d := &fakeModeDriver{files: map[string]string{"greet.txt": "hello\n"}}
	caps := driver.Capabilities{StartsWorker: true, Workspace: driver.CloneWorkspace}
	t.Cleanup(driver.Register(driver.Factory{Mode: "fake", Capabilities: caps,
		New: func(context.Context, driver.Env) (driver.Driver, []toolchain.Cache, error) { return d, nil, nil },
	}))

	cfg := config.Default()
	cfg.Mode = "fake"
	cfg.SecurityRules.Enabled = false
	run, err := Open(ctx, Options{Root: root, Feature: "f", Config: cfg, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	v, err := run.Execute(ctx, claude.Spec{Binary: "claude"})
	if err != nil {
		t.Fatalf("%v (driver calls %v)", err, d.calls)
	}
	if v.State != runstate.RunDelivered {
		t.Fatalf("run %s, want delivered (driver calls %v)", v.State, d.calls)
	}
	if got, err := r.Run(ctx, "show", IntegrationBranch("f")+":greet.txt"); err != nil || got != "hello\n" {
		t.Fatalf("the integration branch's greet.txt: %q %v", got, err)
	}
	if want := []string{"prepare", "launch", "exec true", "snapshot"}; !strings.HasPrefix(strings.Join(d.calls, ","), strings.Join(want, ",")) {
		t.Errorf("driver calls %v, want %v first", d.calls, want)
	}
	paths, _ := PathsFor(ctx, root, "f")
	evs, err := eventlog.Read(paths.Events)
	if err != nil {
		t.Fatal(err)
	}
	st := runstate.Replay(evs)
	if st.Started == nil || st.Started.Capabilities == nil || *st.Started.Capabilities != caps {
		t.Errorf("the run recorded capabilities %+v, want %+v", st.Started, caps)
	}
	for _, e := range evs {
		var a runstate.AttemptStarted
		if e.Type == runstate.EvAttemptStarted && (e.Decode(&a) != nil || a.WorkspaceKind != driver.CloneWorkspace) {
			t.Errorf("attempt_started records the workspace kind %q, want %q", a.WorkspaceKind, driver.CloneWorkspace)
		}
	}
	if ts := st.Task("T1"); ts.Status != runstate.StatusMerged {
		t.Errorf("T1 %s, want merged", ts.Status)
	}
}

// fakeModeDriver runs no worker: its workspace "writes" files, and its
// snapshot is their commit in the quarantine.
type fakeModeDriver struct {
	files map[string]string
	calls []string
}

func (d *fakeModeDriver) Name() string { return "fake" }

func (d *fakeModeDriver) Prepare(ctx context.Context, a driver.Attempt) (driver.Workspace, error) {
	d.calls = append(d.calls, "prepare")
	return &fakeModeWorkspace{d: d, a: a}, os.MkdirAll(a.Workspace, 0o700)
}

func (d *fakeModeDriver) Reopen(ctx context.Context, a driver.Attempt) (driver.Workspace, error) {
	return &fakeModeWorkspace{d: d, a: a}, nil
}

func (d *fakeModeDriver) Isolate(ctx context.Context, commit, name string) (driver.Workspace, error) {
	return &fakeModeWorkspace{d: d}, nil
}

type fakeModeWorkspace struct {
	d *fakeModeDriver
	a driver.Attempt
}

func (w *fakeModeWorkspace) Dir() string { return w.a.Workspace }

func (w *fakeModeWorkspace) Launch(ctx context.Context, sp claude.Spec, start driver.Starter) (driver.Verdict, error) {
	w.d.calls = append(w.d.calls, "launch")
	return driver.Verdict{Class: outcome.Success, Reason: outcome.ReasonCompleted}, nil
}

func (w *fakeModeWorkspace) Exec(ctx context.Context, c driver.Command) (int, string) {
	w.d.calls = append(w.d.calls, "exec "+c.Command)
	return 0, ""
}

func (w *fakeModeWorkspace) Snapshot(ctx context.Context, q *gitx.Quarantine, base string) (string, string) {
	w.d.calls = append(w.d.calls, "snapshot")
	r := *q.Runner
	r.ExtraEnv = append(r.ExtraEnv, "GIT_INDEX_FILE="+filepath.Join(q.Dir, "fake-index"))
	if _, err := r.Run(ctx, "read-tree", base); err != nil {
		return "", err.Error()
	}
	for p, content := range w.d.files {
		oid, err := r.RunInput(ctx, []byte(content), "hash-object", "-w", "--stdin")
		if err != nil {
			return "", err.Error()
		}
		if _, err := r.Run(ctx, "update-index", "--add", "--cacheinfo", "100644,"+strings.TrimSpace(oid)+","+p); err != nil {
			return "", err.Error()
		}
	}
	tree, err := r.Run(ctx, "write-tree")
	if err != nil {
		return "", err.Error()
	}
	commit, err := q.CommitTree(ctx, strings.TrimSpace(tree), base, "attempt", nil)
	if err != nil {
		return "", err.Error()
	}
	return commit, ""
}

func (w *fakeModeWorkspace) Keep(why string) string           { return "kept" }
func (w *fakeModeWorkspace) Remove(ctx context.Context) error { return nil }
func (w *fakeModeWorkspace) Discard(ctx context.Context) error {
	return nil
}
func (w *fakeModeWorkspace) Close() {}
