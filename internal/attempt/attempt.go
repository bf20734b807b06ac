package attempt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zergrush/zerg/internal/capture"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/contextpack"
	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/diskwatch"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

// Class is how an attempt ended, for the retry policy (DESIGN §5).
type Class string

const (
	Success Class = "success" // committed
	Task    Class = "task"    // counts against the task's retries
	Infra   Class = "infra"   // retried with backoff, not counted
	Fatal   Class = "fatal"   // stops the run
	Account Class = "account" // the account refused (credit, usage limit, key): no new launches
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

	// Worker is the template of the worker launch: binary, API, model,
	// limits, hook binary. Workdir, AttemptDir, Prompt and the allowed paths
	// are filled in here.
	Worker claude.Spec
	// VerifyTimeout applies when the task gives none.
	VerifyTimeout time.Duration
	// VerifyEnv names variables passed from zerg's environment to the
	// verification command (besides PATH and locale).
	VerifyEnv []string

	// Protected are the paths no worker may add, change or delete, whatever
	// its task owns (security.NewProtectedPaths: nil means zerg's own list).
	// Subprocess mode checks the workspace's changes against them, sandbox
	// mode the commit.
	Protected []string

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

	// Sandbox, when set, runs the attempt in sandbox mode (sandboxed.go);
	// nil is subprocess mode.
	Sandbox *Sandboxed

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
	Class  Class
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
}

