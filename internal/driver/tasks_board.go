package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/spec"
)

// The board's protocol as the commands read it (docs/modes.md): zerg tasks
// next hands out the leases the coordinator posted (ReadBoard, HandOut),
// zerg tasks done reports one back (OpenLease, Report), and the session's
// hook keeps a subagent's file tools to its lease's workspace
// (ParseTasksWrite, LeaseOfWorkspace). The coordinator's side is Tasks.

// HandedSuffix names the marker of a lease zerg tasks next has printed:
// <task>.handed holds the hash of its token, as the board does, so that the
// next call hands out only what is new.
const HandedSuffix = ".handed"

// HandedOut reports whether zerg tasks next has printed lease l.
func HandedOut(board string, l Lease) bool {
	b, err := os.ReadFile(filepath.Join(board, l.Task+HandedSuffix))
	return err == nil && l.TokenSHA256 != "" && strings.TrimSpace(string(b)) == l.TokenSHA256
}

// Board is the open leases of one coordinator as zerg tasks next sees them.
type Board struct {
	// Fresh are the leases not handed out yet, Working those handed out
	// before and not reported yet; both oldest first.
	Fresh, Working []Lease
	// Open are the tasks with an open lease.
	Open map[string]bool
}

// ReadBoard reads the leases open on board for the coordinator of pid
// coordinator: a lease a coordinator that died left is not open.
func ReadBoard(board string, coordinator int) (Board, error) {
	leases, err := OpenLeases(board)
	if err != nil {
		return Board{}, err
	}
	b := Board{Open: map[string]bool{}}
	for _, l := range leases {
		if l.Coordinator != coordinator {
			continue
		}
		b.Open[l.Task] = true
		if HandedOut(board, l) {
			b.Working = append(b.Working, l)
		} else {
			b.Fresh = append(b.Fresh, l)
		}
	}
	return b, nil
}

// OpenLease is the lease open for task under the coordinator of pid
// coordinator, ok false when there is none.
func OpenLease(board, task string, coordinator int) (Lease, bool, error) {
	leases, err := OpenLeases(board)
	if err != nil {
		return Lease{}, false, err
	}
	i := slices.IndexFunc(leases, func(l Lease) bool { return l.Task == task && l.Coordinator == coordinator })
	if i < 0 {
		return Lease{}, false, nil
	}
	return leases[i], true, nil
}

// markHanded records that lease l was printed (HandedOut).
func markHanded(board string, l Lease) error {
	return fsx.WritePrivate(filepath.Join(board, l.Task+HandedSuffix), []byte(l.TokenSHA256+"\n"))
}

// TasksWrite is a path inside a tasks-mode workspace, split as the hook
// needs it: .zerg/tasks/<Feature>/<Workspace>/<Rel> under the repository at
// Root.
type TasksWrite struct {
	Root, Feature, Workspace, Rel string
}

// tasksMarker is where tasks mode's workspaces are in a repository
// (run.TasksWorkspaces).
const tasksMarker = "/.zerg/tasks/"

// ParseTasksWrite splits p (absolute and clean) if it is inside a tasks-mode
// workspace. ok is false when it is none of tasks mode's business; problem
// says why a path under .zerg/tasks is not a file of a workspace.
func ParseTasksWrite(p string) (w TasksWrite, ok bool, problem string) {
	p = filepath.ToSlash(p)
	i := strings.LastIndex(p, tasksMarker)
	if i < 0 {
		return TasksWrite{}, false, ""
	}
	root, rest := p[:i], p[i+len(tasksMarker):]
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 3 || parts[2] == "" {
		return TasksWrite{}, true, fmt.Sprintf("%s is not a file in a task's workspace (.zerg/tasks/FEATURE/TASK-N/FILE)", p)
	}
	if spec.FeatureNameProblem(parts[0]) != "" {
		return TasksWrite{}, true, fmt.Sprintf("%s is not a file in a task's workspace", p)
	}
	return TasksWrite{Root: filepath.FromSlash(root), Feature: parts[0], Workspace: parts[1], Rel: parts[2]}, true, ""
}

// LeaseOfWorkspace is the open lease whose workspace is named name
// (<task>-<attempt>): the lease's token is not needed to write there, only
// to report.
func LeaseOfWorkspace(board, name string) (Lease, bool, error) {
	leases, err := OpenLeases(board)
	if err != nil {
		return Lease{}, false, err
	}
	i := slices.IndexFunc(leases, func(l Lease) bool { return l.Name() == name })
	if i < 0 {
		return Lease{}, false, nil
	}
	return leases[i], true, nil
}
