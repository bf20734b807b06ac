package runstate

import (
	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/outcome"
)

// Event types of a run's log. Every task state transition is one of these.
const (
	EvRunStarted         = "run_started"
	EvRunResumed         = "run_resumed"
	EvGraphChanged       = "graph_changed"
	EvIntegrationAdopted = "integration_adopted"
	EvLevelStarted       = "level_started"
	EvAttemptStarted     = "attempt_started"
	EvAttemptPIDs        = "attempt_pids"
	EvAttemptVerifying   = "attempt_verifying"
	EvAttemptFinished    = "attempt_finished"
	EvTaskFailed         = "task_failed"
	EvTaskRequeued       = "task_requeued"
	EvTaskBlocked        = "task_blocked"
	EvLevelMerged        = "level_merged"
	EvLevelFailed        = "level_failed"
	EvGateFinished       = "gate_finished"
	EvRunStopped         = "run_stopped"
	EvRunFinished        = "run_finished"
	// The DAG schedule's events (schedule: dag, docs/schedule.md).
	EvTaskScheduled   = "task_scheduled"
	EvBatchMerged     = "batch_merged"
	EvTaskMergeFailed = "task_merge_failed"
)

// RunStarted opens a run.
type RunStarted struct {
	Feature     string `json:"feature"`
	Base        string `json:"base"`        // the commit the integration branch started from
	BaseRef     string `json:"base_ref"`    // the user's branch at start, for the report
	Integration string `json:"integration"` // branch name
	GraphSHA256 string `json:"graph_sha256"`
	Workers     int    `json:"workers"`
	// Rehearsal and Scenario: the run talks to the scripted model. A resume
	// keeps the mode it started with, so a rehearsal never reaches the real
	// API by accident.
	Rehearsal bool   `json:"rehearsal,omitempty"`
	Scenario  string `json:"scenario,omitempty"`
	// Subscription: the workers signed in with a subscription token, so
	// the dollars are what the usage would cost at API prices, not a bill.
	Subscription bool `json:"subscription,omitempty"`
	// Mode is the config's mode the run started in. A resume may switch
	// between the modes zerg starts workers in, but not into or out of
	// tasks mode, where the user's session runs them and the workspaces
	// live elsewhere.
	Mode string `json:"mode,omitempty"`
	// Capabilities are what the mode's driver could (driver.Capabilities),
	// which what reads the run later reads instead of the mode's name; nil
	// in logs from before they were recorded (Caps).
	Capabilities *driver.Capabilities `json:"capabilities,omitempty"`
	// Schedule is the schedule the run started with (config.Schedules);
	// empty in logs from before there was a choice: level.
	Schedule string `json:"schedule,omitempty"`
}

// Caps are the capabilities the run started with: the recorded ones, or
// in a log from before they were recorded, those of its mode.
func (r *RunStarted) Caps() driver.Capabilities {
	return driver.ModeCapabilities(r.Mode, r.Capabilities)
}

// PhasesMS are an attempt's phases (attempt.Phases) in milliseconds.
type PhasesMS struct {
	Prepare int64 `json:"prepare_ms"`
	Launch  int64 `json:"launch_ms"`
	Verify  int64 `json:"verify_ms"`
	Commit  int64 `json:"commit_ms"`
	// Prepared: the worker was prepared ahead (attempt.Phases.Prepared).
	Prepared bool `json:"prepared,omitempty"`
}

// RunResumed: a coordinator took the run over after a stop or a crash.
type RunResumed struct {
	Workers int `json:"workers"`
	// Schedule is the schedule the run goes on with, when a resume moved
	// it from level to dag (resumeSchedule); empty: unchanged.
	Schedule string `json:"schedule,omitempty"`
}

// TaskScheduled (DAG schedule): every dependency of the task is merged and
// no task that holds a path it owns is in flight; it waits for a worker.
// Base is the integration head it starts from.
type TaskScheduled struct {
	Level int    `json:"level"`
	Base  string `json:"base"`
}

