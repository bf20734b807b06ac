package run

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/policy"
	"github.com/zergrush/zerg/internal/spec"
)

// HookCheck is what zerg hook check is asked: which task's worker makes the
// calls, in which mode, in which workspace, under which config. The fields
// are the command's flags as given; Open decides what they mean, so the
// policy it shows is the one an attempt of the task would get in a rush.
type HookCheck struct {
	Graph, Task string // the task graph file and the task's id (both required)
	// Mode is the isolation ("": the config's); tasks mode has no worker
	// policy: its workers are subagents of the user's own session.
	Mode string
	// Workspace is the worker's workspace ("": the current directory),
	// Config the config file ("": the graph's repository's, as rush reads
	// it, zerg's defaults when there is none); relative to Getwd's
	// directory. Graph is read as given, relative to the process's own
	// directory, which is Getwd's for the command.
	Workspace, Config string
	// Getwd is the current directory, asked once the flags are checked.
	Getwd func() (string, error)
	// Zerg is the binary the hook runs (claude.ZergBinary), asked only
	// once everything else is checked: it does not change the policy.
	Zerg func() (string, error)
}

// CheckedAttempt is the attempt hook check decides calls for: its policy,
// its workspace (where a call without a cwd runs) and its private
// directory, a temporary one that Close removes.
type CheckedAttempt struct {
	Policy    *policy.Policy
	Workspace string
	dir       string
}

// Close removes the attempt's private directory, a temporary one: best
// effort, as any scratch directory's removal.
func (c *CheckedAttempt) Close() { os.RemoveAll(c.dir) }

// Open checks what h asks and builds the attempt's policy (attempt.CheckPolicy)
// in a fresh private directory. What the user got wrong (a missing flag, a
// mode without a worker policy, a workspace that is no directory, a graph
// that does not load or would not run, an unknown task, a config that does
// not load, a task no attempt could be launched for) is an *Error of kind
// BadInput, one line; nothing is run and nothing in the workspace is written.
func (h HookCheck) Open() (*CheckedAttempt, error) {
	switch {
	case h.Graph == "":
		return nil, hookCheckInput("hook check needs --graph FILE (the task graph)")
	case h.Task == "":
		return nil, hookCheckInput("hook check needs --task ID (a task of the graph)")
	case hookCheckSessionMode(h.Mode):
		return nil, hookCheckInput("--mode tasks: tasks mode's workers are subagents of your own Claude Code session, which this worker policy does not govern (docs/modes.md); use --mode sandbox, container or subprocess")
	case h.Mode != "" && !slices.Contains(config.Modes, h.Mode):
		return nil, hookCheckInput("--mode %s: use --mode sandbox, container or subprocess", h.Mode)
	}
	cwd, err := h.Getwd()
	if err != nil {
		return nil, err
	}
	ws := filepath.Clean(hookCheckPath(cwd, h.Workspace, cwd))
	if st, err := os.Stat(ws); err != nil || !st.IsDir() {
		return nil, hookCheckInput("--workspace %s is not a directory", ws)
	}
	t, err := hookCheckTask(h.Graph, h.Task)
	if err != nil {
		return nil, err
	}
	cfg, err := hookCheckConfig(h.Graph, hookCheckPath(cwd, h.Config, ""))
	if err != nil {
		return nil, &Error{Kind: BadInput, Err: err}
	}
	mode := h.Mode
	if mode == "" {
		mode = cfg.Mode
	}
	if hookCheckSessionMode(mode) {
		return nil, hookCheckInput("the config's mode is tasks: its workers are subagents of your own Claude Code session, which this worker policy does not govern (docs/modes.md); pass --mode sandbox, container or subprocess")
	}
	dir, err := fsx.MkdirTemp("zerg-hook-check-")
	if err != nil {
		return nil, err
	}
	c := &CheckedAttempt{Workspace: ws, dir: dir}
	zerg, err := h.Zerg()
	if err == nil {
		c.Policy, err = attempt.CheckPolicy(cfg, mode, t, ws, dir, zerg)
	}
	if err != nil {
		c.Close()
		return nil, &Error{Kind: BadInput, Task: t.ID, Err: fmt.Errorf("task %s: %w", t.ID, err)}
	}
	return c, nil
}

// hookCheckInput is bad input of hook check, one line.
func hookCheckInput(format string, a ...any) *Error { return errorf(BadInput, "", format, a...) }

// hookCheckPath is path taken from dir when relative, def when it is "".
func hookCheckPath(dir, path, def string) string {
	switch {
	case path == "":
		return def
	case filepath.IsAbs(path):
		return path
	}
	return filepath.Join(dir, path)
}

// hookCheckSessionMode reports whether mode's workers are the user's own Claude
// Code session's (tasks mode), which the worker policy does not govern.
func hookCheckSessionMode(mode string) bool {
	f, ok := driver.Lookup(mode)
	return ok && !f.Capabilities.StartsWorker
}

// hookCheckTask finds task id in a graph loaded as rush loads it: an invalid
// graph never starts an attempt, so it has no policy to show.
func hookCheckTask(file, id string) (*spec.Task, error) {
	r, err := LoadGraph(file, GraphLoad{Root: RepoRootOf(file)})
	if err != nil {
		return nil, &Error{Kind: BadInput, Err: err}
	}
	if !r.Valid() {
		errs := fmt.Sprintf("%d errors", len(r.Errors))
		if len(r.Errors) == 1 {
			errs = "1 error"
		}
		return nil, hookCheckInput("%s: invalid task graph (%s; the first: %s); see 'zerg graph validate %s'", file, errs, r.Errors[0], file)
	}
	t := r.Graph.Task(id)
	if t == nil {
		ids := make([]string, 0, len(r.Graph.Tasks))
		for _, t := range r.Graph.Tasks {
			ids = append(ids, t.ID)
		}
		if len(ids) > 10 {
			ids = append(ids[:10], "…")
		}
		return nil, hookCheckInput("%s: no task %q (its tasks: %s)", file, id, strings.Join(ids, ", "))
	}
	return t, nil
}

// hookCheckConfig is the config file when given, else the .zerg/config.yaml
// of the repository the graph is in (the one rush reads), else zerg's
// defaults.
func hookCheckConfig(graph, file string) (config.Config, error) {
	if file != "" {
		return config.Load(file)
	}
	root := RepoRootOf(graph)
	if root == "" {
		return config.Default(), nil
	}
	return config.LoadOrDefault(ConfigFile(root))
}
