package cli

import (
	"encoding/json"
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
		{"Write", filepath.Join(ws, ".git/hooks/pre-commit"), "inside .git"},
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

// TestTasksHookProtection: tasks mode's hook refuses what the run's
// protection (config.Config.Protection) refuses, as the worker hook of the
// other modes does, not only the workspace's .git: zerg's own list and
// security.protected_paths, even for a file the task owns, less what
// security.allow_protected opens to the task that names it. Before, only
// .git was refused here and the commit check refused the rest later.
func TestTasksHookProtection(t *testing.T) {
	root := t.TempDir()
	board := filepath.Join(root, ".zerg", "runs", "f", "tasks")
	if err := os.MkdirAll(board, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := "security:\n  protected_paths: [\"deploy/**\"]\n  allow_protected: [\".github/workflows/release.yml\"]\n"
	if err := os.WriteFile(run.ConfigFile(root), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, ".zerg", "tasks", "f", "T1-1")
	lease := driver.Lease{Task: "T1", Attempt: 1, TokenSHA256: "not-a-token-hash", Workspace: ws,
		Owns: []string{".github/workflows/ci.yml", ".github/workflows/release.yml", "deploy/", "src/"}, Issued: time.Now()}
	b, _ := json.Marshal(lease)
	if err := os.WriteFile(filepath.Join(board, "T1"+driver.LeaseSuffix), b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ rel, deny string }{
		{"src/a.go", ""},
		{".github/workflows/ci.yml", `protected by ".github/workflows/**"`}, // zerg's own list
		{"deploy/prod.yml", `protected by "deploy/**"`},                     // security.protected_paths
		{".github/workflows/release.yml", ""},                               // opened and named by the task
		{"src/.claude/settings.json", "a Claude Code settings file"},
	} {
		in, _ := json.Marshal(map[string]string{"file_path": filepath.Join(ws, tc.rel)})
		got := tasksWriteProblem(policy.HookInput{ToolName: "Write", ToolInput: in, Cwd: root})
		if (tc.deny == "") != (got == "") || !strings.Contains(got, tc.deny) {
			t.Errorf("%s: %q, want %q", tc.rel, got, tc.deny)
		}
	}
}
