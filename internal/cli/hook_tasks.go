package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/policy"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/spec"
	"github.com/zergrush/zerg/internal/tasksmode"
)

// The hook tasks mode's subagents go through. Claude Code's PreToolUse
// input names no subagent (agent_id appears only in SubagentStart and
// SubagentStop), so the hook tells subagents apart by the only thing it
// can: the workspace a file tool writes in. A write inside a tasks-mode
// workspace must be to a file of that workspace's task, under an open
// lease; anything else is not tasks mode's business and is allowed (the
// session's own permission rules apply). Commands (Bash) cannot be told
// apart: there the commit checks are the boundary (docs/modes.md).

func newTasksHookCmd(a *app, stdin io.Reader) *cobra.Command {
	return &cobra.Command{
		Use:   "tasks-pre-tool-use",
		Short: "Keep a tasks-mode subagent's file tools to its own workspace's owned files (exit 2 denies)",
		Long: `Reads Claude Code's PreToolUse hook JSON on stdin. A Write, Edit, MultiEdit or
NotebookEdit of a path inside a tasks-mode workspace (.zerg/tasks/FEATURE/TASK-N/)
is allowed only while its lease is open and only for a file its task owns;
every other call is allowed (exit 0). zerg init installs it in
.claude/settings.json.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = hookDenied(a, fmt.Sprintf("denied: internal error: %v", r))
				}
			}()
			in, err := policy.ReadHookInput(stdin)
			if err != nil {
				return hookDenied(a, "denied: zerg hook: "+err.Error())
			}
			if why := tasksWriteProblem(*in); why != "" {
				return hookDenied(a, why)
			}
			return nil
		},
	}
}

// tasksWriteProblem is why a file tool's call may not write where it
// would, "" when it may (or the call is none of tasks mode's business).
func tasksWriteProblem(in policy.HookInput) string {
	switch in.ToolName {
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
	default:
		return ""
	}
	var args struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	}
	if err := json.Unmarshal(in.ToolInput, &args); err != nil {
		return "denied: zerg hook: the tool's input does not parse: " + err.Error()
	}
	p := args.FilePath
	if p == "" {
		p = args.NotebookPath
	}
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(in.Cwd, p)
	}
	w, ok, why := driver.ParseTasksWrite(filepath.Clean(p))
	switch {
	case !ok:
		return ""
	case why != "":
		return "denied: " + why
	}
	feature, name, rel := w.Feature, w.Workspace, w.Rel
	l, ok, err := driver.LeaseOfWorkspace(filepath.Join(run.RunDirOf(w.Root, feature), "tasks"), name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "denied: zerg hook: read the leases: " + err.Error()
	}
	if !ok {
		return fmt.Sprintf("denied: the workspace %s of %s has no open lease (reported, expired or handed out again): write only in the workspace of a task handed to you", name, feature)
	}
	// The run's protection, as the worker hook of the other modes has it:
	// what the commit check would refuse is refused at once.
	cfg, err := loadProjectConfig(filepath.FromSlash(w.Root))
	if err != nil {
		return "denied: zerg hook: read the config: " + err.Error()
	}
	prot := cfg.Protection()
	opened := prot.OpenedEntries(l.Owns)
	if why := prot.RefusesWrite(rel, func(rel string) bool {
		return slices.ContainsFunc(opened, func(e string) bool { return spec.EntryOwns(e, rel) })
	}); why != "" {
		return fmt.Sprintf("denied: %s may not be written: %s", rel, why)
	}
	for _, e := range l.Owns {
		if spec.EntryOwns(e, rel) {
			return ""
		}
	}
	return fmt.Sprintf("denied: task %s owns only %s; %s is not its file, and a change to it would fail the task at commit", l.Task, strings.Join(l.Owns, ", "), rel)
}

// tasksHookStep installs the hook in the project's Claude Code settings,
// keeping everything else the file holds (tasksmode.InstallProjectHook); a
// settings file that does not parse is bad input, and nothing is written
// (tasksmode.CheckHookSettings).
func tasksHookStep() initStep {
	return initStep{name: "tasks hook", check: func(env *initEnv) error { return tasksmode.CheckHookSettings(env.root) },
		apply: applied(tasksmode.InstallProjectHook)}
}
