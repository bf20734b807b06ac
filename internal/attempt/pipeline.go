package attempt

import (
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
	"github.com/zergrush/zerg/internal/diskwatch"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/textx"
)

// The one attempt pipeline, whatever the driver: a workspace from the
// base, the worker, the verification in the workspace's isolation, the
// result as one commit in a quarantine, the checks on that commit in one
// order (checks), and zerg's commit on the attempt's branch.

func run(ctx context.Context, in Input) (Result, error) {
	if p := in.Prepared; p != nil {
		if res, ok, err := p.use(ctx, in); ok {
			return res, err
		}
		if ctx.Err() != nil {
			return Result{Class: outcome.Infra, Reason: outcome.ReasonCancelled, Detail: "the run was stopped"}, nil
		}
	}
	if err := fsx.PrivateDir(in.Dir); err != nil {
		return Result{}, err
	}
	if err := removeUnusedPrepared(in); err != nil {
		return Result{}, err
	}
	prepareStart := time.Now()
	ws, err := in.Driver.Prepare(ctx, in.driverAttempt())
	prepared := time.Since(prepareStart)
	if err != nil {
		if ctx.Err() != nil {
			return Result{Class: outcome.Infra, Reason: outcome.ReasonCancelled, Detail: "the run was stopped"}, nil
		}
		return Result{}, err
	}
	defer ws.Close()
	prompt, err := writePrompt(in)
	if err != nil {
		return Result{}, err
	}
	var retryAfter atomic.Int64
	launchStart := time.Now()
	v, err := ws.Launch(ctx, in.workerSpec(prompt), in.starter(&retryAfter, nil))
	return launched(ctx, in, ws, v, err, Phases{Prepare: prepared, Launch: time.Since(launchStart)}, &retryAfter)
}

// launched takes the worker's verdict through the rest of the pipeline
// (finish).
func launched(ctx context.Context, in Input, ws driver.Workspace, v driver.Verdict, err error, phases Phases, retryAfter *atomic.Int64) (Result, error) {
	var audit *driver.AuditError
	if errors.As(err, &audit) {
		return in.auditFailed(ws, Result{Worker: v.Worker}, audit.Err), nil
	}
	if err != nil {
		return Result{}, err
	}
	res := Result{Worker: v.Worker, Class: v.Class, Reason: v.Reason, Detail: v.Detail, Reset: v.Reset,
		MemoryPeak: v.MemoryPeak, RetryAfter: time.Duration(retryAfter.Load()),
		Phases: phases, RefusedWrites: in.refusedWrites(v.Refused)}
	writeRefused(in.Dir, res.RefusedWrites)
	if ctx.Err() != nil {
		// Stopped by the coordinator: keep the work, let the caller decide.
		res.Class, res.Reason, res.Detail = outcome.Infra, outcome.ReasonCancelled, "the run was stopped"
	}
	return finish(ctx, in, ws, res)
}

// driverAttempt is what the driver needs to know of the attempt.
func (in Input) driverAttempt() driver.Attempt {
	// The models and the budget the worker is launched with.
	sp := in.workerSpec("")
	return driver.Attempt{
		Repo: in.Repo, Task: in.Task.ID, Number: in.Number, Base: in.Base, Workspace: in.Workspace, Branch: in.Branch,
		WorkerDir: in.WorkerDir, Models: nonEmpty(sp.Model, sp.FallbackModel), TaskUSD: sp.MaxBudgetUSD,
		Audit: func(kind string, fields map[string]any) error { return in.record(kind, fields) }, Screen: in.screenToolInput,
	}
}

// finish takes a worker's judged result through the verification, the
// snapshot, the checks and zerg's commit: after a launch, or for an
// attempt whose coordinator died (Recover).
func finish(ctx context.Context, in Input, ws driver.Workspace, res Result) (Result, error) {
	if err := diskwatch.Tripped(ctx); err != nil {
		return in.diskFailed(ctx, ws, res, err), nil
	}
	if res.Class == outcome.Success && in.FailRefusedWrites && len(res.RefusedWrites) > 0 {
		// The worker could not do what it meant to: a retry is told what
		// was refused instead of committing a result its summary
		// misdescribes.
		res = failTask(res, outcome.ReasonWriteRefused, in.refusedDetail(res.RefusedWrites))
	}
	if res.Class == outcome.Success {
		if in.OnVerify != nil {
			in.OnVerify()
		}
		verifyStart := time.Now()
		res.VerifyExit, res.VerifyOutput = in.verify(ctx, ws)
		res.Phases.Verify = time.Since(verifyStart)
		if res.VerifyExit != 0 {
			res.Class, res.Reason = outcome.Task, outcome.ReasonVerificationFailed
			res.Detail = verificationFailed(in.Task.Verification.Command, res.VerifyExit, res.VerifyOutput)
			if ctx.Err() != nil {
				res.Class, res.Reason, res.Detail = outcome.Infra, outcome.ReasonCancelled, "the run was stopped"
			}
		}
	}
	if err := diskwatch.Tripped(ctx); err != nil {
		return in.diskFailed(ctx, ws, res, err), nil
	}
	commitStart := time.Now()
	out, err := commitResult(ctx, in, ws, res)
	out.Phases.Commit = time.Since(commitStart)
	return out, err
}