// BatchMerged (DAG schedule): these committed tasks are merged onto Base
// and the gates passed on Head, the new integration head. Written before
// the branch moves, as level_merged is. Batch counts the run's merges from
// 1.
type BatchMerged struct {
	Batch int      `json:"batch"`
	Base  string   `json:"base"`
	Head  string   `json:"head"`
	Tasks []string `json:"tasks"`
}

// TaskMergeFailed (DAG schedule): the task's committed work, merged onto
// the integration head with no other unmerged task, failed a required gate
// (Reason gate_failed) or did not merge (merge_conflict). It counts as a
// task failure: the task is tried again with the gate's output in its
// prompt, or fails for good when its retries are spent.
type TaskMergeFailed struct {
	Reason string `json:"reason"`
	Detail string `json:"detail"`
	Gate   string `json:"gate,omitempty"`
	Exit   int    `json:"exit,omitempty"`
	Output string `json:"output,omitempty"` // the gate's output, tail
	Head   string `json:"head,omitempty"`   // the merged head the gate failed on
}

// GraphChanged: the task graph differs from the one the run last recorded,
// and the difference is one the run can take (see PlanGraphChange). Changed
// and removed tasks that were not merged start over or leave the run.
type GraphChanged struct {
	GraphSHA256 string       `json:"graph_sha256"`
	Added       []string     `json:"added,omitempty"`
	Removed     []string     `json:"removed,omitempty"`
	Changed     []TaskChange `json:"changed,omitempty"`
}

// TaskChange names the fields of a task that changed.
type TaskChange struct {
	Task   string   `json:"task"`
	Fields []string `json:"fields"`
}

// IntegrationAdopted: someone committed on the integration branch on top of
// the head the log recorded; the run builds on their commits.
type IntegrationAdopted struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// LevelStarted: the level's tasks that must run are scheduled from Base.
type LevelStarted struct {
	Level int      `json:"level"`
	Base  string   `json:"base"`
	Tasks []string `json:"tasks"`
}

// TaskBlocked: the task cannot run because an earlier level failed.
type TaskBlocked struct {
	Reason string `json:"reason"`
}

// AttemptStarted is written before the workspace exists, so a crash at any
// later point leaves a record of what to reconcile.
type AttemptStarted struct {
	Level     int    `json:"level"`
	Base      string `json:"base"`
	Workspace string `json:"workspace"`
	// WorkspaceKind is what the workspace is (driver.WorkspaceKind), which
	// decides what zerg's git may do in it after a crash; "" in logs from
	// before it was recorded.
	WorkspaceKind driver.WorkspaceKind `json:"workspace_kind,omitempty"`
	Branch        string               `json:"branch"`
	Dir           string               `json:"dir"`
}

// AttemptPIDs records the worker's processes so that only they are ever killed.
type AttemptPIDs struct {
	PIDs   []claude.Proc `json:"pids"`
	Marker string        `json:"marker"`
}

