package run

import (
	"context"
	"time"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

// The coordinator decides; these do. Each is a small interface so that the
// decisions (retries, resume, graph edits, crash reconciliation) are tested
// against fakes in milliseconds, and the real implementations (git, the
// claude CLI, the process table) are tested on their own.

// EventLog is the run's append-only log (eventlog.Log).
type EventLog interface {
	AppendData(typ, task string, attempt int, data any) (eventlog.Event, error)
}

// AttemptRequest is one attempt to run.
type AttemptRequest struct {
	Task *spec.Task
	// Model is the task's model (ModelFor: the graph's, else by its role).
	Model     string
	Number    int
	Level     int
	Base      string // the integration head the attempt starts from
	Workspace string
	Branch    string
	Dir       string // the attempt's record directory
	WorkerDir string // the worker's private state
	Previous  string // why the last task-class attempt failed, for the retry prompt

	OnStart    func(pids []claude.Proc, marker string) // the worker runs
	OnProgress func(claude.Progress)                   // a worker event arrived
	OnVerify   func()                                  // the worker finished; verification starts
}

// Attempter runs attempts. An error is zerg's own failure (git, disk); what
// the worker did is in the Result.
type Attempter interface {
	Attempt(ctx context.Context, req AttemptRequest) (attempt.Result, error)
	// Recover finishes an attempt its coordinator lost (attempt.Recover):
	// ok is false when it could not, and the Salvager keeps its work.
	Recover(ctx context.Context, req AttemptRequest) (res attempt.Result, ok bool, err error)
}

// TaskMerge is one committed task to merge into the integration head: the
// commit zerg checked and recorded, never whatever its branch points at now.
type TaskMerge struct {
	Task   string
	Title  string
	Commit string
}

// MergedLevel is a level merged in a scratch workspace, not yet published.
type MergedLevel interface {
	Head() string
	// RunGate runs one quality gate on the merged head.
	RunGate(ctx context.Context, g config.Gate) (exit int, output string)
	// Discard removes the scratch workspace.
	Discard()
}

// ConflictError: a task's branch does not merge cleanly (two tasks changed
// one file: an ownership violation the checks did not catch).
type ConflictError struct {
	Task string
	Err  error
}

func (e *ConflictError) Error() string { return "merge conflict on " + e.Task + ": " + e.Err.Error() }
func (e *ConflictError) Unwrap() error { return e.Err }

// Integrator merges a level's branches onto a base.
type Integrator interface {
	Merge(ctx context.Context, base string, merges []TaskMerge) (MergedLevel, error)
}

// Refs reads and moves the branches of the run.
type Refs interface {
	// UserHead is the commit the user has checked out and its branch ("" when detached).
	UserHead(ctx context.Context) (commit, branch string, err error)
	// Branch is the commit a branch points at, "" when it does not exist.
	Branch(ctx context.Context, name string) (string, error)
	IsAncestor(ctx context.Context, ancestor, descendant string) (bool, error)
	// SetBranch moves name to commit only if it is at old (old "": create it).
	SetBranch(ctx context.Context, name, commit, old string) error
}

// Salvager cleans up after an attempt its coordinator lost (a crash):
// it kills the processes recorded for it (only those) and commits whatever
// the worker left in its workspace to the attempt's branch, so nothing is
// lost and the workspace can go.
type Salvager interface {
	Reap(o runstate.OpenAttempt) (killed int)
	// ReapRun removes what the run's driver left outside the process
	// records (a container mode run's containers).
	ReapRun(ctx context.Context) (removed int)
	Preserve(ctx context.Context, task string, o runstate.OpenAttempt) (commit string, err error)
}

// Clock is time, injected so that backoff waits take no time in tests.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
