package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

// Paths is the on-disk layout of a feature's run: the one place that knows
// where the log, the attempt records, the workspaces and the workers' state
// live (the files inside an attempt record are attempt.Record's). The
// coordinator, logs and cleanup all go through it.
type Paths struct {
	Feature     string
	Root        string // repository top level
	RunDir      string // .zerg/runs/<feature>
	Events      string // events.jsonl
	Coordinator string // coordinator.json: the live coordinator's pid, for zerg stop
	Board       string // tasks mode's leases and reports (driver.Tasks)
	Workspaces  string // <cache>/zerg/worktrees/<repo>-<hash>/<feature>: outside the working tree (docs/workspaces.md)
	Merge       string // the merge workspace
	State       string // workers' private state dirs (HOME, CLAUDE_CONFIG_DIR, tmp), beside the workspaces
	Graph       string // the task graph
	SpecDir     string
	// GraphSnapshot is the graph the run works on, as recorded at its start
	// or its last accepted change: resume compares the graph with it.
	GraphSnapshot string
}

// PathsFor computes the paths of a feature's run in the repository at root.
// It is where every command turns a feature name into paths, so it is where
// a name that is not a plain name ("../x", "a/b", ".x", "-x") is refused:
// joined into these paths it would read and write outside .zerg/specs and
// .zerg/runs. The refusal is bad input (nothing was written).
func PathsFor(ctx context.Context, root, feature string) (Paths, error) {
	if why := spec.FeatureNameProblem(feature); why != "" {
		return Paths{}, &Error{Kind: BadInput, Feature: feature,
			Err: fmt.Errorf("%q is not a feature name: it %s; name a feature as in .zerg/specs/<feature>, such as auth", feature, why)}
	}
	common, err := gitx.New(root).CommonDir(ctx)
	if err != nil {
		return Paths{}, err
	}
	run := RunDirOf(root, feature)
	wsRoot, err := WorkspaceRoot()
	if err != nil {
		return Paths{}, &Error{Kind: Setup, Feature: feature, Err: err}
	}
	sum := sha256.Sum256([]byte(common))
	ws := filepath.Join(wsRoot, filepath.Base(root)+"-"+hex.EncodeToString(sum[:4]), feature)
	spec := SpecDir(root, feature)
	return Paths{
		Feature:     feature,
		Root:        root,
		RunDir:      run,
		Events:      filepath.Join(run, "events.jsonl"),
		Coordinator: filepath.Join(run, "coordinator.json"),
		Board:       filepath.Join(run, "tasks"),
		Workspaces:  ws,
		Merge:       filepath.Join(ws, "_merge"),
		State:       filepath.Join(ws, "_state"),
		Graph:       GraphFile(root, feature),
		SpecDir:     spec,

		GraphSnapshot: filepath.Join(run, "graph.json"),
	}, nil
}

// The project's files under .zerg, for every command that needs one before
// (or without) a run: the config, the features' specs and their graphs.
// PathsFor refuses a feature name that is no plain name; callers of these
// take the name from PathsFor or from a directory listing of SpecsDir.

// ConfigFile is the project's configuration.
func ConfigFile(root string) string { return filepath.Join(root, ".zerg", "config.yaml") }

// RunDirOf is a feature's run directory: its event log, its coordinator's
// pid file, the graph it works on.
func RunDirOf(root, feature string) string { return filepath.Join(root, ".zerg", "runs", feature) }

// SpecsDir holds one directory per feature.
func SpecsDir(root string) string { return filepath.Join(root, ".zerg", "specs") }

// SpecDir is a feature's specs: requirements, design, the task graph, the
// review.
func SpecDir(root, feature string) string { return filepath.Join(SpecsDir(root), feature) }

// GraphFile is a feature's task graph.
func GraphFile(root, feature string) string {
	return filepath.Join(SpecDir(root, feature), "task-graph.json")
}

// WorkspaceRoot is where workspaces live: $ZERG_WORKSPACES, else
// <user cache dir>/zerg/worktrees. Not under .git: Claude Code refuses to
// write any path inside a .git directory ("a sensitive file"), even when a
// hook allows it. Not in the working tree: the project's own tools would see
// the copies.
//
// What exists of it must be zerg's own (fsx.CheckOwnDir): a directory
// another account made or may write, such as a /var/tmp/zerg-0 planted
// before root's first run, would hand that account the workspaces. Every
// command that turns a feature into paths gets the refusal, so none of
// them reads from or deletes in such a directory.
func WorkspaceRoot() (string, error) {
	root, env, err := workspaceRoot()
	if err != nil {
		return "", err
	}
	if err := fsx.CheckOwnDir(root); err != nil {
		return "", notOwnWorkspaces(root, env, err)
	}
	return root, nil
}