// Run executes the attempt. Errors are zerg's own failures (git, disk); what
// the worker did is in Result.
func Run(ctx context.Context, in Input) (Result, error) {
	start := time.Now()
	if in.WorkerDir == "" {
		in.WorkerDir = filepath.Join(in.Dir, "claude")
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
	if res.Class == Success || res.Class == "" {
		return
	}
	var d diagnose.Diagnosis
	switch id := diagnose.FromReason(res.Reason); {
	case res.Reason == "verification_failed":
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
		d = diagnose.Verdict(id, clip(oneLine(res.Detail), 300))
	default:
		return
	}
	h := d.Top()
	res.Diagnosis = &h
	if b, err := json.MarshalIndent(d, "", "  "); err == nil && in.Dir != "" {
		_ = fsx.WritePrivate(filepath.Join(in.Dir, DiagnosisFile), append(b, '\n'))
	}
}

// DiagnosisFile is the attempt's diagnosis, in its directory.
const DiagnosisFile = "diagnosis.json"

func run(ctx context.Context, in Input) (Result, error) {
	if in.Sandbox != nil {
		return runSandboxed(ctx, in)
	}
	if err := fsx.PrivateDir(in.Dir); err != nil {
		return Result{}, err
	}
	if err := in.Repo.AddWorktree(ctx, in.Workspace, in.Branch, in.Base); err != nil {
		return Result{}, fmt.Errorf("create workspace for %s: %w", in.Task.ID, err)
	}
	if u := in.Worker.RunAs; u != nil {
		// The worker owns its files; .git stays zerg's, and zerg trusts exactly
		// this workspace for its own git calls.
		in.Repo.TrustWorkspace(in.Workspace)
		defer in.Repo.UntrustWorkspace(in.Workspace)
		if err := u.PrepareWorkspace(in.Workspace); err != nil {
			return Result{}, fmt.Errorf("hand the workspace of %s to %s: %w", in.Task.ID, u.Name, err)
		}
	}
	prompt, err := writePrompt(in)
	if err != nil {
		return Result{}, err
	}

	out, retryAfter, err := launch(ctx, in, prompt, nil)
	if err != nil {
		return Result{}, err
	}
	return finishSubprocess(ctx, in, out, retryAfter)
}

// finishSubprocess takes a subprocess-mode worker's outcome through the
// checks, the verification and zerg's commit: after a launch, or for an
// attempt whose coordinator died after its worker finished (Recover).
func finishSubprocess(ctx context.Context, in Input, out claude.Outcome, retryAfter time.Duration) (Result, error) {
	res := Result{Worker: out, RetryAfter: retryAfter}
	switch out.Class {
	case claude.ClassInfra:
		res.Class, res.Reason, res.Detail = Infra, out.Reason, workerDetail(out)
	case claude.ClassFatal:
		res.Class, res.Reason, res.Detail = Fatal, out.Reason, workerDetail(out)
	case claude.ClassAccount:
		res.Class, res.Reason, res.Detail = Account, out.Reason, workerDetail(out)
		res.Reset = claude.ResetFromText(out.Detail)
	case claude.ClassTask:
		res.Class, res.Reason, res.Detail = Task, out.Reason, workerDetail(out)
	case claude.ClassSuccess:
		res.Class, res.Reason = Success, "completed"
	default:
		res.Class, res.Reason, res.Detail = Infra, "unknown", workerDetail(out)
	}
	if ctx.Err() != nil {
		// Stopped by the coordinator: keep the work, let the caller decide.
		res.Class, res.Reason, res.Detail = Infra, "cancelled", "the run was stopped"
	}
	if err := diskwatch.Tripped(ctx); err != nil {
		return in.diskFailed(ctx, res, err), nil
	}

	w := in.Repo.In(in.Workspace)
	for _, d := range out.PermissionDenials {
		if err := in.record(security.AuditHookDenied, deniedCall(d, in.Scanner)); err != nil {
			return in.auditFailed(res, err), nil
		}
	}
	// Secrets first, before anything is staged: a secret must never reach
	// git's object store, not even on a failed attempt's branch. The
	// workspace is left as it is (zerg never deletes uncommitted work).
	if in.Scanner != nil {
		findings, err := scanWorkspace(context.WithoutCancel(ctx), w, in.Base, in.Scanner)
		if err != nil {
			return res, fmt.Errorf("secret scan of %s: %w", in.Task.ID, err)
		}
		if len(findings) > 0 {
			var where []string
			for _, f := range findings {
				where = append(where, fmt.Sprintf("%s:%d (%s)", f.File, f.Line, f.RuleID))
				if err := in.record(security.AuditSecretFound, map[string]any{"rule": f.RuleID, "file": f.File, "line": f.Line}); err != nil {
					return in.auditFailed(res, err), nil
				}
			}
			res.Class, res.Reason = Task, "secret_found"
			res.Detail = fmt.Sprintf("a secret was written to %s; never put credentials in files: read them from the environment or configuration. The work was not committed; it stays in %s",
				listOf(where), in.Workspace)
			return res, nil
		}
	}
	if res.Class == Success {
		if in.OnVerify != nil {
			in.OnVerify()
		}
		res.VerifyExit, res.VerifyOutput = verify(ctx, in)
		if res.VerifyExit != 0 {
			res.Class, res.Reason = Task, "verification_failed"
			res.Detail = verificationFailed(in.Task.Verification.Command, res.VerifyExit, res.VerifyOutput)
			if ctx.Err() != nil {
				res.Class, res.Reason, res.Detail = Infra, "cancelled", "the run was stopped"
			}
		}
	}
	if err := diskwatch.Tripped(ctx); err != nil {
		return in.diskFailed(ctx, res, err), nil
	}
	// Staging everything lists untracked files too: nothing escapes the check.
	changes, err := w.ChangedFiles(context.WithoutCancel(ctx), in.Base)
	if err != nil {
		return res, fmt.Errorf("list changes of %s: %w", in.Task.ID, err)
	}
	res.Changes = changes
	if res.Class == Success {
		if bad := Violations(in.Task, changes); len(bad) > 0 {
			if err := in.record(security.AuditOwnershipViolation, pathsRecord(bad)); err != nil {
				return in.auditFailed(res, err), nil
			}
			res.Class, res.Reason = Task, "ownership"
			res.Detail = fmt.Sprintf("changed %s, which task %s does not own (it owns: %s); change only owned files",
				listOf(bad), in.Task.ID, ownedList(in.Task))
		}
	}
	if res.Class == Success {
		bad, err := ProtectedChanges(in.Protected, changes)
		if err != nil {
			return res, fmt.Errorf("check the changes of %s: %w", in.Task.ID, err)
		}
		if len(bad) > 0 {
			what, err := in.recordProblems(bad)
			if err != nil {
				return in.auditFailed(res, err), nil
			}
			res.Class, res.Reason = Task, "forbidden_change"
			res.Detail = fmt.Sprintf("changed %s, which no worker may change whatever its task owns (zerg's, git's, CI and hook files, security.protected_paths); leave them alone",
				listOf(what))
		}
	}
	if res.Class == Success {
		in.checkComplete(ctx, &res)
	}
	if diff, err := w.StagedPatch(context.WithoutCancel(ctx), in.Base); err == nil {
		_ = fsx.WritePrivate(filepath.Join(in.Dir, "diff.patch"), in.redactor().Redact([]byte(diff)))
	}

	// Commit: the task's result, or a failed attempt's work preserved on its
	// own branch so the workspace can go without losing anything.
	msg := fmt.Sprintf("%s: %s", in.Task.ID, oneLine(in.Task.Title))
	trailers := map[string]string{"Task-Id": in.Task.ID, "Zerg-Feature": in.Feature, "Zerg-Attempt": fmt.Sprint(in.Number)}
	if res.Class != Success {
		msg = fmt.Sprintf("%s: attempt %d did not pass (%s)", in.Task.ID, in.Number, res.Reason)
		trailers["Zerg-Status"] = "failed"
	}
	commit, err := w.Commit(context.WithoutCancel(ctx), msg, trailers)
	if err != nil {
		return res, fmt.Errorf("commit %s: %w", in.Task.ID, err)
	}
	res.Commit = commit
	if err := in.Repo.RemoveWorktree(context.WithoutCancel(ctx), in.Workspace); err != nil && !errors.Is(err, gitx.ErrDirty) {
		return res, fmt.Errorf("remove workspace of %s: %w", in.Task.ID, err)
	}
	return res, nil
}

// launch runs the worker; adjust, when given, changes its launch spec (the
// sandbox's API settings and binds).
func launch(ctx context.Context, in Input, prompt string, adjust func(*claude.Spec)) (claude.Outcome, time.Duration, error) {
	sp := in.Worker
	sp.Workdir = in.Workspace
	sp.AttemptDir = in.WorkerDir
	sp.Prompt = prompt
	if in.Task.Model != "" {
		sp.Model = in.Task.Model
	}
	if in.Task.MaxTurns > 0 {
		sp.MaxTurns = in.Task.MaxTurns
	}
	if in.Task.BudgetUSD > 0 {
		sp.MaxBudgetUSD = in.Task.BudgetUSD
	}
	// The worker may run the check zerg will run anyway; in sandbox mode
	// the sandbox, not the Bash check, is the boundary for commands.
	sp.Hook = WorkerHook(sp.Hook, in.Task, in.Sandbox != nil)
	if adjust != nil {
		adjust(&sp)
	}

	f, err := fsx.CreatePrivate(filepath.Join(in.Dir, "stream.jsonl"))
	if err != nil {
		return claude.Outcome{}, 0, err
	}
	defer f.Close()
	// The key the worker holds never lands in zerg's records, in any form;
	// and what the worker's CLI prints (code in a sandbox can write to its
	// stdout) takes at most maxStreamRecord of zerg's disk.
	redacted := in.redactor().Writer(f)
	defer redacted.Close() // flushes the held-back tail, before f.Close
	stream := capture.Limit(redacted, maxStreamRecord, "{\"type\":\"zerg\",\"note\":\"the rest of the stream was not recorded: it passed the record's limit\"}\n")
	var retryAfter atomic.Int64
	var mu sync.Mutex
	prev := sp.OnEvent
	var current atomic.Pointer[claude.Run] // events may arrive before Start returns
	sp.OnEvent = func(ev claude.Event) {
		if ev.APIRetry != nil && ev.APIRetry.ErrorStatus == 429 {
			retryAfter.Store(int64(ev.APIRetry.RetryDelayMS * float64(time.Millisecond)))
		}
		mu.Lock()
		stream.Write(ev.Raw)
		stream.Write([]byte{'\n'})
		mu.Unlock()
		if prev != nil {
			prev(ev)
		}
		if r := current.Load(); in.OnProgress != nil && r != nil {
			in.OnProgress(r.Progress())
		}
	}
	run, err := claude.Start(ctx, sp)
	if err != nil {
		if errors.Is(err, claude.ErrBadSpec) {
			return claude.Outcome{Class: claude.ClassFatal, Reason: claude.ReasonStartFailed, Detail: err.Error()}, 0, nil
		}
		return claude.Outcome{Class: claude.ClassInfra, Reason: claude.ReasonStartFailed, Detail: err.Error()}, 0, nil
	}
	current.Store(run)
	if in.OnStart != nil {
		in.OnStart(run.PIDs(), run.Marker())
	}
	out := run.Wait()
	return out, time.Duration(retryAfter.Load()), nil
}

// maxStreamRecord bounds an attempt's stream.jsonl.
const maxStreamRecord = 256 << 20

// redactor removes the credentials zerg knows from what it writes down:
// the worker's key and token, and in sandbox mode the real ones too.
func (in Input) redactor() *security.Redactor {
	secrets := []string{string(in.Worker.API.APIKey), string(in.Worker.API.AuthToken)}
	if in.Sandbox != nil {
		secrets = append(secrets, in.Sandbox.APIKey, in.Sandbox.AuthToken)
	}
	return security.NewRedactor(secrets...)
}

// record writes one security decision to the audit log, if there is one. A
// decision that cannot be recorded stops the attempt rather than let it go
// on unaudited (auditFailed).
func (in Input) record(kind string, fields any) error {
	if in.Audit == nil {
		return nil
	}
	if err := in.Audit.RecordTask(in.Task.ID, in.Number, kind, fields); err != nil {
		return fmt.Errorf("write the audit log: %w", err)
	}
	return nil
}

// deniedCall describes a denied tool call for the audit log: the tool and
// its target, never file contents, and a Bash command only when it holds no
// secret.
func deniedCall(d claude.PermissionDenial, sc *security.Scanner) map[string]any {
	fields := map[string]any{"tool": d.ToolName}
	var input map[string]any
	if json.Unmarshal(d.ToolInput, &input) != nil {
		return fields
	}
	for _, k := range []string{"file_path", "notebook_path", "path", "pattern"} {
		if v, ok := input[k].(string); ok {
			fields[k] = clip(v, 300)
		}
	}
	if cmd, ok := input["command"].(string); ok {
		if sc != nil && len(sc.ScanFile("command", []byte(cmd))) > 0 {
			cmd = "[not recorded: it contains a secret]"
		}
		fields["command"] = clip(cmd, 300)
	}
	return fields
}

// scanWorkspace scans what the worker changed relative to base without
// staging it: the diff of tracked files and the content of new files.
func scanWorkspace(ctx context.Context, w *gitx.Runner, base string, sc *security.Scanner) ([]security.Finding, error) {
	if allow, err := w.FileAt(ctx, base, security.SecretsAllowFile); err == nil {
		// The allowlist comes from the base, never from the worker's own tree.
		if a, err := security.ParseAllowlist(security.SecretsAllowFile, bytes.NewReader(allow)); err == nil {
			sc = sc.WithAllowlist(a)
		}
	}
	diff, err := w.WorkingDiff(ctx, base)
	if err != nil {
		return nil, err
	}
	findings := sc.ScanDiff(diff)
	untracked, err := w.UntrackedFiles(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range untracked {
		full := filepath.Join(w.Dir, p)
		fi, err := os.Lstat(full)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4<<20 {
			continue
		}
		data, err := os.ReadFile(full)
		if err != nil {
			continue
		}
		findings = append(findings, sc.ScanFile(p, data)...)
	}
	return findings, nil
}

// checkComplete fails an attempt whose changes do not deliver its task
// (Incomplete): nothing, a created file missing, a modified one unchanged.
func (in Input) checkComplete(ctx context.Context, res *Result) {
	inBase := func(p string) bool {
		_, err := in.Repo.FileAt(context.WithoutCancel(ctx), in.Base, p)
		return err == nil
	}
	if reason, detail := Incomplete(in.Task, res.Changes, inBase); reason != "" {
		res.Class, res.Reason, res.Detail = Task, reason, detail
	}
}

// auditFailed ends an attempt whose security decision could not be
// written down: nothing of it is committed (the workspace stays), and its
// task fails, not the run (a worker may be what filled the disk).
func (in Input) auditFailed(res Result, err error) Result {
	res.Commit = ""
	res.Class, res.Reason = Task, "audit_failed"
	kept := "the workspace stays in " + in.Workspace
	if in.Sandbox != nil {
		kept = in.keep("a security decision about it could not be written to the audit log")
	}
	res.Detail = fmt.Sprintf("zerg could not write a security decision about this attempt to the audit log (%s); nothing of it was committed, %s",
		clip(err.Error(), 300), kept)
	return res
}

// KeptSuffix names the record zerg writes beside a sandboxed workspace it
// keeps for a person: <workspace>.kept, JSON of Kept.
const KeptSuffix = ".kept"

// Kept is why zerg kept a sandboxed workspace (zerg cleanup reads it).
type Kept struct {
	Task    string    `json:"task"`
	Attempt int       `json:"attempt"`
	Reason  string    `json:"reason"`
	Time    time.Time `json:"time"`
}

// keep hands a sandboxed workspace zerg keeps back to the person who ran
// zerg (security.HandBack), records why beside it, and says so.
func (in Input) keep(why string) string {
	note := "the workspace is kept in " + in.Workspace
	if err := security.HandBack(in.Workspace); err != nil {
		return note + fmt.Sprintf(" (it could not be handed back to you: %v)", err)
	}
	if b, err := json.Marshal(Kept{Task: in.Task.ID, Attempt: in.Number, Reason: why, Time: time.Now().UTC()}); err == nil {
		_ = fsx.WritePrivate(in.Workspace+KeptSuffix, b)
	}
	return note + " (yours now: git works there; the worker's .git/config and hooks are set aside as .git/config.worker and .git/hooks.worker)"
}

// diskFailed ends an attempt the disk watch stopped: its task fails, and
// what it wrote is removed, workspace and state, because keeping it would
// keep the disk full for every other attempt of the run.
func (in Input) diskFailed(ctx context.Context, res Result, cause error) Result {
	reason := "workspace_too_large"
	if errors.Is(cause, diskwatch.ErrDiskFull) {
		reason = "disk_full"
	}
	removed := "its workspace was removed"
	var err error
	if in.Sandbox != nil {
		err = os.RemoveAll(in.Workspace)
	} else {
		err = in.Repo.DiscardWorktree(context.WithoutCancel(ctx), in.Workspace)
	}
	if err != nil {
		removed = fmt.Sprintf("its workspace %s could not be removed: %v", in.Workspace, err)
	}
	for _, d := range []string{"home", "config", "tmp"} {
		_ = os.RemoveAll(filepath.Join(in.WorkerDir, d))
	}
	res.Commit = ""
	res.Class, res.Reason = Task, reason
	res.Detail = fmt.Sprintf("stopped: %v (disk.workspace_mb, disk.min_free_mb); nothing was committed and %s, since keeping it would keep the disk full; write less (build outputs belong in the caches)",
		cause, removed)
	return res
}

// maxRecorded bounds the paths one audit record lists.
const maxRecorded = 1000

// pathsRecord is an audit record's paths: the first maxRecorded, and how
// many more there were.
func pathsRecord(paths []string) map[string]any {
	if len(paths) <= maxRecorded {
		return map[string]any{"paths": paths}
	}
	return map[string]any{"paths": paths[:maxRecorded], "paths_omitted": len(paths) - maxRecorded}
}

// maxListed bounds how many paths a report names.
const maxListed = 20

// listOf joins items for a report, naming at most maxListed of them.
func listOf(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:maxListed], ", "), len(items)-maxListed)
}

