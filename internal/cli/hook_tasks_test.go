package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/policy"
	"github.com/zergrush/zerg/internal/run"
)

// TestTasksHookDecisions: inside a tasks-mode workspace a file tool may
// write only its task's files, only under an open lease, never the
// workspace's .git; outside the workspaces the hook says nothing. The
// control closes the lease: the same owned write is then denied.
func TestTasksHookDecisions(t *testing.T) {
	root := t.TempDir()
	board := filepath.Join(root, ".zerg", "runs", "f", "tasks")
	if err := os.MkdirAll(board, 0o700); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, ".zerg", "tasks", "f", "T1-1")
	lease := driver.Lease{Task: "T1", Attempt: 1, TokenSHA256: "not-a-token-hash", Workspace: ws, Owns: []string{"a.txt", "src/"}, Issued: time.Now()}
	b, _ := json.Marshal(lease)
	leaseFile := filepath.Join(board, "T1"+driver.LeaseSuffix)
	if err := os.WriteFile(leaseFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	call := func(tool, path string) policy.HookInput {
		in, _ := json.Marshal(map[string]string{"file_path": path, "command": path})
		return policy.HookInput{ToolName: tool, ToolInput: in, Cwd: root}
	}
	for _, tc := range []struct {
		tool, path, deny string
	}{
		{"Write", filepath.Join(ws, "a.txt"), ""},
		{"Edit", ".zerg/tasks/f/T1-1/src/x/y.go", ""},
		{"Write", filepath.Join(ws, "b.txt"), "task T1 owns only a.txt, src/; b.txt is not its file"},
		{"Write", filepath.Join(ws, "src/../b.txt"), "b.txt is not its file"},
		{"Write", filepath.Join(ws, ".git/hooks/pre-commit"), "the workspace's git directory"},
		{"Write", filepath.Join(root, ".zerg/tasks/f/T2-1/a.txt"), "the workspace T2-1 of f has no open lease"},
		{"Write", filepath.Join(root, ".zerg/tasks/f/T1-1"), "is not a file in a task's workspace"},
		{"Write", filepath.Join(root, "README.md"), ""}, // not tasks mode's business
		{"Bash", "echo > " + filepath.Join(ws, "b.txt"), ""},
	} {
		got := tasksWriteProblem(call(tc.tool, tc.path))
		if (tc.deny == "") != (got == "") || !strings.Contains(got, tc.deny) {
			t.Errorf("%s %s: %q, want %q", tc.tool, tc.path, got, tc.deny)
		}
	}
	if err := os.Remove(leaseFile); err != nil {
		t.Fatal(err)
	}
	if got := tasksWriteProblem(call("Write", filepath.Join(ws, "a.txt"))); !strings.Contains(got, "the workspace T1-1 of f has no open lease") {
		t.Fatalf("control: a write under a closed lease: %q", got)
	}
}

// TestTasksNextWaitsForTheLevel: zerg tasks next hands a level out once
// every started attempt has posted its lease, and ready tasks have one
// while worker slots are free; a task whose subagent works holds none back.
func TestTasksNextWaitsForTheLevel(t *testing.T) {
	view := func(workers int, statuses ...run.Status) run.View {
		v := run.View{Workers: workers, Coordinator: run.CoordinatorView{Alive: true, PID: 7}}
		for i, s := range statuses {
			v.Tasks = append(v.Tasks, run.TaskView{ID: fmt.Sprintf("T%d", i+1), Status: s})
		}
		return v
	}
	open := func(tasks ...string) map[string]bool {
		m := map[string]bool{}
		for _, t := range tasks {
			m[t] = true
		}
		return m
	}
	// A dead coordinator's lease is none: driver.ReadBoard leaves it out of
	// the open tasks (TestReadBoard).
	for _, tc := range []struct {
		name string
		v    run.View
		open map[string]bool
		want int
	}{
		{"all posted", view(4, run.StatusRunning, run.StatusRunning), open("T1", "T2"), 0},
		{"one still cloning", view(4, run.StatusRunning, run.StatusRunning), open("T1"), 1},
		{"ready with a free slot", view(2, run.StatusRunning, run.StatusReady, run.StatusReady), open("T1"), 1},
		{"ready without a slot", view(1, run.StatusRunning, run.StatusReady), open("T1"), 0},
		{"committed and merged hold nothing", view(4, run.StatusCommitted, run.StatusMerged, run.StatusRetryWait), nil, 0},
	} {
		if got := launching(tc.v, tc.open); got != tc.want {
			t.Errorf("%s: %d still launching, want %d", tc.name, got, tc.want)
		}
	}
}