// workspaceRoot is WorkspaceRoot before the check, and whether
// ZERG_WORKSPACES chose it.
func workspaceRoot() (string, bool, error) {
	if d := os.Getenv("ZERG_WORKSPACES"); d != "" {
		// A relative path would put workspaces (and the workers' homes)
		// inside whatever directory zerg happens to run in: the user's
		// repository, usually.
		if !filepath.IsAbs(d) {
			return "", true, fmt.Errorf("ZERG_WORKSPACES=%s is relative; set it to an absolute directory outside the repository", d)
		}
		return filepath.Clean(d), true, nil
	}
	if os.Geteuid() == 0 {
		// Root's cache dir is inside /root (0700): workers, which run as an
		// unprivileged user, could not reach their workspaces there.
		return "/var/tmp/zerg-0/worktrees", false, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", false, fmt.Errorf("no place for workspaces (%v); set ZERG_WORKSPACES to a directory", err)
	}
	return filepath.Join(cache, "zerg", "worktrees"), false, nil
}

// notOwnWorkspaces is the one line for a workspace directory that is not
// zerg's own; env: ZERG_WORKSPACES named it.
func notOwnWorkspaces(dir string, env bool, err error) error {
	where := "the workspaces' directory " + dir
	if env {
		where = "ZERG_WORKSPACES=" + dir
	}
	return fmt.Errorf("%s is not zerg's own: %w; remove it if you did not make it, or set ZERG_WORKSPACES to a directory only you can write (docs/workspaces.md)", where, err)
}

// WorkspaceDirMode is the mode of the directories zerg makes for
// workspaces, from the root down to a feature's: worker users pass through
// to the workspace handed to them, nobody else lists what is there.
const WorkspaceDirMode os.FileMode = 0o711

// MakeWorkspaceDirs makes the feature's workspace and worker-state
// directories zerg's own (fsx.OwnDir): created fresh where missing,
// checked component by component where they exist. The drivers call it
// before their first workspace.
func (p Paths) MakeWorkspaceDirs() error {
	for _, d := range []string{p.Workspaces, p.State} {
		if d == "" {
			continue
		}
		if err := fsx.OwnDir(d, WorkspaceDirMode); err != nil {
			if p.Root != "" && pathx.Within(p.Root, d) { // tasks mode's, in the repository
				return fmt.Errorf("the workspaces' directory %s is not zerg's own: %w; remove it if you did not make it", d, err)
			}
			return notOwnWorkspaces(d, false, err)
		}
	}
	return nil
}

// TasksWorkspaces is where tasks mode puts a feature's workspaces: inside
// the repository (under .zerg, which zerg init ignores), because the
// session's subagents work there with file tools that reach the project's
// directory and not a cache elsewhere.
func TasksWorkspaces(root, feature string) string {
	return filepath.Join(root, ".zerg", "tasks", feature)
}

// IntegrationBranch is the deliverable's branch name.
func IntegrationBranch(feature string) string { return "zerg/" + feature + "/integration" }

// AttemptBranch is the branch of one attempt.
func AttemptBranch(feature, task string, n int) string {
	return fmt.Sprintf("zerg/%s/task/%s/%d", feature, task, n)
}

// BranchPrefix is the prefix of every branch zerg owns for a feature.
func BranchPrefix(feature string) string { return "zerg/" + feature + "/" }

// Workspace is the working tree of a task's attempt n.
func (p Paths) Workspace(task string, n int) string {
	return filepath.Join(p.Workspaces, fmt.Sprintf("%s-%d", task, n))
}

// ClusterDir holds the embedded cluster server of the repository at root:
// its file store, its CA and the agents' password hashes. It is the
// repository's, not a run's, so that agents' credentials outlive a run:
// beside the runs (ignored by git like them), named so that no feature
// can have it (a feature's name never starts with a dot).
func ClusterDir(root string) string { return filepath.Join(root, ".zerg", "runs", ".cluster") }

// WorkerDir is the worker's private state of attempt n (HOME, config dir, tmp).
func (p Paths) WorkerDir(task string, n int) string {
	return filepath.Join(p.State, fmt.Sprintf("%s-%d", task, n))
}

// Attempt is zerg's record of attempt n: prompt, stream, verification
// output, diff (attempt.Record names its files).
func (p Paths) Attempt(task string, n int) attempt.Record {
	return attempt.RecordOf(p.AttemptRecords(), task, n)
}

// AttemptDir is the directory of Attempt(task, n).
func (p Paths) AttemptDir(task string, n int) string { return p.Attempt(task, n).Dir() }

// AttemptRecords is the directory of the run's attempt records.
func (p Paths) AttemptRecords() string { return attempt.RecordsDir(p.RunDir) }

// Attempts lists the attempt numbers recorded for a task, in order.
func (p Paths) Attempts(task string) ([]int, error) {
	return attempt.RecordNumbers(p.AttemptRecords(), task)
}

// CheckRecord is where the last passing check of the feature's commands
// is remembered for the next rush (checkcache.go).
func (p Paths) CheckRecord() string { return filepath.Join(p.RunDir, "check.json") }

// DiskReserve is the room a running coordinator holds back on the disk of
// its records (diskreserve.go).
func (p Paths) DiskReserve() string { return filepath.Join(p.RunDir, "disk-reserve") }

// LiveFile is the coordinator's heartbeat file.
func (p Paths) LiveFile() string { return filepath.Join(p.RunDir, runstate.LiveFile) }

// Runs lists the features with a run log in the repository at root.
func Runs(root string) []string {
	dir := filepath.Join(root, ".zerg", "runs")
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "events.jsonl")); err == nil && e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}