// commitResult takes the workspace's content as one commit, applies the
// checks and commits it (or a failed attempt's work) on the attempt's
// branch.
func commitResult(ctx context.Context, in Input, ws driver.Workspace, res Result) (Result, error) {
	// What the worker produced, as one commit in a quarantine: anything
	// that goes wrong from here is the worker's doing (a broken .git, a
	// forged bundle, a secret): its task fails, the run goes on.
	ictx := context.WithoutCancel(ctx)
	q, err := in.Repo.NewQuarantine(ictx, Record(in.Dir).Quarantine())
	if err != nil {
		return res, fmt.Errorf("quarantine of %s: %w", in.Task.ID, err)
	}
	// What was refused must not linger in zerg's records either.
	defer os.RemoveAll(q.Dir)
	commit, problem := ws.Snapshot(ictx, q, in.Base)
	if problem == "" {
		if parents, err := q.Parents(ictx, commit); err != nil || len(parents) != 1 || parents[0] != in.Base {
			problem = "the result is not one commit on the base (the workspace's history was changed)"
		}
	}
	if problem != "" {
		return failTask(res, outcome.ReasonWorkspace, problem+"; "+ws.Keep("its content could not be committed or read")), nil
	}
	entries, err := q.ChangedEntries(ictx, in.Base, commit)
	if err != nil {
		return failTask(res, outcome.ReasonWorkspace, fmt.Sprintf("the result cannot be read (%v); %s", err, ws.Keep("the result could not be read"))), nil
	}
	for _, e := range entries {
		res.Changes = append(res.Changes, gitx.Change{Status: e.Status, Path: in.safePath(e.Path)})
	}
	for _, c := range checks {
		v, err := c.check(ictx, in, q, commit, &res)
		if err != nil {
			return res, fmt.Errorf("check the result of %s (%s): %w", in.Task.ID, c.name, err)
		}
		if v == nil {
			continue
		}
		if v.auditErr != nil {
			return in.auditFailed(ws, res, v.auditErr), nil
		}
		if v.refuse {
			// Nothing of it enters the repository; the workspace stays
			// for a person to look at.
			return failTask(res, v.reason, v.detail+"; "+ws.Keep(v.keep)), nil
		}
		if res.Class == outcome.Success {
			res.Class, res.Reason, res.Detail = outcome.Task, v.reason, v.detail
		}
	}

	// Commit: the task's result, or a failed attempt's work preserved on
	// its own branch so the workspace can go without losing anything.
	msg := fmt.Sprintf("%s: %s", in.Task.ID, textx.OneLine(in.Task.Title))
	trailers := map[string]string{"Task-Id": in.Task.ID, "Zerg-Feature": in.Feature, "Zerg-Attempt": fmt.Sprint(in.Number)}
	if res.Class != outcome.Success {
		msg = fmt.Sprintf("%s: attempt %d did not pass (%s)", in.Task.ID, in.Number, res.Reason)
		trailers["Zerg-Status"] = "failed"
	}
	imported, err := q.Import(ictx, commit, in.Base, msg, trailers, in.Branch)
	if err != nil {
		return res, fmt.Errorf("import the result of %s: %w", in.Task.ID, err)
	}
	res.Commit = imported
	if diff, err := in.Repo.DiffCommits(ictx, in.Base, imported); err == nil {
		_ = fsx.WritePrivate(Record(in.Dir).Diff(), in.redactor().Redact([]byte(diff)))
	}
	if err := ws.Remove(ictx); err != nil {
		return res, err
	}
	return res, nil
}

// A check is one of zerg's checks on a result's commit.
type check struct {
	name  string
	check func(ctx context.Context, in Input, q *gitx.Quarantine, commit string, res *Result) (*verdict, error)
}

// verdict is a check's finding: the reason and detail the task fails
// with; refuse: nothing of the result may enter the repository (it is
// kept for a person instead); auditErr: the finding could not be
// recorded, and the attempt must not go on unaudited.
type verdict struct {
	reason, detail, keep string
	refuse               bool
	auditErr             error
}

