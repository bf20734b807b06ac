package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/policy"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/spec"
)

type hookCheckFlags struct {
	graph, task, mode, workspace, config string
	asJSON                               bool
}

func newHookCheckCmd(a *app, stdin io.Reader) *cobra.Command {
	var f hookCheckFlags
	cmd := &cobra.Command{
		Use:   "check --graph FILE --task ID [--mode sandbox|container|subprocess] [--workspace DIR] [--config FILE] [--json]",
		Short: "Show what the hook would decide for tool calls of a task's worker",
		Long: `Builds the policy an attempt of task ID gets in the given mode (the same code
an attempt runs: the task's owned files, its verification command, the
project's worker_policy and toolchains.off, the toolchains found in the
workspace; in sandbox and container mode, where the sandbox is the boundary for commands,
the Bash check only refuses what reaches outside), with DIR (default: the
current directory) as the worker's workspace. The config is FILE, by default
the .zerg/config.yaml of the repository the graph is in (zerg's defaults when
there is none), as zerg rush reads it; the mode defaults to the config's.
Then it reads Claude Code PreToolUse JSON on stdin, one call a line, and
prints one decision a line: "allow" or "deny<TAB>reason"; with --json, one
object a line: {"tool","decision","reason"}. A call without a cwd runs in the
workspace. Nothing is run and nothing in the workspace is written.

Exit 0 once all input is read, whatever the decisions; 2 for bad flags, an
unreadable or invalid graph or config, an unknown task or a missing
workspace.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runHookCheck(a, stdin, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.graph, "graph", "", "task graph file (required)")
	fl.StringVar(&f.task, "task", "", "id of the task whose worker makes the calls (required)")
	fl.StringVar(&f.mode, "mode", "", "isolation mode: sandbox, container or subprocess (default: the config's, sandbox unless set)")
	fl.StringVar(&f.workspace, "workspace", "", "the worker's workspace (default: the current directory)")
	fl.StringVar(&f.config, "config", "", "zerg config file (default: .zerg/config.yaml of the graph's repository)")
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON object a line")
	return cmd
}

// sessionMode reports whether mode's workers are the user's own Claude
// Code session's (tasks mode), which the worker policy does not govern.
func sessionMode(mode string) bool {
	f, ok := driver.Lookup(mode)
	return ok && !f.Capabilities.StartsWorker
}

func runHookCheck(a *app, stdin io.Reader, f hookCheckFlags) error {
	switch {
	case f.graph == "":
		return usageErrorf("hook check needs --graph FILE (the task graph)")
	case f.task == "":
		return usageErrorf("hook check needs --task ID (a task of the graph)")
	case sessionMode(f.mode):
		return usageErrorf("--mode tasks: tasks mode's workers are subagents of your own Claude Code session, which this worker policy does not govern (docs/modes.md); use --mode sandbox, container or subprocess")
	case f.mode != "" && !slices.Contains(config.Modes, f.mode):
		return usageErrorf("--mode %s: use --mode sandbox, container or subprocess", f.mode)
	}
	cwd, err := a.getwd()
	if err != nil {
		return err
	}
	ws := cwd
	if f.workspace != "" {
		ws = f.workspace
		if !filepath.IsAbs(ws) {
			ws = filepath.Join(cwd, ws)
		}
	}
	ws = filepath.Clean(ws)
	if st, err := os.Stat(ws); err != nil || !st.IsDir() {
		return usageErrorf("--workspace %s is not a directory", ws)
	}
	t, err := loadHookCheckTask(f.graph, f.task)
	if err != nil {
		return err
	}
	cfg, err := hookCheckConfig(f.graph, f.config, cwd)
	if err != nil {
		return err
	}
	mode := f.mode
	if mode == "" {
		mode = cfg.Mode
	}
	if sessionMode(mode) {
		return usageErrorf("the config's mode is tasks: its workers are subagents of your own Claude Code session, which this worker policy does not govern (docs/modes.md); pass --mode sandbox, container or subprocess")
	}
	attemptDir, err := fsx.MkdirTemp("zerg-hook-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(attemptDir)
	pol, err := hookCheckPolicy(ws, attemptDir, t, mode, cfg)
	if err != nil {
		return badInput(fmt.Errorf("task %s: %w", t.ID, err))
	}
	return checkCalls(pol, ws, stdin, a.stdout, f.asJSON)
}

// loadHookCheckTask finds task id in a graph that would run: an invalid
// graph never starts an attempt, so it has no policy to show.
func loadHookCheckTask(file, id string) (*spec.Task, error) {
	r, err := run.LoadGraph(file, run.GraphLoad{Root: repoRootOf(file)})
	if err != nil {
		return nil, badInput(err)
	}
	if !r.Valid() {
		return nil, usageErrorf("%s: invalid task graph (%s; the first: %s); see 'zerg graph validate %s'",
			file, pluralf(len(r.Errors), "%d error", "%d errors"), r.Errors[0], file)
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
		return nil, usageErrorf("%s: no task %q (its tasks: %s)", file, id, strings.Join(ids, ", "))
	}
	return t, nil
}

// hookCheckConfig is the config hook check builds the policy with: file
// when given, else the .zerg/config.yaml of the repository the graph is in
// (the one zerg rush reads), else zerg's defaults.
func hookCheckConfig(graph, file, cwd string) (config.Config, error) {
	if file != "" {
		if !filepath.IsAbs(file) {
			file = filepath.Join(cwd, file)
		}
		cfg, err := config.Load(file)
		if err != nil {
			return cfg, badInput(err)
		}
		return cfg, nil
	}
	root := repoRootOf(graph)
	if root == "" {
		return config.Default(), nil
	}
	return loadProjectConfig(root)
}

// hookCheckPolicy is the policy an attempt of t in mode gets with workspace
// ws, attemptDir as its private directory and cfg as the project's config:
// the launch spec comes from internal/attempt (WorkerTemplate, LaunchSpec), the policy from
// internal/claude (Spec.Policy), and it goes through policy.json the way the
// hook reads it.
func hookCheckPolicy(ws, attemptDir string, t *spec.Task, mode string, cfg config.Config) (*policy.Policy, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// Neither the CLI binary nor the prompt changes the policy; both only
	// have to be there for the spec to be launchable.
	found := claude.Spec{Binary: "claude", Hook: claude.HookSpec{ZergBinary: hookBinary(self)}}
	sp := attempt.LaunchSpec(attempt.WorkerTemplate(cfg, found), attempt.Launch{Task: t, Workspace: ws, Dir: attemptDir,
		Prompt: "zerg hook check " + t.ID, Protection: cfg.Protection(),
		Sandboxed: driver.CapabilitiesOf(config.Config{Mode: mode}).BoundsCommands})
	pol, err := sp.Policy()
	if err != nil {
		return nil, err
	}
	file := filepath.Join(attemptDir, "policy.json")
	if err := policy.Write(file, pol); err != nil {
		return nil, err
	}
	return policy.Load(file)
}

// hookCheckLine is one decision of hook check --json.
type hookCheckLine struct {
	Tool     string `json:"tool"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// checkCalls decides every line of r (blank lines are skipped) and writes
// one decision a line to w, each as soon as it is made.
func checkCalls(pol *policy.Policy, ws string, r io.Reader, w io.Writer, asJSON bool) error {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if werr := writeDecision(w, pol, ws, line, asJSON); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read tool calls: %w", err)
		}
	}
}

func writeDecision(w io.Writer, pol *policy.Policy, ws string, call []byte, asJSON bool) error {
	tool, d := decideCall(pol, bytes.NewReader(call), ws)
	out := hookCheckLine{Tool: tool, Decision: "allow", Reason: strings.Join(strings.Fields(d.Reason), " ")}
	if !d.Allow {
		out.Decision, out.Reason = "deny", strings.TrimPrefix(out.Reason, "denied: ")
	}
	var data []byte
	switch {
	case asJSON:
		var err error
		if data, err = json.Marshal(out); err != nil {
			return err
		}
		data = append(data, '\n')
	case d.Allow:
		data = []byte("allow\n")
	default:
		data = []byte("deny\t" + out.Reason + "\n")
	}
	_, err := w.Write(data)
	return err
}