func workerDetail(o claude.Outcome) string {
	d := oneLine(o.Detail)
	if d == "" {
		d = o.Reason
	}
	return fmt.Sprintf("worker %s: %s", o.Reason, clip(d, 300))
}

// verify runs the task's verification command in the workspace with a
// private HOME and an allowlisted environment, and returns its exit code and
// output (also kept in verify.log). A task without a command passes.
func verify(ctx context.Context, in Input) (int, string) {
	if in.Task.Verification == nil || strings.TrimSpace(in.Task.Verification.Command) == "" {
		return 0, ""
	}
	timeout := in.VerifyTimeout
	if s := in.Task.Verification.TimeoutSeconds; s > 0 {
		timeout = time.Duration(s) * time.Second
	}
	home := filepath.Join(in.WorkerDir, "verify-home")
	_ = os.MkdirAll(home, 0o755)
	if u := in.Worker.RunAs; u != nil {
		_ = u.GiveTree(home)
	}
	code, out := Shell{Command: in.Task.Verification.Command, Dir: in.Workspace, Timeout: timeout,
		Env: []string{"HOME=" + home, "ZERG_VERIFY=1"}, Pass: in.VerifyEnv, RunAs: in.Worker.RunAs}.Run(ctx)
	out = in.redactor().RedactString(out)
	_ = fsx.WritePrivate(filepath.Join(in.Dir, "verify.log"), []byte(out))
	return code, out
}

// verificationFailed is the detail of a failed verification, for the
// report and the retry prompt: the command, its exit code and the tail of
// its output, or that it printed nothing (grep -q, test).
func verificationFailed(command string, exit int, output string) string {
	out := lastLines(output, 15)
	if strings.TrimSpace(out) == "" {
		out = "it printed nothing"
	}
	return fmt.Sprintf("verification `%s` failed (exit %d): %s", command, exit, out)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return clip(strings.Join(lines, " ⏎ "), 1500)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
