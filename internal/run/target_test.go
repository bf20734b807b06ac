package run

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/runstate"
)

// TestChooseRun: the feature named, else the only run; none or several
// with none named are bad input, in one line.
func TestChooseRun(t *testing.T) {
	for _, c := range []struct {
		name    string
		runs    []string
		feature string
		want    string
		err     string
	}{
		{"named", []string{"a", "b"}, "b", "b", ""},
		{"named, not a run yet", nil, "auth", "auth", ""},
		{"the only run", []string{"auth"}, "", "auth", ""},
		{"none", nil, "", "", "no zerg run in this repository; start one with zerg rush FEATURE"},
		{"several", []string{"a", "b"}, "", "", "several runs (a, b); name the feature as the first argument"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ChooseRun(c.runs, c.feature)
			if c.err == "" {
				if err != nil || got != c.want {
					t.Fatalf("ChooseRun = %q, %v; want %q", got, err, c.want)
				}
				return
			}
			if err == nil || err.Error() != c.err || !errors.Is(err, BadInput) {
				t.Fatalf("ChooseRun error = %v; want bad input %q", err, c.err)
			}
		})
	}
}

// TestSplitTaskArgs: a first argument is the feature when it is a run and
// tasks follow, or when it is no name a task could have; else all are tasks.
func TestSplitTaskArgs(t *testing.T) {
	runs := []string{"auth", "shop"}
	for _, c := range []struct {
		args    []string
		feature string
		tasks   []string
	}{
		{[]string{"T1"}, "", []string{"T1"}},
		{[]string{"auth"}, "", []string{"auth"}},
		{[]string{"auth", "T1", "T2"}, "auth", []string{"T1", "T2"}},
		{[]string{"T1", "T2"}, "", []string{"T1", "T2"}},
		{[]string{"../x", "T1"}, "../x", []string{"T1"}},
		{[]string{"a/b", "T1"}, "a/b", []string{"T1"}},
		{nil, "", nil},
	} {
		f, tasks := SplitTaskArgs(c.args, runs)
		if f != c.feature || strings.Join(tasks, " ") != strings.Join(c.tasks, " ") {
			t.Errorf("SplitTaskArgs(%q) = %q, %q; want %q, %q", c.args, f, tasks, c.feature, c.tasks)
		}
	}
}

// TestUnknownTask: the first unknown task is named with the feature and at
// most 12 of its tasks; nothing to check against refuses nothing.
func TestUnknownTask(t *testing.T) {
	if err := FirstUnknownTask([]string{"T1", "T2"}, []string{"T1", "T2"}, "auth"); err != nil {
		t.Errorf("known tasks: %v", err)
	}
	if err := FirstUnknownTask([]string{"X"}, nil, "auth"); err != nil {
		t.Errorf("no tasks to check against: %v", err)
	}
	err := FirstUnknownTask([]string{"T1", "NOPE", "ALSO"}, []string{"T1", "T2"}, "auth")
	if err == nil || err.Error() != `unknown task "NOPE" in feature auth (its tasks: T1, T2)` || !errors.Is(err, BadInput) {
		t.Errorf("unknown task: %v", err)
	}
	var ids []string
	for _, c := range "abcdefghijklmn" {
		ids = append(ids, string(c))
	}
	err = UnknownTask("z", "shop", ids)
	if want := `unknown task "z" in feature shop (its tasks: a, b, c, d, e, f, g, h, i, j, k, l, …)`; err.Error() != want {
		t.Errorf("many tasks: %v, want %s", err, want)
	}
	if len(ids) != 14 || ids[12] != "m" {
		t.Errorf("UnknownTask changed its caller's ids: %q", ids)
	}
}

// TestResolve: in a repository, the only run is found and named runs are
// checked; a run without a log is bad input naming the log; outside a
// repository is bad input too.
func TestResolve(t *testing.T) {
	t.Setenv("ZERG_WORKSPACES", filepath.Join(t.TempDir(), "ws"))
	ctx := context.Background()
	root := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	root, _ = filepath.EvalSymlinks(root)
	sub := filepath.Join(root, "src")
	os.MkdirAll(sub, 0o755)

	if _, err := Resolve(ctx, sub, ""); err == nil || !strings.Contains(err.Error(), "no zerg run in this repository") {
		t.Fatalf("no run: %v", err)
	}
	os.MkdirAll(RunDirOf(root, "auth"), 0o755)
	os.WriteFile(filepath.Join(RunDirOf(root, "auth"), "events.jsonl"), nil, 0o644)
	tg, err := Resolve(ctx, sub, "")
	if err != nil || tg.Feature != "auth" || tg.Root != root || tg.Paths.Events != filepath.Join(RunDirOf(root, "auth"), "events.jsonl") {
		t.Fatalf("the only run: %+v %v", tg, err)
	}
	if _, err := Resolve(ctx, sub, "../x"); !errors.Is(err, BadInput) {
		t.Fatalf("a feature that is no name: %v", err)
	}

	tg, tasks, err := ResolveTaskArgs(ctx, sub, []string{"auth", "T1"})
	if err != nil || tg.Feature != "auth" || len(tasks) != 1 || tasks[0] != "T1" {
		t.Fatalf("ResolveTaskArgs: %+v %q %v", tg, tasks, err)
	}

	none, err := Resolve(ctx, sub, "shop")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = none.Inspect()
	if want := "no run of shop (" + none.Paths.Events + " does not exist); start one with zerg rush shop"; err == nil || err.Error() != want || !errors.Is(err, BadInput) {
		t.Fatalf("Inspect of no run: %v, want %s", err, want)
	}
	if err := none.CheckTasks([]string{"X"}); err != nil {
		t.Fatalf("CheckTasks without a log: %v", err)
	}

	if _, err := Resolve(ctx, t.TempDir(), ""); !errors.Is(err, BadInput) {
		t.Fatalf("outside a repository: %v", err)
	}
}

// TestPoller: the live view polls Inspect's view; no log is Inspect's error.
func TestPoller(t *testing.T) {
	dir := t.TempDir()
	p := Paths{Feature: "auth", Root: dir, RunDir: dir, Events: filepath.Join(dir, "events.jsonl"),
		Coordinator: filepath.Join(dir, "coordinator.json"), Graph: filepath.Join(dir, "none.json"), GraphSnapshot: filepath.Join(dir, "graph.json")}
	if _, err := Poller(p)(); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no log: %v", err)
	}
	os.WriteFile(p.Events, nil, 0o644)
	v, err := Poller(p)()
	if err != nil || v.Feature != "auth" || v.State != runstate.RunNotStarted {
		t.Fatalf("an empty log: %+v %v", v, err)
	}
}
