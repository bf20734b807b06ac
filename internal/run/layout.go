package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zergrush/zerg/internal/gitx"
)

// Paths are where a feature's run lives.
type Paths struct {
	Root        string // repository top level
	RunDir      string // .zerg/runs/<feature>
	Events      string // events.jsonl
	Coordinator string // coordinator.json: the live coordinator's pid, for zerg stop
	Workspaces  string // <cache>/zerg/worktrees/<repo>-<hash>/<feature>: outside the working tree (docs/workspaces.md)
	Merge       string // the merge workspace
	State       string // workers' private state dirs (HOME, CLAUDE_CONFIG_DIR, tmp), beside the workspaces
	Graph       string // the task graph
	SpecDir     string
}

// PathsFor computes the paths of a feature's run in the repository at root.
func PathsFor(ctx context.Context, root, feature string) (Paths, error) {
	common, err := gitx.New(root).Run(ctx, "rev-parse", "--git-common-dir")
	if err != nil {
		return Paths{}, err
	}
	common = strings.TrimSpace(common)
	if !filepath.IsAbs(common) {
		common = filepath.Join(root, common)
	}
	run := filepath.Join(root, ".zerg", "runs", feature)
	wsRoot, err := WorkspaceRoot()
	if err != nil {
		return Paths{}, err
	}
	sum := sha256.Sum256([]byte(filepath.Clean(common)))
	ws := filepath.Join(wsRoot, filepath.Base(root)+"-"+hex.EncodeToString(sum[:4]), feature)
	spec := filepath.Join(root, ".zerg", "specs", feature)
	return Paths{
		Root:        root,
		RunDir:      run,
		Events:      filepath.Join(run, "events.jsonl"),
		Coordinator: filepath.Join(run, "coordinator.json"),
		Workspaces:  ws,
		Merge:       filepath.Join(ws, "_merge"),
		State:       filepath.Join(ws, "_state"),
		Graph:       filepath.Join(spec, "task-graph.json"),
		SpecDir:     spec,
	}, nil
}

// WorkspaceRoot is where workspaces live: $ZERG_WORKSPACES, else
// <user cache dir>/zerg/worktrees. Not under .git: Claude Code refuses to
// write any path inside a .git directory ("a sensitive file"), even when a
// hook allows it. Not in the working tree: the project's own tools would see
// the copies.
func WorkspaceRoot() (string, error) {
	if d := os.Getenv("ZERG_WORKSPACES"); d != "" {
		return filepath.Abs(d)
	}
	if os.Geteuid() == 0 {
		// Root's cache dir is inside /root (0700): workers, which run as an
		// unprivileged user, could not reach their workspaces there.
		return "/var/tmp/zerg-0/worktrees", nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no place for workspaces (%v); set ZERG_WORKSPACES to a directory", err)
	}
	return filepath.Join(cache, "zerg", "worktrees"), nil
}

// IntegrationBranch is the deliverable's branch name.
func IntegrationBranch(feature string) string { return "zerg/" + feature + "/integration" }

// AttemptBranch is the branch of one attempt.
func AttemptBranch(feature, task string, n int) string {
	return fmt.Sprintf("zerg/%s/task/%s/%d", feature, task, n)
}

// BranchPrefix is the prefix of every branch zerg owns for a feature.
func BranchPrefix(feature string) string { return "zerg/" + feature + "/" }

func (p Paths) workspace(task string, n int) string {
	return filepath.Join(p.Workspaces, fmt.Sprintf("%s-%d", task, n))
}

func (p Paths) workerDir(task string, n int) string {
	return filepath.Join(p.State, fmt.Sprintf("%s-%d", task, n))
}

func (p Paths) attemptDir(task string, n int) string {
	return filepath.Join(p.RunDir, "attempts", task, fmt.Sprint(n))
}
