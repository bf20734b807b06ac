package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/policy"
	"github.com/zergrush/zerg/internal/run"
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

// runHookCheck opens the attempt run.HookCheck describes (its policy, as
// an attempt of the task gets it) and decides the calls on stdin with it.
func runHookCheck(a *app, stdin io.Reader, f hookCheckFlags) error {
	c, err := run.HookCheck{Graph: f.graph, Task: f.task, Mode: f.mode, Workspace: f.workspace, Config: f.config,
		Getwd: a.getwd, Zerg: claude.ZergBinary}.Open()
	if err != nil {
		return err
	}
	defer c.Close()
	return checkCalls(c.Policy, c.Workspace, stdin, a.stdout, f.asJSON)
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