// checks are zerg's checks on every result, in this order, whatever the
// driver: first what must never enter the repository (secrets in any
// blob, the API key in any form, protected paths, files too large, links
// out of the tree), then what fails the task but is kept on the attempt's
// branch (a change outside what the task owns, a result that does not do
// what the task says).
var checks = []check{
	{"commit", checkCommit},
	{"ownership", checkOwnership},
	{"completeness", checkCompleteness},
}

func checkCommit(ctx context.Context, in Input, q *gitx.Quarantine, commit string, res *Result) (*verdict, error) {
	problems, err := security.CheckCommit(ctx, q.Runner, in.Base, commit, security.CommitCheckOptions{
		Scanner: in.Scanner, Secrets: in.Worker.API.Secrets(), Protected: in.protection().Patterns(),
		MaxFileBytes: in.MaxFileBytes, Allowlist: baseAllowlist(ctx, in.Repo.Runner, in.Base),
		Opened: func(p string) bool { return in.protection().OpensFor(p, in.Task.NamesPath) },
	})
	if err != nil {
		return nil, err
	}
	if len(problems) == 0 {
		if err := in.recordOpened(res.Changes); err != nil {
			return &verdict{auditErr: err}, nil
		}
		return nil, nil
	}
	what, err := in.recordProblems(problems)
	if err != nil {
		return &verdict{auditErr: err}, nil
	}
	return &verdict{reason: problemReason(problems), refuse: true, keep: "zerg refused to commit it: " + textx.Clip(listOf(what), 200),
		detail: fmt.Sprintf("refused at commit: %s; never commit credentials, links out of the repository or zerg's and git's own files. The work was not committed", listOf(what))}, nil
}

