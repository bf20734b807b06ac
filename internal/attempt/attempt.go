package attempt

import (
	"context"
	"encoding/json"
	"time"

	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/textx"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/contextpack"
	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/diskwatch"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

// Input is one attempt to run.
type Input struct {
	Repo    *gitx.Repo
	Feature string
	Graph   *spec.Graph
	Task    *spec.Task
	Number  int    // attempt number, from 1
	Base    string // the integration head the workspace starts from
	// Workspace is the worktree path, Branch its new branch; both are zerg's.
	Workspace string
	Branch    string
	// Dir is the attempt's record directory (prompt, stream, verification
	// output, diff), written by zerg.
	Dir string
	// WorkerDir holds the worker's private state (settings, policy, HOME,
	// CLAUDE_CONFIG_DIR, tmp); it must be reachable by the worker user.
	// Default: Dir/claude.
	WorkerDir string
	// Previous says why the last attempt failed; it goes into the retry prompt.
	Previous string
	// Context is what the prompt's context pack is chosen from: the spec's
	// sections, the rules of the task's languages, the dependencies'
	// summaries and the budget (LoadContext). Empty: the task alone.
	Context contextpack.Input

	// Worker is the run's template of the worker launch (WorkerTemplate):
	// binary, API, model, limits, hook. LaunchSpec adds the attempt's
	// directories, prompt, task limits and hook.
	Worker claude.Spec
	// Tier is the model of the task's tier ("" for the template's).
	Tier string
	// VerifyTimeout applies when the task gives none.
	VerifyTimeout time.Duration
	// VerifyEnv names variables passed from zerg's environment to the
	// verification command (besides PATH and locale).
	VerifyEnv []string

	// Protection is what no worker may add, change or delete, whatever its
	// task owns, less what security.allow_protected opens to a task that
	// names the path (config.Config.Protection; nil: zerg's own list),
	// given to the worker's hook and checked on the result's commit.
	Protection *security.Protection
	// FailRefusedWrites is security.refused_writes: fail: a write the
	// worker's hook refused fails the attempt (reason write_refused).
	FailRefusedWrites bool

	// Scanner checks everything the worker changed for secrets before
	// anything is staged; nil disables the scan (tests of the pipeline only).
	Scanner *security.Scanner
	// Audit records the security decisions of the attempt; nil records nothing.
	Audit *security.Audit

	// OnStart is called once the worker runs, with its PIDs and marker, so the
	// coordinator can record them before anything else happens.
	OnStart func(pids []claude.Proc, marker string)
	// OnProgress is called for every worker event.
	OnProgress func(claude.Progress)
	// OnVerify is called when the worker succeeded and the verification
	// command is about to run.
	OnVerify func()
	// Prepared is the worker prepared for this attempt (Prepare), or nil.
	// Run uses it, or throws it away and starts afresh when it cannot.
	Prepared *Prepared

	// Driver is where and how the attempt runs (internal/driver); the
	// pipeline does not know which one it is.
	Driver driver.Driver
	// MaxFileBytes bounds one file of the result (0: no bound).
	MaxFileBytes int64

	// Disk bounds what the attempt writes (its Workspace and WorkerDir) and
	// stops it when it writes on while free space is below the floor.
	Disk DiskLimits
}

// DiskLimits are an attempt's disk limits (disk.* in the config).
type DiskLimits struct {
	WorkspaceBytes int64    // what the workspace and the worker's state may take; 0: no limit
	MinFreeBytes   int64    // the free-space floor; 0: none
	Filesystems    []string // paths on the filesystems whose free space counts
}

// Result is what an attempt produced.
type Result struct {
	Class  outcome.Class
	Reason string // short code: completed, verification_failed, ownership, max_turns, rate_limit, …
	Detail string // what happened, for the report and the retry prompt
	Commit string // the task's commit (Success), or the preserved work of a failed attempt
	// Changes are the paths the attempt changed.
	Changes []gitx.Change
	Worker  claude.Outcome
	// Verify holds the verification command's exit code and output tail.
	VerifyExit   int
	VerifyOutput string
	Duration     time.Duration
	// RetryAfter is the last retry delay the CLI reported for a rate limit
	// (its api_retry events), so the coordinator can pause every launch.
	RetryAfter time.Duration
	// Reset is when an account's usage limit resets, as the API said
	// (Account class only; "" when it did not say).
	Reset string
	// MemoryPeak is the most memory the attempt's processes used together,
	// in bytes (sandbox mode with a cgroup; 0 otherwise).
	MemoryPeak int64
	// Diagnosis is what broke, for a failed attempt: the diagnostics
	// engine's top hypothesis on the verification's output, or the pattern
	// of zerg's own verdict (an ownership check, the commit scan, the API).
	Diagnosis *diagnose.Hypothesis
	// Phases are where the attempt's time went.
	Phases Phases
	// RefusedWrites are the worker's writes its hook refused (refused.go):
	// none of them is in the result.
	RefusedWrites []RefusedWrite
}

// Phases are the wall times of an attempt's steps: making the workspace,
// the launch (the worker's CLI plus what the driver does around it: the
// gateway, the sandbox), the verification (the command in the
// workspace's isolation) and the commit (snapshot, checks and zerg's
// commit). What the launch takes beyond the CLI's own time and the
// others are zerg's overhead; docs/benchmarks.md measures them.
type Phases struct {
	Prepare, Launch, Verify, Commit time.Duration
	// Prepared: the worker was prepared before the attempt (Prepare);
	// Prepare is then the time to lay its workspace again and Launch runs
	// from its prompt.
	Prepared bool
}

// Run executes the attempt. Errors are zerg's own failures (git, disk); what
// the worker did is in Result.
func Run(ctx context.Context, in Input) (Result, error) {
	start := time.Now()
	if in.WorkerDir == "" {
		in.WorkerDir = Record(in.Dir).WorkerState()
	}
	// The disk watch stops the attempt (its context, with the watch's
	// error as the cause) when it writes too much; the pipeline then fails
	// its task instead of committing what it wrote.
	actx, trip := context.WithCancelCause(ctx)
	defer trip(nil)
	stop := diskwatch.Start(actx, diskwatch.Watch{Dirs: []string{in.Workspace, in.WorkerDir},
		Limit: in.Disk.WorkspaceBytes, MinFree: in.Disk.MinFreeBytes, Filesystems: in.Disk.Filesystems}, trip)
	res, err := run(actx, in)
	stop()
	res.Duration = time.Since(start)
	diagnoseResult(in, &res)
	return res, err
}

// diagnoseResult says what broke in a failed attempt: the verification's
// output read by the diagnostics engine, or the pattern of zerg's own
// verdict. The whole diagnosis (findings and every hypothesis) is kept in
// the attempt's diagnosis.json, for zerg diagnose and zerg logs.
func diagnoseResult(in Input, res *Result) {
	if res.Class == outcome.Success || res.Class == "" {
		return
	}
	var d diagnose.Diagnosis
	switch id := diagnose.FromReason(res.Reason); {
	case res.Reason == outcome.ReasonVerificationFailed:
		cmd := ""
		if in.Task.Verification != nil {
			cmd = in.Task.Verification.Command
		}
		// The project's names come from the user's repository: the
		// workspace is the worker's, and a file it planted (a FIFO named
		// go.mod) is not for zerg to open.
		var own []string
		if in.Repo != nil {
			own = diagnose.ProjectNames(in.Repo.Dir)
		}
		d = diagnose.Diagnose(diagnose.Input{Output: res.VerifyOutput, Command: cmd, Exit: res.VerifyExit, Own: own})
	case id != "":
		d = diagnose.Verdict(id, textx.Clip(textx.OneLine(res.Detail), 300))
	default:
		return
	}
	h := d.Top()
	res.Diagnosis = &h
	if b, err := json.MarshalIndent(d, "", "  "); err == nil && in.Dir != "" {
		_ = fsx.WritePrivate(Record(in.Dir).Diagnosis(), append(b, '\n'))
	}
}
