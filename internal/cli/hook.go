package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/policy"
)

func init() { register(newHookCmd) }

// hookDeny is Claude Code's blocking hook exit code; any other non-zero code
// lets the tool run, so every failure path below must end in it.
const hookDeny = 2

// hookStdin is where the hook reads Claude Code's JSON; tests replace it.
var hookStdin io.Reader = os.Stdin

func newHookCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:    "hook",
		Short:  "Claude Code hooks run by workers, and a check of what they decide",
		Hidden: true,
	}
	cmd.AddCommand(newPreToolUseCmd(a, hookStdin), newHookCheckCmd(a, hookStdin), newTasksHookCmd(a, hookStdin))
	return cmd
}

func newPreToolUseCmd(a *app, stdin io.Reader) *cobra.Command {
	var policyPath string
	cmd := &cobra.Command{
		Use:   "pre-tool-use --policy FILE",
		Short: "Allow or deny one tool call by the policy file (exit 0 allows, exit 2 denies)",
		Long: `Reads Claude Code's PreToolUse hook JSON on stdin and applies the attempt's
policy (internal/policy): Write, Edit, MultiEdit and NotebookEdit only on the
task's paths inside the workspace and never in .git, .zerg or Claude settings;
Read, Glob and Grep only inside the workspace; Bash, in subprocess mode, only
for commands that parse and match the policy's rules, and in sandbox mode for
every command but those that reach outside the sandbox (the network, the
remote, paths outside the workspace, other processes, the environment's
credentials); tools the policy does not know are denied.
Exit 0 allows; anything else, including any internal error, is denied with
exit 2 and a one-line reason on stderr (exit 1 would let the tool run).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			return runPreToolUse(a, stdin, policyPath)
		},
	}
	cmd.Flags().StringVar(&policyPath, "policy", "", "policy JSON file written by the driver (required)")
	return cmd
}

// runPreToolUse fails closed: a panic, a missing policy or bad input all deny.
func runPreToolUse(a *app, stdin io.Reader, policyPath string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = hookDenied(a, fmt.Sprintf("denied: internal error: %v", r))
		}
	}()
	if policyPath == "" {
		return hookDenied(a, "denied: zerg hook: no --policy given")
	}
	pol, err := policy.Load(policyPath)
	if err != nil {
		return hookDenied(a, "denied: zerg hook: "+err.Error())
	}
	_, d := decideCall(pol, stdin, "")
	if !d.Allow {
		return hookDenied(a, d.Reason)
	}
	if _, err := a.stdout.Write(policy.HookAllowOutput(d)); err != nil {
		return hookDenied(a, "denied: zerg hook: write decision: "+err.Error())
	}
	return nil
}

// decideCall is the hook's verdict on one PreToolUse JSON document read
// from r: what pre-tool-use enforces and what hook check prints, so the two
// cannot differ. Unreadable input and a panic deny. A call without a cwd is
// taken to run in defaultCwd when one is given (hook check's hand-written
// calls; Claude Code always sends one, and pre-tool-use passes ""). tool is
// the call's tool name, "" when the input did not parse.
func decideCall(pol *policy.Policy, r io.Reader, defaultCwd string) (tool string, d policy.Decision) {
	defer func() {
		if p := recover(); p != nil {
			d = policy.Decision{Reason: fmt.Sprintf("denied: internal error: %v", p)}
		}
	}()
	in, err := policy.ReadHookInput(r)
	if err != nil {
		return "", policy.Decision{Reason: "denied: zerg hook: " + err.Error()}
	}
	if in.Cwd == "" {
		in.Cwd = defaultCwd
	}
	return in.ToolName, pol.Decide(in)
}

// hookDenied prints the reason as one stderr line (Claude Code hands it to
// the model) and exits 2 without Run adding its own message.
func hookDenied(a *app, reason string) error {
	fmt.Fprintln(a.stderr, strings.ReplaceAll(strings.TrimSpace(reason), "\n", " "))
	return silent(hookDeny)
}
