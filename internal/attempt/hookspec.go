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
func WorkerHook(base claude.HookSpec, t *spec.Task, protect []string, opening *security.Opening, sandboxed bool) claude.HookSpec {
	h := base
	h.AllowedPaths = t.OwnEntries()
	h.Protect = protect
	h.Opened = OpenedEntries(t, opening)
	if v := t.Verification; v != nil && strings.TrimSpace(v.Command) != "" {
		h.BashCommands = append(append([]string{}, base.BashCommands...), v.Command)
	}
	if sandboxed {
		h.BashSandboxed = true
	}
	return h
}

// OpenedEntries are the task's entries that name a protected path
// security.allow_protected opens (not through a glob): the hook lets the
// task write there, and the commit check lets the change through.
func OpenedEntries(t *spec.Task, o *security.Opening) []string {
	var out []string
	for _, e := range t.OwnEntries() {
		if o.OpensEntry(e) {
			out = append(out, e)
		}
	}
	return out
}
