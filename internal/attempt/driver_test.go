package attempt

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

// fakeDriver runs no worker and no command: its workspace "produces" the
// files it was given, and it records what the pipeline asked of it, in
// order.
type fakeDriver struct {
	files   map[string]string // path → content the worker "wrote"; "" deletes
	refused []driver.Refusal  // the calls the worker's CLI refused
	verify  int               // the verification's exit code
	calls   []string
	removed bool
	kept    string
}

func (d *fakeDriver) Name() string { return "fake" }

func (d *fakeDriver) Prepare(ctx context.Context, a driver.Attempt) (driver.Workspace, error) {
	d.calls = append(d.calls, "prepare")
	return &fakeWorkspace{d: d, a: a}, nil
}

func (d *fakeDriver) Reopen(ctx context.Context, a driver.Attempt) (driver.Workspace, error) {
	d.calls = append(d.calls, "reopen")
	return &fakeWorkspace{d: d, a: a}, nil
}

func (d *fakeDriver) Isolate(ctx context.Context, commit, name string) (driver.Workspace, error) {
	return nil, fmt.Errorf("not used")
}

type fakeWorkspace struct {
	d *fakeDriver
	a driver.Attempt
}

func (w *fakeWorkspace) Dir() string { return w.a.Workspace }

func (w *fakeWorkspace) Launch(ctx context.Context, sp claude.Spec, start driver.Starter) (driver.Verdict, error) {
	w.d.calls = append(w.d.calls, "launch")
	return driver.Verdict{Class: outcome.Success, Reason: outcome.ReasonCompleted, Refused: w.d.refused}, nil
}

func (w *fakeWorkspace) Exec(ctx context.Context, c driver.Command) (int, string) {
	w.d.calls = append(w.d.calls, "exec "+c.Command)
	return w.d.verify, ""
}

// Snapshot makes the commit the worker's files amount to, with git's
// plumbing in the quarantine (no worker, no workspace on disk).
func (w *fakeWorkspace) Snapshot(ctx context.Context, q *gitx.Quarantine, base string) (string, string) {
	w.d.calls = append(w.d.calls, "snapshot")
	idx := filepath.Join(q.Dir, "fake-index")
	r := *q.Runner
	r.ExtraEnv = append(r.ExtraEnv, "GIT_INDEX_FILE="+idx)
	if _, err := r.Run(ctx, "read-tree", base); err != nil {
		return "", err.Error()
	}
	for _, p := range slices.Sorted(keys(w.d.files)) {
		content := w.d.files[p]
		if content == "" {
			if _, err := r.Run(ctx, "update-index", "--force-remove", "--", p); err != nil {
				return "", err.Error()
			}
			continue
		}
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

func (w *fakeWorkspace) Keep(why string) string {
	w.d.calls = append(w.d.calls, "keep")
	w.d.kept = why
	return "kept"
}

func (w *fakeWorkspace) Remove(ctx context.Context) error {
	w.d.calls = append(w.d.calls, "remove")
	w.d.removed = true
	return nil
}

func (w *fakeWorkspace) Discard(ctx context.Context) error { return w.Remove(ctx) }

func (w *fakeWorkspace) Close() { w.d.calls = append(w.d.calls, "close") }

func keys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// The pipeline applies zerg's checks to whatever commit a driver returns,
// in one order: what must never enter the repository first (a secret, a
// protected path: refused, kept for a person, nothing imported), then
// what fails the task on its branch (ownership, an empty change). The
// worker's word ("success") never skips a check.
func TestPipelineCheckOrderWithAFakeDriver(t *testing.T) {
	sc, err := security.NewScanner()
	if err != nil {
		t.Fatal(err)
	}
	secret := "AKIA" + "Z7Q2MX4KJ5WTP3RB" // an AWS access key id the scanner knows
	task := &spec.Task{ID: "T1", Title: "greet", Files: spec.Files{Create: []string{"greet.go"}},
		Verification: &spec.Verification{Command: "go test ./..."}}
	for _, tc := range []struct {
		name    string
		files   map[string]string
		verify  int
		reason  string
		commits bool // the result is on the attempt's branch
	}{
		{"a secret wins over everything else", map[string]string{"greet.go": "package x // " + secret,
			".github/workflows/ci.yml": "on: push", "other.go": "package x"}, 0, outcome.ReasonSecretFound, false},
		{"a protected path wins over ownership", map[string]string{".github/workflows/ci.yml": "on: push", "other.go": "package x", "greet.go": "package x"},
			0, outcome.ReasonForbiddenChange, false},
		{"a file the task does not own", map[string]string{"greet.go": "package x", "other.go": "package x"}, 0, outcome.ReasonOwnership, true},
		{"no change at all", map[string]string{}, 0, outcome.ReasonEmptyChange, true},
		{"the task's file", map[string]string{"greet.go": "package x"}, 0, outcome.ReasonCompleted, true},
		{"a failed verification is the task's, on its branch", map[string]string{"greet.go": "package x"}, 1, outcome.ReasonVerificationFailed, true},
		// A worker that changed nothing failed for that, whatever the
		// verification printed of the unchanged base (here: nothing).
		{"no change and a failed verification", map[string]string{}, 1, outcome.ReasonEmptyChange, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own repository and driver
			repo, base := testRepo(t)
			d := &fakeDriver{files: tc.files, verify: tc.verify}
			dir := t.TempDir()
			in := Input{Driver: d, Repo: repo, Feature: "f", Graph: &spec.Graph{Tasks: []*spec.Task{task}}, Task: task, Number: 1,
				Base: base, Workspace: filepath.Join(dir, "ws"), Branch: "zerg/f/T1-1", Dir: filepath.Join(dir, "rec"),
				Scanner: sc}
			res, err := Run(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if res.Reason != tc.reason {
				t.Fatalf("reason %s (%s), want %s", res.Reason, res.Detail, tc.reason)
			}
			if tc.reason == outcome.ReasonEmptyChange && (res.Diagnosis == nil || res.Diagnosis.Pattern != "empty_change") {
				t.Errorf("diagnosis %+v, want empty_change", res.Diagnosis)
			}
			if onBranch := res.Commit != ""; onBranch != tc.commits {
				t.Errorf("committed %v (%s), want %v", onBranch, res.Commit, tc.commits)
			}
			if tc.commits != d.removed || tc.commits == (d.kept != "") {
				t.Errorf("removed %v, kept %q: a refused result is kept, a committed one removed", d.removed, d.kept)
			}
			want := []string{"prepare", "launch", "exec go test ./...", "snapshot"}
			if !slices.Equal(d.calls[:4], want) || d.calls[len(d.calls)-1] != "close" {
				t.Errorf("driver calls %v, want %v … close", d.calls, want)
			}
			if !tc.commits {
				// Nothing refused reaches the repository's objects.
				oid, err := repo.RunInput(context.Background(), []byte("on: push"), "hash-object", "--stdin")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := repo.Run(context.Background(), "cat-file", "-e", strings.TrimSpace(oid)); err == nil {
					t.Error("the refused blob is in the repository's object store")
				}
				if b, _ := repo.BranchExists(context.Background(), "zerg/f/T1-1"); b {
					t.Error("a refused result got a branch")
				}
			}
		})
	}
}

func testRepo(t *testing.T) (*gitx.Repo, string) {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.email", "t@t"}, {"config", "user.name", "t"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "."}, {"commit", "-qm", "base"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	repo := &gitx.Repo{Runner: gitx.New(dir)}
	base, err := repo.RevParse(context.Background(), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return repo, base
}
