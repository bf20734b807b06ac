package attempt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/spec"
)

// waitingCLI is a stand-in CLI that, like the real one with
// --input-format stream-json, waits on stdin for its prompt: it records
// its PID, then the line it was given, and ends with a result (or at once
// when stdin closed empty). Given its prompt in argv, it ends with a
// result at once.
const waitingCLI = `#!/bin/sh
echo $$ >> "$FAKE_DIR/started"
case "$*" in
*--input-format*)
  IFS= read -r line
  printf '%s\n' "$line" > "$FAKE_DIR/stdin"
  [ -n "$line" ] || exit 0 ;;
esac
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"done","session_id":"11111111-2222-4333-8444-555555555555","total_cost_usd":0.01,"usage":{"input_tokens":10,"output_tokens":5}}'
`

// preparingDriver's workspaces start the worker for real (the stand-in
// CLI, through the pipeline's starter) and can be laid again (Rebaser).
type preparingDriver struct {
	*fakeDriver
	mu        sync.Mutex
	log       []string
	rebaseErr error
}

func (d *preparingDriver) record(s string) {
	d.mu.Lock()
	d.log = append(d.log, s)
	d.mu.Unlock()
}

func (d *preparingDriver) calls() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.log)
}

func (d *preparingDriver) Prepare(ctx context.Context, a driver.Attempt) (driver.Workspace, error) {
	d.record("prepare " + a.Base[:7])
	if err := os.MkdirAll(a.Workspace, 0o755); err != nil {
		return nil, err
	}
	return &startingWorkspace{fakeWorkspace: &fakeWorkspace{d: d.fakeDriver, a: a}, d: d}, nil
}

type startingWorkspace struct {
	*fakeWorkspace
	d *preparingDriver
}

func (w *startingWorkspace) Launch(ctx context.Context, sp claude.Spec, start driver.Starter) (driver.Verdict, error) {
	w.d.record("launch")
	out, err := start(ctx, sp)
	if err != nil {
		return driver.Verdict{}, err
	}
	return driver.Verdict{Worker: out, Class: out.Class, Reason: out.Reason, Detail: out.Detail}, nil
}

func (w *startingWorkspace) Rebase(ctx context.Context, base string) error {
	w.d.record("rebase " + base[:7])
	return w.d.rebaseErr
}

func (w *startingWorkspace) Discard(ctx context.Context) error {
	w.d.record("discard")
	return os.RemoveAll(w.a.Workspace)
}

func (w *startingWorkspace) Close() { w.d.record("close") }

// preparedInput is an attempt of task T1 whose worker is the stand-in CLI,
// from base.
func preparedInput(t *testing.T, d driver.Driver, base string) (Input, string) {
	t.Helper()
	repo, _ := testRepo(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "claude")
	if err := os.WriteFile(bin, []byte(waitingCLI), 0o755); err != nil {
		t.Fatal(err)
	}
	task := &spec.Task{ID: "T1", Title: "greet", Files: spec.Files{Create: []string{"greet.go"}},
		Verification: &spec.Verification{Command: "true"}}
	return Input{Driver: d, Repo: repo, Feature: "f", Graph: &spec.Graph{Tasks: []*spec.Task{task}}, Task: task, Number: 1,
		Base: base, Workspace: filepath.Join(dir, "ws"), Branch: "zerg/f/T1-1", Dir: filepath.Join(dir, "rec"),
		WorkerDir: filepath.Join(dir, "state"),
		Worker: claude.Spec{Binary: bin, API: claude.APISettings{BaseURL: "http://127.0.0.1:9", APIKey: "sk-ant-test-0000"},
			Hook: claude.HookSpec{Disabled: true}, SetEnv: map[string]string{"FAKE_DIR": dir}, KillGrace: time.Second},
	}, dir
}

func startedPIDs(t *testing.T, dir string) []int {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dir, "started"))
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

func waitStarted(t *testing.T, dir string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if len(startedPIDs(t, dir)) > 0 {
			return
		}
	}
	t.Fatal("the prepared worker's CLI never started")
}

