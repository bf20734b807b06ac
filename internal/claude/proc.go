package claude

import (
	"path/filepath"
	"slices"
	"time"

	"github.com/zergrush/zerg/internal/proc"
)

// Proc identifies one process across PID reuse (internal/proc): the PID plus
// its start time, as the run log records a worker's processes.
type Proc = proc.ID

// EnableSubreaper makes this process a child subreaper, so processes that a
// worker's Bash tool detaches with setsid re-parent to us instead of PID 1
// and can still be found and killed (proc.EnableSubreaper).
func EnableSubreaper() error { return proc.EnableSubreaper() }

// IsSubreaper reports whether this process is a child subreaper.
func IsSubreaper() bool { return proc.IsSubreaper() }

// treeOptions say how a run's processes are recognised: the run's marker
// in their environment, its directories, a sandbox's bwrap orphaned in one
// of them, and a container's init stranded in one.
func treeOptions(marker string, dirs ...string) proc.Options {
	o := proc.Options{Dirs: dirs, Orphan: sandboxIn(dirs), Stranded: containerInit, DieWithParent: true}
	if marker != "" {
		o.Marker = EnvRunMarker + "=" + marker
	}
	return o
}

// sandboxIn claims a sandbox's inner bwrap orphaned before it started the
// command (its outer bwrap was killed during setup): pid 1 of its own
// namespace, it has no marker (bwrap's environment is empty) and
// --die-with-parent cannot reach it. Its command line names the run's
// workdir ("--chdir DIR").
func sandboxIn(dirs []string) func(pid int) bool {
	if len(dirs) == 0 {
		return nil
	}
	return func(pid int) bool {
		argv := proc.Cmdline(pid)
		if len(argv) < 3 || filepath.Base(argv[0]) != "bwrap" {
			return false
		}
		for i := 1; i+1 < len(argv); i++ {
			if argv[i] == "--chdir" {
				return slices.Contains(dirs, argv[i+1])
			}
		}
		return false
	}
}

// containerInit recognises runc's init waiting for its container to be
// started. A worker's container client (podman) killed while it starts the
// container (by the parent-death signal, when the coordinator is killed)
// can leave one that podman has already forgotten: it waits for ever, in
// the container's working directory, which is the attempt's workspace.
// Only runc's is recognised (the runtime podman uses on Debian); another
// runtime's stranded process would not be found.
func containerInit(argv []string) bool {
	return len(argv) >= 2 && filepath.Base(argv[0]) == "runc" && argv[1] == "init"
}

// KillRecorded kills processes a previous zerg recorded for a run (for a
// coordinator resuming after a crash, or zerg stop): a PID is signalled
// only if its start time still matches the record, or it carries the run's
// marker, or it is a sandbox's orphaned bwrap started in one of workdirs
// (the attempts' workspaces) or a container's init stranded in one
// (containerInit); their descendants go too. It returns the PIDs
// signalled.
func KillRecorded(marker string, recorded []Proc, grace time.Duration, workdirs ...string) []int {
	if marker == "" && len(recorded) == 0 && len(workdirs) == 0 {
		return nil
	}
	// bwrap names a directory by its resolved path.
	for _, d := range workdirs {
		if r, err := filepath.EvalSymlinks(d); err == nil && r != d {
			workdirs = append(workdirs, r)
		}
	}
	t := proc.Recorded(recorded, treeOptions(marker, workdirs...))
	var pids []int
	for _, p := range t.Live() {
		pids = append(pids, p.PID)
	}
	t.Terminate(grace)
	return pids
}