// AttemptFinished closes an attempt.
type AttemptFinished struct {
	Class   outcome.Class `json:"class"` // success | task | infra | fatal | account
	Reason  string        `json:"reason"`
	Detail  string        `json:"detail,omitempty"`
	Commit  string        `json:"commit,omitempty"`
	Changed []string      `json:"changed,omitempty"`
	// ChangedOmitted counts the paths past the first MaxChangedListed.
	ChangedOmitted int     `json:"changed_omitted,omitempty"`
	CostUSD        float64 `json:"cost_usd,omitempty"`
	Tokens         int64   `json:"tokens,omitempty"`
	// Usage splits Tokens the way the API bills them; Model is the model
	// the attempt was launched with.
	Usage *Tokens `json:"usage,omitempty"`
	Model string  `json:"model,omitempty"`
	// Reset is when an account's usage limit resets, as the API said
	// (class account only).
	Reset      string `json:"reset,omitempty"`
	Turns      int    `json:"turns,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	WorkerMS   int64  `json:"worker_ms,omitempty"` // time inside the claude process
	// Phases are where the attempt's time went (attempt.Phases), in
	// milliseconds; absent in logs from before they were recorded.
	Phases     *PhasesMS `json:"phases,omitempty"`
	VerifyExit int       `json:"verify_exit,omitempty"`
	// MemoryPeakMB is the most memory the attempt's processes used
	// together (sandbox mode with a cgroup), 0 when unknown.
	MemoryPeakMB int64 `json:"memory_peak_mb,omitempty"`
	// Diagnosis is what broke (a failed attempt): the diagnostics engine's
	// top hypothesis, or the pattern of zerg's own verdict.
	Diagnosis *diagnose.Hypothesis `json:"diagnosis,omitempty"`
	// RefusedWrites are the worker's writes its hook refused (a file the
	// task does not own, a protected one): none is in Commit.
	RefusedWrites []attempt.RefusedWrite `json:"refused_writes,omitempty"`
}

// MaxChangedListed bounds AttemptFinished.Changed: a worker chooses how
// many paths it changes.
const MaxChangedListed = 1000

// TaskFailed: the task failed for good (its retries are spent).
type TaskFailed struct {
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// LevelMerged: the level's branches are merged and the gates passed; Head is
// the new integration head. Written before the branch moves (see mergeLevel).
type LevelMerged struct {
	Level int      `json:"level"`
	Base  string   `json:"base"`
	Head  string   `json:"head"`
	Tasks []string `json:"tasks"`
}

// LevelFailed: the level was not merged.
type LevelFailed struct {
	Level  int      `json:"level"`
	Reason string   `json:"reason"`
	Tasks  []string `json:"tasks,omitempty"`
}

// GateFinished is one quality gate on a merged head.
type GateFinished struct {
	// Level is the level merged (level schedule); 0 under the DAG
	// schedule, where Batch is the merge it is a test of (the number the
	// next batch_merged will carry) and Tasks the tasks merged for it.
	Level    int      `json:"level"`
	Batch    int      `json:"batch,omitempty"`
	Tasks    []string `json:"tasks,omitempty"`
	Name     string   `json:"name"`
	Command  string   `json:"command"`
	Exit     int      `json:"exit"`
	Required bool     `json:"required"`
	Output   string   `json:"output,omitempty"` // an excerpt: its beginning and its end (older logs: its end)
	Head     string   `json:"head"`
	// Log is the gate's whole output (bounded as every capture is), a file
	// relative to the run's directory (GateLogName); "" in older logs.
	Log string `json:"log,omitempty"`
	// DurationMS is the gate's wall time, its fresh clone included, for
	// where a level's time went (bench/speedup); 0 in older logs.
	DurationMS int64 `json:"duration_ms,omitempty"`
	// Named are the tasks whose files a failed gate's output names
	// (namedTasks): where to look first.
	Named []string `json:"named,omitempty"`
}

// RunFinished closes a run.
type RunFinished struct {
	Delivered bool   `json:"delivered"`
	Head      string `json:"head"`
	Reason    string `json:"reason,omitempty"`
	// Cause names why launching stopped when it was not a task or a gate:
	// "budget" (budget.run_usd), "account" (credit, usage limit, key) or
	// "environment" (every worker met the same problem of the machine);
	// ResumeAfter is when the API said an account limit resets.
	Cause       string `json:"cause,omitempty"`
	ResumeAfter string `json:"resume_after,omitempty"`
}

// RunStopped: interrupted (signal or zerg stop).
type RunStopped struct {
	Reason string `json:"reason"`
}

// EvResetWait records that launching waits for an account's usage limit to
// reset (ResetWait); zerg status shows it while the run waits.
const EvResetWait = "reset_wait"

// ResetWait is the wait for a usage limit's reset.
type ResetWait struct {
	Task   string `json:"task"`   // the task whose attempt was refused
	Reason string `json:"reason"` // the refusal's reason (usage_limit)
	Reset  string `json:"reset"`  // the reset time as the API said it
	Until  string `json:"until"`  // when launching resumes (RFC 3339)
}

// Empty reports whether the graphs had no task-level difference.
func (d GraphChanged) Empty() bool {
	return len(d.Added) == 0 && len(d.Removed) == 0 && len(d.Changed) == 0
}
