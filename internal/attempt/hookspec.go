package attempt

import (
	"strings"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

// WorkerHook is the hook part of the launch spec an attempt of t gets: the
// run's template (base: the zerg binary and worker_policy) plus the task's
// owned paths and its verification command. In sandbox mode the sandbox is
// the boundary for commands: the Bash check only refuses what reaches
// outside it, and the hook keeps the file tools to the task's own files.
// launch uses it, and `zerg hook check` shows the policy a task's attempts
// get with it, without running one.
func WorkerHook(base claude.HookSpec, t *spec.Task, prot *security.Protection, sandboxed bool) claude.HookSpec {
	if prot == nil {
		prot = security.DefaultProtection()
	}
	h := base
	h.AllowedPaths = t.OwnEntries()
	h.Protect = prot.Patterns()
	h.Opened = prot.OpenedEntries(t.OwnEntries())
	if v := t.Verification; v != nil && strings.TrimSpace(v.Command) != "" {
		h.BashCommands = append(append([]string{}, base.BashCommands...), v.Command)
	}
	if sandboxed {
		h.BashSandboxed = true
	}
	return h
}

// protection is the attempt's Protection, zerg's own list when none is
// given.
func (in Input) protection() *security.Protection {
	if in.Protection == nil {
		return security.DefaultProtection()
	}
	return in.Protection
}
