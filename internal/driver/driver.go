// Package driver is where and how an attempt runs: the workspace it gets,
// the isolation its worker and its commands run in, and how its result
// comes back to zerg as a commit. subprocess and sandbox are two drivers;
// the attempt pipeline (internal/attempt) and the coordinator do not know
// which one runs. The contract is in docs/drivers.md.
//
// The shape follows nomad's task drivers: Prepare (a workspace from the
// base), Launch (start the worker and wait for it), Exec (a command in the
// same isolation: the verification), Snapshot (the result as one commit in
// a quarantine), Keep or Remove (the workspace), Close (what the attempt
// held). What zerg checks on a result is not a driver's business: the
// pipeline applies one ordered list of checks to whatever commit a driver
// hands back.
package driver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
)

// Driver makes workspaces for attempts and private clones for zerg's own
// commands. A driver is shared by the attempts of a run and safe for
// concurrent use.
type Driver interface {
	// Name is the mode's name (config mode).
	Name() string
	// Prepare makes a new workspace for the attempt: a checkout of
	// a.Base the worker may change, on a.Branch where the driver keeps a
	// branch. It may wait for a slot (a worker user) and returns the
	// context's cause when stopped while waiting.
	Prepare(ctx context.Context, a Attempt) (Workspace, error)
	// Reopen is the workspace a dead coordinator left at a.Workspace, for
	// the pipeline to finish (attempt.Recover). Its processes are gone.
	Reopen(ctx context.Context, a Attempt) (Workspace, error)
	// Isolate makes a private clone of commit in which zerg's own commands
	// (gates, zerg check, zerg review's gates) run as a verification does.
	// name says what it is for (a gate, a lane); Remove deletes it.
	Isolate(ctx context.Context, commit, name string) (Workspace, error)
}

// Workspace is one attempt's (or one command lane's) workspace in its
// driver's isolation.
type Workspace interface {
	// Dir is the workspace's path on this machine.
	Dir() string
	// Launch runs the worker to its end: the driver adjusts spec to its
	// isolation and calls start with it (start records the stream and
	// reports progress), then judges how it ended from what the driver
	// itself saw.
	Launch(ctx context.Context, spec claude.Spec, start Starter) (Verdict, error)
	// Exec runs one repository command in the workspace, in the
	// isolation the worker had (without its network), and returns its
	// exit code (124 on timeout) and bounded output.
	Exec(ctx context.Context, c Command) (int, string)
	// Snapshot commits everything in the workspace on top of base into q
	// (never into the repository itself: what is refused never reaches
	// its object store). problem says why the workspace's content cannot
	// be committed or read ("" when it could): that is the worker's doing.
	Snapshot(ctx context.Context, q *gitx.Quarantine, base string) (commit, problem string)
	// Keep leaves the workspace for a person, hands it to them where the
	// worker owned it, and says where it is.
	Keep(why string) string
	// Remove deletes the workspace once its work is on a branch; what is
	// not on it (a change made after the snapshot) is never deleted.
	Remove(ctx context.Context) error
	// Discard deletes the workspace whatever it holds: an attempt that
	// wrote past a disk limit, where keeping it would keep the disk full.
	Discard(ctx context.Context) error
	// Close gives back what the workspace held (a worker user slot, a
	// control group, a build cache). It never deletes the workspace.
	Close()
}

// Rebaser is a workspace that can be laid again from another base while
// its worker waits for its prompt (a prepared worker, attempt.Prepare): the
// worker has done nothing in it yet, so nothing of it is lost.
type Rebaser interface {
	Rebase(ctx context.Context, base string) error
}

// Starter starts the worker with spec and waits for it.
type Starter func(ctx context.Context, spec claude.Spec) (claude.Outcome, error)

// Attempt is what a driver needs to know of an attempt.
type Attempt struct {
	Repo      *gitx.Repo
	Task      string // the task's ID, for names and errors
	Number    int
	Base      string
	Workspace string // where the workspace goes
	Branch    string // the attempt's branch (drivers that check one out)
	// WorkerDir is the worker's private state (settings, HOME,
	// CLAUDE_CONFIG_DIR, tmp, the build cache).
	WorkerDir string
	// Models and TaskUSD are the attempt's models and budget, for the
	// policy of its model-API requests (drivers with a gateway).
	Models  []string
	TaskUSD float64
	// Audit records one security decision; Screen is a tool call's input
	// as the audit log may keep it (no secret in it).
	Audit  func(kind string, fields map[string]any) error
	Screen func(json.RawMessage) json.RawMessage
}

// Verdict is how the worker ended, judged by the driver from what it saw.
type Verdict struct {
	// Worker is the CLI's outcome; usage and cost are the gateway's
	// where the driver has one.
	Worker claude.Outcome
	Class  outcome.Class
	Reason string
	Detail string
	// Reset is when an account's usage limit resets, as the API said.
	Reset string
	// MemoryPeak is the most memory the attempt's processes used together
	// (drivers with a control group; 0 otherwise).
	MemoryPeak int64
	// Refused are the worker's tool calls its CLI refused, as the driver
	// saw them reported (refusals.go).
	Refused []Refusal
}

// Command is one repository command zerg runs in a workspace: a task's
// verification, a gate, a check.
type Command struct {
	Command string
	Timeout time.Duration
	// Env is set on top of the allowlist (PATH, locale, TERM) and Pass.
	Env  []string
	Pass []string
	// Home is a fresh HOME for it, made by the driver under this name in
	// the worker's state ("" for none: the worker user's own).
	Home string
}