// recordOpened writes each change to a protected path that
// security.allow_protected let through to the audit log: zerg review and
// zerg merge put them before a person, and the log says which attempt
// made them.
func (in Input) recordOpened(changes []gitx.Change) error {
	prot := in.protection()
	if prot.Opening() == nil {
		return nil
	}
	for _, c := range changes {
		if pat, ok := prot.Match(c.Path); ok {
			if err := in.record(security.AuditProtectedOpened, map[string]any{"path": c.Path, "status": c.Status, "protected_by": pat}); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkOwnership(_ context.Context, in Input, _ *gitx.Quarantine, _ string, res *Result) (*verdict, error) {
	bad := Violations(in.Task, res.Changes)
	if len(bad) == 0 || res.Class != outcome.Success {
		return nil, nil
	}
	if err := in.record(security.AuditOwnershipViolation, pathsRecord(bad)); err != nil {
		return &verdict{auditErr: err}, nil
	}
	return &verdict{reason: outcome.ReasonOwnership, detail: fmt.Sprintf("changed %s, which task %s does not own (it owns: %s); change only owned files",
		listOf(bad), in.Task.ID, ownedList(in.Task))}, nil
}

// checkCompleteness fails an attempt whose changes do not deliver its
// task (Incomplete): nothing, a created file missing, a modified one
// unchanged.
func checkCompleteness(ctx context.Context, in Input, _ *gitx.Quarantine, _ string, res *Result) (*verdict, error) {
	if res.Reason == outcome.ReasonVerificationFailed && len(res.Changes) == 0 && !in.Task.NoChanges {
		// A worker that changed nothing failed for that, not for what the
		// verification printed of the base (often nothing: grep -q).
		reason, detail := Incomplete(in.Task, nil, nil)
		res.Reason, res.Detail = reason, detail+fmt.Sprintf("; its verification failed on the unchanged base (exit %d)", res.VerifyExit)
		return nil, nil
	}
	if res.Class != outcome.Success {
		return nil, nil
	}
	inBase := func(p string) bool {
		_, err := in.Repo.FileAt(ctx, in.Base, p)
		return err == nil
	}
	if reason, detail := Incomplete(in.Task, res.Changes, inBase); reason != "" {
		return &verdict{reason: reason, detail: detail}, nil
	}
	return nil, nil
}

// workerSpec is the worker's launch spec for this attempt (LaunchSpec),
// before the driver fits it to its isolation.
func (in Input) workerSpec(prompt string) claude.Spec {
	return LaunchSpec(in.Worker, Launch{Task: in.Task, Tier: in.Tier, Workspace: in.Workspace, Dir: in.WorkerDir,
		Prompt: prompt, Protection: in.protection()})
}

// starter runs the worker with sp, recording its stream (redacted,
// bounded), reporting its start and progress, and keeping the last retry
// delay the CLI reported for a rate limit in retryAfter.
// hold, when set, is a prepared worker's wait for its attempt (Prepared):
// it returns the prompt to send once the attempt starts, or the outcome of
// a worker that was never used.
func (in Input) starter(retryAfter *atomic.Int64, hold holdFunc) driver.Starter {
	return func(ctx context.Context, sp claude.Spec) (claude.Outcome, error) {
		return in.start(ctx, sp, retryAfter, hold)
	}
}

// holdFunc is a prepared worker's wait for its attempt.
type holdFunc func(context.Context, *claude.Run) (prompt string, unused *claude.Outcome)

func (in Input) start(ctx context.Context, sp claude.Spec, retryAfter *atomic.Int64, hold holdFunc) (claude.Outcome, error) {
	f, err := fsx.CreatePrivate(Record(in.Dir).Stream())
	if err != nil {
		return claude.Outcome{}, err
	}
	defer f.Close()
	// The key the worker holds never lands in zerg's records, in any form;
	// and what the worker's CLI prints (code in a sandbox can write to its
	// stdout) takes at most maxStreamRecord of zerg's disk.
	redacted := in.redactor().Writer(f)
	defer redacted.Close() // flushes the held-back tail, before f.Close
	stream := capture.Limit(redacted, maxStreamRecord, "{\"type\":\"zerg\",\"note\":\"the rest of the stream was not recorded: it passed the record's limit\"}\n")
	var mu sync.Mutex
	prev := sp.OnEvent
	var current atomic.Pointer[claude.Run] // events may arrive before Start returns
	sp.OnEvent = func(ev claude.Event) {
		if ev.APIRetry != nil && ev.APIRetry.ErrorStatus == 429 {
			retryAfter.Store(int64(ev.APIRetry.RetryDelayMS * float64(time.Millisecond)))
		}
		// The record is best effort: the outcome is judged from the CLI's
		// result and the commit check, not from it, and a disk that fills
		// is the disk watch's to stop.
		mu.Lock()
		_, _ = stream.Write(ev.Raw)
		_, _ = stream.Write([]byte{'\n'})
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
			return claude.Outcome{Class: outcome.Fatal, Reason: outcome.ReasonStartFailed, Detail: err.Error()}, nil
		}
		return claude.Outcome{Class: outcome.Infra, Reason: outcome.ReasonStartFailed, Detail: err.Error()}, nil
	}
	current.Store(run)
	prompt := ""
	if hold != nil {
		p, unused := hold(ctx, run)
		if unused != nil {
			return *unused, nil
		}
		prompt = p
	}
	if in.OnStart != nil {
		in.OnStart(run.PIDs(), run.Marker())
	}
	if hold != nil {
		if err := run.Send(prompt); err != nil {
			// The CLI ended before it took the prompt: its outcome says how.
			run.Stop()
		}
	}
	return run.Wait(), nil
}

// maxStreamRecord bounds an attempt's stream.jsonl.
const maxStreamRecord = 256 << 20

// redactor removes the credentials zerg knows from what it writes down:
// the worker's key and tokens (the real ones: a driver with a gateway
// gives the worker a placeholder).
func (in Input) redactor() *security.Redactor {
	return security.NewRedactor(in.Worker.API.Secrets()...)
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

// auditFailed ends an attempt whose security decision could not be
// written down: nothing of it is committed (the workspace stays), and its
// task fails, not the run (a worker may be what filled the disk).
func (in Input) auditFailed(ws driver.Workspace, res Result, err error) Result {
	res.Commit = ""
	res.Class, res.Reason = outcome.Task, outcome.ReasonAuditFailed
	res.Detail = fmt.Sprintf("zerg could not write a security decision about this attempt to the audit log (%s); nothing of it was committed, %s",
		textx.Clip(err.Error(), 300), ws.Keep("a security decision about it could not be written to the audit log"))
	return res
}

// diskFailed ends an attempt the disk watch stopped: its task fails, and
// what it wrote is removed, workspace and state, because keeping it would
// keep the disk full for every other attempt of the run.
func (in Input) diskFailed(ctx context.Context, ws driver.Workspace, res Result, cause error) Result {
	reason := outcome.ReasonWorkspaceTooLarge
	if errors.Is(cause, diskwatch.ErrDiskFull) {
		reason = outcome.ReasonDiskFull
	}
	removed := "its workspace was removed"
	if err := ws.Discard(context.WithoutCancel(ctx)); err != nil {
		removed = fmt.Sprintf("its workspace %s could not be removed: %v", in.Workspace, err)
	}
	for _, d := range []string{"home", "config", "tmp", "cache"} {
		_ = os.RemoveAll(filepath.Join(in.WorkerDir, d))
	}
	res.Commit = ""
	res.Class, res.Reason = outcome.Task, reason
	res.Detail = fmt.Sprintf("stopped: %v (disk.workspace_mb, disk.min_free_mb); nothing was committed and %s, since keeping it would keep the disk full; write less (build outputs belong in the caches)",
		cause, removed)
	return res
}

// verify runs the task's verification command in the workspace's
// isolation with a fresh HOME and an allowlisted environment, and returns
// its exit code and output (also kept in verify.log). A task without a
// command passes.
func (in Input) verify(ctx context.Context, ws driver.Workspace) (int, string) {
	if in.Task.Verification == nil || strings.TrimSpace(in.Task.Verification.Command) == "" {
		return 0, ""
	}
	code, out := ws.Exec(ctx, driver.Command{Command: in.Task.Verification.Command, Timeout: in.Task.Verification.Timeout(in.VerifyTimeout),
		Env: []string{"ZERG_VERIFY=1"}, Pass: in.VerifyEnv, Home: "verify-home"})
	out = in.redactor().RedactString(out)
	_ = fsx.WritePrivate(Record(in.Dir).Verify(), []byte(out))
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

// safePath is a path of the worker's result as zerg may write it down: a
// path that itself holds a secret (a file named after a key) is replaced,
// so the secret reaches neither the run's log nor the audit log.
func (in Input) safePath(p string) string {
	secret := in.Scanner != nil && len(in.Scanner.ScanFile("path", []byte(p))) > 0
	for _, k := range in.Worker.API.Secrets() {
		secret = secret || security.ContainsKey([]byte(p), security.KeyForms(k))
	}
	if secret {
		return "<a path that holds a secret>"
	}
	return p
}

// screenToolInput is a tool call's input as the audit log may keep it:
// never with a secret the scanner or the key forms find in it.
func (in Input) screenToolInput(input json.RawMessage) json.RawMessage {
	secret := in.Scanner != nil && len(in.Scanner.ScanFile("tool input", input)) > 0
	for _, k := range in.Worker.API.Secrets() {
		secret = secret || security.ContainsKey(input, security.KeyForms(k))
	}
	if secret {
		return json.RawMessage(`"[not recorded: it contains a secret]"`)
	}
	return input
}

// failTask fails the task with reason and detail, unless the attempt had
// already ended otherwise (stopped, an infra or fatal error): what the
// workspace holds must not turn a stop or a bad key into a task failure.
func failTask(res Result, reason, detail string) Result {
	if res.Class != outcome.Success && res.Class != outcome.Task {
		res.Detail = strings.TrimSpace(res.Detail + "; " + detail)
		return res
	}
	res.Class, res.Reason, res.Detail = outcome.Task, reason, detail
	return res
}

func problemReason(ps []security.CommitProblem) string {
	for _, p := range ps {
		if p.Kind == "secret" || p.Kind == "key" {
			return outcome.ReasonSecretFound
		}
	}
	return outcome.ReasonForbiddenChange
}

// recordProblems records each reason to refuse a worker's changes in the
// audit log and returns them as the report words them, each path shown
// only when it holds no secret.
func (in Input) recordProblems(ps []security.CommitProblem) ([]string, error) {
	var what []string
	for _, p := range ps {
		path := in.safePath(p.Path)
		what = append(what, fmt.Sprintf("%s (%s: %s)", path, p.Kind, p.Detail))
		if err := in.record(commitProblemKind(p.Kind), map[string]any{"path": path, "kind": p.Kind, "detail": p.Detail}); err != nil {
			return nil, err
		}
	}
	return what, nil
}

func commitProblemKind(kind string) string {
	if kind == "secret" || kind == "key" {
		return security.AuditSecretFound
	}
	return security.AuditCommitRefused
}

// baseAllowlist is the secret-scan allowlist of the base commit, never the
// worker's own.
func baseAllowlist(ctx context.Context, r *gitx.Runner, base string) *security.Allowlist {
	data, err := r.FileAt(ctx, base, security.SecretsAllowFile)
	if err != nil {
		return nil
	}
	a, err := security.ParseAllowlist(security.SecretsAllowFile, strings.NewReader(string(data)))
	if err != nil {
		return nil
	}
	return a
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
func listOf(items []string) string { return listOfSep(items, ", ") }

func listOfSep(items []string, sep string) string {
	if len(items) <= maxListed {
		return strings.Join(items, sep)
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:maxListed], sep), len(items)-maxListed)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return textx.Clip(strings.Join(lines, " ⏎ "), 1500)
}

func nonEmpty(s ...string) []string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}