// A prepared worker's CLI starts before its attempt runs and waits; the
// attempt, from a newer base, lays the workspace again, sends the prompt
// to that same process and goes through the pipeline. Control: the same
// attempt without a prepared worker starts its own CLI and lays nothing
// again.
func TestPreparedWorkerRunsItsAttempt(t *testing.T) {
	base := strings.Repeat("a", 40) // a commit before the attempt's own
	for _, prepared := range []bool{true, false} {
		t.Run("prepared="+strconv.FormatBool(prepared), func(t *testing.T) {
			d := &preparingDriver{fakeDriver: &fakeDriver{files: map[string]string{"greet.go": "package x"}}}
			in, dir := preparedInput(t, d, base)
			if prepared {
				p, err := Prepare(context.Background(), in)
				if err != nil {
					t.Fatal(err)
				}
				waitStarted(t, dir)
				in.Prepared = p
			}
			// The attempt's base, newer: the repository's head.
			repoBase, err := in.Repo.RevParse(context.Background(), "HEAD")
			if err != nil {
				t.Fatal(err)
			}
			in.Base = repoBase
			res, err := Run(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if res.Class != outcome.Success {
				t.Fatalf("result %s/%s: %s", res.Class, res.Reason, res.Detail)
			}
			if res.Phases.Prepared != prepared {
				t.Errorf("Phases.Prepared %v, want %v", res.Phases.Prepared, prepared)
			}
			if n := len(startedPIDs(t, dir)); n != 1 {
				t.Errorf("%d CLI processes started, want 1", n)
			}
			stdin, _ := os.ReadFile(filepath.Join(dir, "stdin"))
			if prepared != strings.Contains(string(stdin), `"type":"user"`) {
				t.Errorf("stdin %q: the prompt went by stdin only to the prepared worker", stdin)
			}
			calls := d.calls()
			wantRebase := "rebase " + repoBase[:7]
			if prepared != slices.Contains(calls, wantRebase) {
				t.Errorf("calls %v: the prepared worker's workspace is laid again from the attempt's base", calls)
			}
			if prepared && !slices.Equal(calls[:3], []string{"prepare aaaaaaa", "launch", wantRebase}) {
				t.Errorf("calls %v, want prepare from the old base, launch, then rebase", calls)
			}
		})
	}
}

// A prepared worker that is never used is thrown away whole: its CLI is
// gone, and its workspace, its state and its records are removed.
func TestDiscardedPreparedWorkerLeavesNothing(t *testing.T) {
	d := &preparingDriver{fakeDriver: &fakeDriver{}}
	in, dir := preparedInput(t, d, strings.Repeat("a", 40))
	p, err := Prepare(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	waitStarted(t, dir)
	pid := startedPIDs(t, dir)[0]
	p.Discard()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the prepared CLI %d is still there (%v)", pid, err)
	}
	for _, path := range []string{in.Workspace, in.WorkerDir, in.Dir} {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", path, err)
		}
	}
	if calls := d.calls(); !slices.Contains(calls, "discard") || calls[len(calls)-1] != "close" {
		t.Errorf("calls %v, want a discard and the slot closed", calls)
	}
	p.Discard() // a second time does nothing
}

// A prepared worker whose workspace cannot be laid again is thrown away and
// the attempt runs afresh, on a worker of its own.
func TestPreparedWorkerThatCannotBeRebasedIsReplaced(t *testing.T) {
	d := &preparingDriver{fakeDriver: &fakeDriver{files: map[string]string{"greet.go": "package x"}}, rebaseErr: errors.New("disk")}
	in, dir := preparedInput(t, d, strings.Repeat("a", 40))
	p, err := Prepare(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	waitStarted(t, dir)
	in.Prepared = p
	in.Base, err = in.Repo.RevParse(context.Background(), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Class != outcome.Success || res.Phases.Prepared {
		t.Fatalf("result %s/%s prepared %v: %s", res.Class, res.Reason, res.Phases.Prepared, res.Detail)
	}
	pids := startedPIDs(t, dir)
	if len(pids) != 2 {
		t.Fatalf("%d CLIs started, want the prepared one and the attempt's own", len(pids))
	}
	if err := syscall.Kill(pids[0], 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the prepared CLI %d is still there", pids[0])
	}
}

// What a prepared worker left when its coordinator died (its record still
// marked) is removed before its attempt runs; a workspace whose record has
// no mark is never touched (control).
func TestRemoveUnusedPrepared(t *testing.T) {
	for _, marked := range []bool{true, false} {
		dir := t.TempDir()
		in := Input{Dir: filepath.Join(dir, "rec"), Workspace: filepath.Join(dir, "ws"), WorkerDir: filepath.Join(dir, "state")}
		for _, d := range []string{in.Dir, in.Workspace, in.WorkerDir} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		file := filepath.Join(in.Workspace, "README")
		if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if marked {
			if err := os.WriteFile(Record(in.Dir).Prepared(), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := removeUnusedPrepared(in); err != nil {
			t.Fatal(err)
		}
		_, err := os.Stat(file)
		if gone := os.IsNotExist(err); gone != marked {
			t.Errorf("marked %v: workspace removed %v", marked, gone)
		}
		if _, err := os.Stat(Record(in.Dir).Prepared()); !os.IsNotExist(err) {
			t.Errorf("marked %v: the mark is still there", marked)
		}
	}
}

// A coordinator killed while it held a prepared worker left its marked
// workspace; preparing the same attempt again (a resume's) starts from
// nothing, and a failed Prepare leaves nothing either.
func TestPrepareOverADeadCoordinatorsWorker(t *testing.T) {
	d := &preparingDriver{fakeDriver: &fakeDriver{}}
	in, dir := preparedInput(t, d, strings.Repeat("a", 40))
	left := filepath.Join(in.Workspace, "left-by-the-dead-one")
	for _, p := range []string{in.Dir, in.Workspace} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(left, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(Record(in.Dir).Prepared(), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	waitStarted(t, dir)
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the dead coordinator's workspace was prepared over (%v)", err)
	}
	p.Discard()

	failing := &failingDriver{preparingDriver: d}
	if _, err := Prepare(context.Background(), Input{Driver: failing, Task: in.Task, Number: 1, Dir: in.Dir,
		Workspace: in.Workspace, WorkerDir: in.WorkerDir}); err == nil {
		t.Fatal("Prepare on a failing driver succeeded")
	}
	for _, path := range []string{in.Workspace, in.WorkerDir, in.Dir} {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("a failed Prepare left %s (%v)", path, err)
		}
	}
}

// failingDriver lays part of a workspace and fails.
type failingDriver struct{ *preparingDriver }

func (d *failingDriver) Prepare(ctx context.Context, a driver.Attempt) (driver.Workspace, error) {
	if err := os.MkdirAll(filepath.Join(a.Workspace, ".git"), 0o755); err != nil {
		return nil, err
	}
	return nil, errors.New("clone failed half-way")
}
