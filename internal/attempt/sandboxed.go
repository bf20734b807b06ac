package attempt

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/cgroup"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/diskwatch"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/sandbox"
	"github.com/zergrush/zerg/internal/security"
)

// Sandboxed is how a sandboxed attempt is isolated (Input.Sandbox). The
// worker, its verification and its commit run inside a bubblewrap sandbox
// as an unprivileged user of their own; the worker's workspace is a private
// clone of the base; the API key stays with a host-side gateway; what the
// worker produced comes back as a bundle that zerg checks in a quarantine.
type Sandboxed struct {
	User     *security.WorkerUser // the uid this attempt's sandbox runs as (one per concurrent worker)
	Hide     []string             // host directories invisible inside (the repository, the workspaces, zerg's records)
	ReadOnly []string             // host paths visible read-only (the CLI's install, zerg's binary)
	// Shared are the user's toolchain installs and package caches, visible
	// read-only; Private are writable directories of this attempt (or
	// command) alone, its build cache: created empty for it and removed
	// after it (PreparePrivate), so nothing a worker writes there is ever
	// read by another attempt, a gate or a check; Env is what the
	// toolchains need set (PATH first), for the worker, its verification
	// and the gates alike (internal/toolchain).
	Shared  []string
	Private []string
	Env     []string
	Limits  sandbox.Limits
	// Upstream, APIKey and AuthToken are the real Messages API and its
	// credentials: only the gateway holds them.
	Upstream     string
	APIKey       string
	AuthToken    string
	Allow        []string // egress allowlist (egress.allow)
	MaxFileBytes int64
	// Gateway is the policy of every model-API request (the caps, the
	// betas, the server tools, the run's budget); each attempt adds its
	// models and its own budget.
	Gateway gateway.Policy
	// Cgroups makes a control group per attempt (or command), where the
	// machine has them: memory and processes as totals (Limits). nil: the
	// per-process limits only.
	Cgroups *cgroup.Manager
	// Group is this attempt's (or command's) group, from NewGroup.
	Group *cgroup.Group
}

// NewGroup gives the sandboxed commands that follow a control group of
// their own, named after what runs (a task and attempt, a gate), with the
// sandbox's memory and process limits as totals; none where the machine
// has no cgroup. The caller closes it (which kills what is left in it).
func (sb *Sandboxed) NewGroup(name string) error {
	if sb.Cgroups == nil {
		return nil
	}
	var r [4]byte
	_, _ = rand.Read(r[:])
	safe := strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' {
			return c
		}
		return '-'
	}, clip(name, 80))
	g, err := sb.Cgroups.New(fmt.Sprintf("%s-%x", safe, r), cgroup.Limits{MemoryBytes: sb.Limits.MemoryBytes, Processes: sb.Limits.Processes})
	if err != nil {
		return fmt.Errorf("create the cgroup of %s: %w", name, err)
	}
	sb.Group = g
	return nil
}

// resolved is p with every symlink resolved, or p when that fails (the
// start then fails and says so).
func resolved(p string) string {
	if p == "" {
		return p
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// placeholderKey is what the sandbox holds instead of the API key.
const placeholderKey = "sk-ant-zerg-sandbox-placeholder"

// sandboxProxy is the forwarder's address inside the sandbox.
const sandboxProxy = "http://127.0.0.1:3128"

func (sb *Sandboxed) spec(workdir, home string, writable []string, proxy string) sandbox.Spec {
	return sandbox.Spec{
		Workdir: workdir, Home: home, ReadOnly: sb.ReadOnly, Writable: append(append([]string{}, writable...), sb.Private...),
		Shared: sb.Shared, Hide: sb.Hide, ProxySocket: proxy, UID: sb.User.UID, GID: sb.User.GID, Limits: sb.Limits,
		Cgroup: sb.Group,
	}
}

// PreparePrivate creates the Private directories empty, owned by User,
// and returns what removes them.
func (sb *Sandboxed) PreparePrivate() (func(), error) {
	remove := func() {
		for _, d := range sb.Private {
			_ = os.RemoveAll(d)
		}
	}
	for _, d := range sb.Private {
		if err := os.RemoveAll(d); err != nil {
			return remove, err
		}
		// The directories above it stay passable (an attempt's worker
		// state dir is 0755, as PrepareAttemptDir makes it).
		if err := os.MkdirAll(filepath.Dir(d), 0o755); err != nil {
			return remove, err
		}
		if err := os.Mkdir(d, 0o700); err != nil {
			return remove, err
		}
		if err := sb.User.GiveTree(d); err != nil {
			return remove, err
		}
	}
	return remove, nil
}

// CommandSpec is the sandbox of one repository command of zerg's own (a
// gate) in workdir with a fresh home: no network, the toolchains' caches.
func (sb *Sandboxed) CommandSpec(workdir, home string) sandbox.Spec {
	return sb.spec(workdir, home, nil, "")
}

// envMap is Env as a map, for the worker's launch spec.
func (sb *Sandboxed) envMap() map[string]string {
	m := make(map[string]string, len(sb.Env))
	for _, kv := range sb.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// runSandboxed is one attempt in sandbox mode.
func runSandboxed(ctx context.Context, in Input) (Result, error) {
	sb := in.Sandbox
	u := sb.User
	if err := fsx.PrivateDir(in.Dir); err != nil {
		return Result{}, err
	}
	if err := in.Repo.CloneCommit(ctx, in.Workspace, in.Base); err != nil {
		return Result{}, fmt.Errorf("create workspace for %s: %w", in.Task.ID, err)
	}
	// The whole clone is the worker's, .git included: zerg never runs git in
	// it again; the worker's git runs inside the sandbox.
	if err := u.GiveTree(in.Workspace); err != nil {
		return Result{}, fmt.Errorf("hand the workspace of %s to %s: %w", in.Task.ID, u.Name, err)
	}
	prompt, err := writePrompt(in)
	if err != nil {
		return Result{}, err
	}
	removePrivate, err := sb.PreparePrivate()
	defer removePrivate()
	if err != nil {
		return Result{}, fmt.Errorf("create the build cache of %s: %w", in.Task.ID, err)
	}
	// One control group for the worker, its verification and its commit.
	if err := sb.NewGroup(fmt.Sprintf("%s-%d", in.Task.ID, in.Number)); err != nil {
		return Result{}, err
	}
	defer sb.Group.Close()

	// The gateway: the sandbox's only way out, on a socket only this
	// slot's user may use, in a directory only zerg and that user can pass
	// (short: a socket path has at most 107 bytes).
	sockDir, err := gatewayDir(u)
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(sockDir)
	sock := filepath.Join(sockDir, "s")
	gw, err := gateway.Start(gateway.Config{
		Upstream: sb.Upstream, APIKey: sb.APIKey, AuthToken: sb.AuthToken, Placeholder: placeholderKey,
		Allow: sb.Allow, Audit: func(kind string, fields map[string]any) error { return in.record(kind, fields) },
		Screen: in.screenToolInput, Policy: in.gatewayPolicy(), Price: priceUsage,
		Peer: &gateway.Peer{UID: u.UID, GID: u.GID},
	}, sock)
	if err != nil {
		return Result{}, fmt.Errorf("start the gateway of %s: %w", in.Task.ID, err)
	}
	gwClosed := false
	closeGW := func() error {
		if gwClosed {
			return nil
		}
		gwClosed = true
		return gw.Close()
	}
	defer closeGW() // on the early returns; the normal path checks its error

	out, retryAfter, err := launch(ctx, in, prompt, func(sp *claude.Spec) {
		sp.RunAs = u
		// Inside, only the directories zerg binds exist (the run binds the
		// located and the resolved one of each binary), so a link on the way
		// (node_modules linked from another checkout) would not resolve:
		// start the resolved files.
		sp.Binary, sp.Hook.ZergBinary = resolved(sp.Binary), resolved(sp.Hook.ZergBinary)
		sp.API = claude.APISettings{BaseURL: sandboxProxy, APIKey: placeholderKey}
		sp.SetEnv = withEnv(withEnv(sp.SetEnv, sb.envMap()), map[string]string{"HTTP_PROXY": sandboxProxy, "HTTPS_PROXY": sandboxProxy,
			"http_proxy": sandboxProxy, "https_proxy": sandboxProxy, "NO_PROXY": "", "no_proxy": ""})
		attemptDir := in.WorkerDir
		spec := sb.spec(in.Workspace, filepath.Join(attemptDir, "home"),
			[]string{filepath.Join(attemptDir, "config"), filepath.Join(attemptDir, "tmp")}, sock)
		// The attempt dir holds the settings and the hook's policy: visible,
		// not writable.
		spec.ReadOnly = append(append([]string{}, spec.ReadOnly...), attemptDir)
		sp.Sandbox = &spec
	})
	if err != nil {
		return Result{}, err
	}
	// Closing writes the gateway's record to the audit log: an attempt whose
	// record cannot be written does not go on unaudited.
	if err := closeGW(); err != nil {
		return in.auditFailed(Result{Worker: out}, err), nil
	}
	stats := gw.Stats()
	res := Result{Worker: out, RetryAfter: retryAfter}
	// The denials were audited by the gateway as the CLI reported them to
	// the model (the result event's list is the worker's to forge).
	classifySandboxed(&res, out, stats, ctx.Err() != nil)
	outOfMemory(&res, sb)
	return finishSandboxed(ctx, in, res)
}

// finishSandboxed takes a sandboxed worker's classified result through
// the verification, the commit step in the sandbox, the checks of the
// quarantine and zerg's commit: after a launch, or for an attempt whose
// coordinator died after its worker finished (Recover). in.Sandbox must
// be prepared (its user, private directories and group).
func finishSandboxed(ctx context.Context, in Input, res Result) (Result, error) {
	sb := in.Sandbox
	if err := diskwatch.Tripped(ctx); err != nil {
		return in.diskFailed(ctx, res, err), nil
	}

	if res.Class == Success {
		if in.OnVerify != nil {
			in.OnVerify()
		}
		res.VerifyExit, res.VerifyOutput = verifySandboxed(ctx, in)
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
	// What the worker produced comes back as one commit in a bundle made
	// inside the sandbox. Anything that goes wrong from here is the
	// worker's doing (a broken .git, a forged bundle): its task fails, the
	// run goes on.
	ictx := context.WithoutCancel(ctx)
	commit, q, problem := collect(ictx, in)
	if q != nil {
		// What was refused must not linger in zerg's records either.
		defer os.RemoveAll(q.Dir)
	}
	if problem != "" {
		return failTask(res, "workspace", problem+"; "+in.keep("its git could not commit or bundle the result")), nil
	}
	entries, err := q.ChangedEntries(ictx, in.Base, commit)
	if err != nil {
		return failTask(res, "workspace", fmt.Sprintf("the result cannot be read (%v); %s", err, in.keep("the result could not be read"))), nil
	}
	for _, e := range entries {
		res.Changes = append(res.Changes, gitx.Change{Status: e.Status, Path: in.safePath(e.Path)})
	}
	problems, err := security.CheckCommit(ictx, q.Runner, in.Base, commit, security.CommitCheckOptions{
		Scanner: in.Scanner, Secrets: nonEmpty(sb.APIKey, sb.AuthToken), Protected: in.Protected,
		MaxFileBytes: sb.MaxFileBytes, Allowlist: baseAllowlist(ictx, in.Repo.Runner, in.Base),
	})
	if err != nil {
		return res, fmt.Errorf("check the result of %s: %w", in.Task.ID, err)
	}
	if len(problems) > 0 {
		what, err := in.recordProblems(problems)
		if err != nil {
			return in.auditFailed(res, err), nil
		}
		// Nothing of it enters the repository; the workspace stays for a
		// person to look at.
		return failTask(res, problemReason(problems), fmt.Sprintf("refused at commit: %s; never commit credentials, links out of the repository or zerg's and git's own files. The work was not committed; %s",
			listOf(what), in.keep("zerg refused to commit it: "+clip(listOf(what), 200)))), nil
	}
	if res.Class == Success {
		if bad := Violations(in.Task, res.Changes); len(bad) > 0 {
			if err := in.record(security.AuditOwnershipViolation, pathsRecord(bad)); err != nil {
				return in.auditFailed(res, err), nil
			}
			res.Class, res.Reason = Task, "ownership"
			res.Detail = fmt.Sprintf("changed %s, which task %s does not own (it owns: %s); change only owned files",
				listOf(bad), in.Task.ID, ownedList(in.Task))
		}
	}
	if res.Class == Success {
		in.checkComplete(ctx, &res)
	}
	msg := fmt.Sprintf("%s: %s", in.Task.ID, oneLine(in.Task.Title))
	trailers := map[string]string{"Task-Id": in.Task.ID, "Zerg-Feature": in.Feature, "Zerg-Attempt": fmt.Sprint(in.Number)}
	if res.Class != Success {
		msg = fmt.Sprintf("%s: attempt %d did not pass (%s)", in.Task.ID, in.Number, res.Reason)
		trailers["Zerg-Status"] = "failed"
	}
	imported, err := q.Import(ictx, commit, in.Base, msg, trailers)
	if err != nil {
		return res, fmt.Errorf("import the result of %s: %w", in.Task.ID, err)
	}
	if err := in.Repo.SetBranch(ictx, in.Branch, imported, ""); err != nil {
		return res, err
	}
	res.Commit = imported
	if diff, err := in.Repo.DiffCommits(ictx, in.Base, imported); err == nil {
		_ = fsx.WritePrivate(filepath.Join(in.Dir, "diff.patch"), in.redactor().Redact([]byte(diff)))
	}
	// Everything the worker made is on the attempt's branch now.
	if err := os.RemoveAll(in.Workspace); err != nil {
		return res, fmt.Errorf("remove workspace of %s: %w", in.Task.ID, err)
	}
	return res, nil
}

// outOfMemory makes an attempt whose processes the kernel killed for
// passing the group's memory limit a task failure: the worker's code took
// the memory, and retrying it as an infrastructure failure would let it
// do so without end. It also records the group's peak.
func outOfMemory(res *Result, sb *Sandboxed) {
	res.MemoryPeak = sb.Group.MemoryPeak()
	if sb.Group.OOMKills() == 0 || res.Class == Success || res.Class == Task || res.Reason == "cancelled" {
		return
	}
	res.Class, res.Reason = Task, "out_of_memory"
	res.Detail = fmt.Sprintf("the kernel killed a process of the attempt: its processes together passed sandbox.memory_mb (%d MiB); use less memory (build or test less at once)",
		sb.Limits.MemoryBytes>>20)
}

// gatewayDir makes the directory of an attempt's gateway socket: zerg's,
// mode 0710 with u's group (u may pass, not list), or 0700 when u is
// zerg's own user.
func gatewayDir(u *security.WorkerUser) (string, error) {
	dir, err := os.MkdirTemp("", "zerg-gw-")
	if err != nil {
		return "", err
	}
	mode := os.FileMode(0o700)
	if u.UID != os.Geteuid() {
		mode = 0o710
		if err := os.Chown(dir, -1, u.GID); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	if err := os.Chmod(dir, mode); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// classifySandboxed decides the attempt's class. The CLI's own word comes
// from its stream, which code in the sandbox can forge; what the API said
// comes from the gateway, which it cannot. Every answer the gateway
// recorded is to a request its policy accepted (the task's model, zerg's
// betas, no server tools), so a fatal or account answer among them is
// everybody's problem, whichever answer came last; what a worker can
// provoke on its own (a malformed request, a refused one, its own budget)
// is its task's failure. Usage and cost are the gateway's.
func classifySandboxed(res *Result, out claude.Outcome, st gateway.Stats, stopped bool) {
	res.Worker.Usage = claude.Usage{InputTokens: st.Usage.InputTokens, OutputTokens: st.Usage.OutputTokens,
		CacheReadInputTokens: st.Usage.CacheReadTokens, CacheCreationInputTokens: st.Usage.CacheWriteTokens}
	res.Worker.CostUSD = st.CostUSD
	v := judgeAPI(st)
	refused := 0
	for _, r := range st.Refused {
		if r.Kind == gateway.RefusedPolicy {
			refused++
		}
	}
	forged := func(what string) {
		res.Class, res.Reason = Task, "forged_result"
		res.Detail = fmt.Sprintf("the worker's result claimed %s the API never gave: %s", what, clip(oneLine(out.Detail), 200))
	}
	switch {
	case stopped:
		res.Class, res.Reason, res.Detail = Infra, "cancelled", "the run was stopped"
	case out.Reason == claude.ReasonStartFailed:
		// zerg's own observation: the sandbox or the CLI did not start.
		res.Class, res.Reason, res.Detail = Infra, out.Reason, workerDetail(out)
		if out.Class == claude.ClassFatal {
			res.Class = Fatal
		}
	case v.account.reason != "":
		res.Class, res.Reason, res.Detail = Account, v.account.reason, v.account.detail()
		res.Reset = st.Reset
		if res.Reset == "" {
			res.Reset = claude.ResetFromText(v.account.err.Message)
		}
	case v.fatal.reason != "":
		res.Class, res.Reason, res.Detail = Fatal, v.fatal.reason, v.fatal.detail()
	case st.BudgetStop == gateway.BudgetTask:
		res.Class, res.Reason = Task, claude.ReasonMaxBudget
		res.Detail = fmt.Sprintf("the gateway refused further requests: the task's budget is spent ($%.4f at the API's usage); do the task in fewer turns", st.CostUSD)
	case st.BudgetStop == gateway.BudgetRun:
		res.Class, res.Reason = Infra, claude.ReasonRunBudget
		res.Detail = "the gateway refused further requests: budget.run_usd is spent"
	case refused > 0:
		r := st.Refused[0]
		res.Class, res.Reason = Task, claude.ReasonGatewayRefused
		res.Detail = fmt.Sprintf("the gateway refused %d request(s) from the sandbox, first %s %s: %s; the worker may only use the model API as its CLI does",
			refused+st.RefusedOmitted, r.Method, r.Path, clip(r.Reason, 200))
	case v.task.reason != "":
		// A request the API refused on its own (malformed, too large): the
		// worker's request, the worker's task.
		res.Class, res.Reason, res.Detail = Task, v.task.reason, v.task.detail()
	case st.UpstreamFailures > 0 && out.Class != claude.ClassSuccess && out.Class != claude.ClassTask:
		// The gateway could not reach the API: the run's infrastructure.
		res.Class, res.Reason = Infra, claude.ReasonAPIUnreachable
		res.Detail = "the gateway could not reach the model API: " + clip(st.LastError, 300)
	case out.Class == claude.ClassFatal || out.Class == claude.ClassAccount:
		forged("a fatal or account error")
	case out.Class == claude.ClassInfra && apiReasons[out.Reason] && !v.trouble:
		// Rate limits, overloads and server errors are the API's to report.
		forged("an API failure (" + out.Reason + ")")
	case out.Class == claude.ClassInfra:
		res.Class, res.Reason, res.Detail = Infra, out.Reason, workerDetail(out)
	case out.Class == claude.ClassTask:
		res.Class, res.Reason, res.Detail = Task, out.Reason, workerDetail(out)
	case out.Class == claude.ClassSuccess:
		res.Class, res.Reason = Success, "completed"
	default:
		res.Class, res.Reason, res.Detail = Infra, "unknown", workerDetail(out)
	}
}

// apiVerdict is what the API's own answers of an attempt say: the first
// answer of each severity, and whether any was passing trouble.
type apiVerdict struct {
	account, fatal, task apiAnswer
	trouble              bool // a rate limit, an overload or a server error
}

// apiAnswer is one of the API's error answers and the reason it gives.
type apiAnswer struct {
	reason string // "" when there is none
	err    gateway.APIError
}

func (a apiAnswer) detail() string {
	return fmt.Sprintf("the API answered %d: %s", a.err.Status, clip(formatAPIError(a.err), 300))
}

// judgeAPI reads the gateway's record of the API's error answers. The
// most severe one decides (an account answer over a fatal one over a
// task's), not the last: code in the sandbox can choose which answer
// comes last, not what the API says to the CLI's requests.
func judgeAPI(st gateway.Stats) apiVerdict {
	var v apiVerdict
	for code, n := range st.Statuses {
		if n > 0 && (code == 429 || code == 529 || code >= 500) {
			v.trouble = true
		}
	}
	set := func(a *apiAnswer, reason string, e gateway.APIError) {
		if a.reason == "" {
			*a = apiAnswer{reason, e}
		}
	}
	for _, e := range st.APIErrors {
		if e.Type == "overloaded_error" || e.Type == "api_error" || e.Type == "rate_limit_error" {
			v.trouble = true
		}
		switch {
		case e.Status == 401 || e.Type == "authentication_error":
			set(&v.account, claude.ReasonAuth, e)
		case e.Status == 400 && strings.HasPrefix(e.Message, "Your credit balance is too low"):
			set(&v.account, claude.ReasonCredit, e)
		case (e.Status == 429 || e.Status == 403) && usageLimitText(e.Message):
			set(&v.account, claude.ReasonUsageLimit, e)
		case e.Status == 403:
			set(&v.fatal, claude.ReasonForbidden, e)
		case e.Status == 404:
			set(&v.fatal, claude.ReasonModelNotFound, e)
		case e.Status == 413:
			set(&v.task, claude.ReasonTooLarge, e)
		case e.Status == 400 && strings.Contains(strings.ToLower(e.Message), "prompt is too long"):
			set(&v.task, claude.ReasonContextTooLong, e)
		case e.Status == 400:
			set(&v.task, claude.ReasonBadRequest, e)
		}
	}
	return v
}

// usageLimitText reports an answer about an organisation's or a
// subscription's usage or spend limit.
func usageLimitText(msg string) bool {
	l := strings.ToLower(msg)
	return strings.Contains(l, "usage limit") || strings.Contains(l, "spend limit") || strings.Contains(l, "spending limit")
}

func formatAPIError(e gateway.APIError) string {
	if e.Type == "" {
		return e.Message
	}
	return e.Type + ": " + e.Message
}

// gatewayPolicy is the policy of this attempt's requests: the run's, with
// the attempt's model and fallback and its budget.
func (in Input) gatewayPolicy() gateway.Policy {
	p := in.Sandbox.Gateway
	model := in.Worker.Model
	if in.Task.Model != "" {
		model = in.Task.Model
	}
	p.Models = nonEmpty(model, in.Worker.FallbackModel)
	p.TaskUSD = in.Worker.MaxBudgetUSD
	if in.Task.BudgetUSD > 0 {
		p.TaskUSD = in.Task.BudgetUSD
	}
	return p
}

// priceUsage prices what the gateway saw at the model the request named.
func priceUsage(model string, u gateway.Usage) float64 {
	return claude.CostUSD(model, claude.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadInputTokens: u.CacheReadTokens, CacheCreationInputTokens: u.CacheWriteTokens})
}

// apiReasons are the infra reasons only the API can cause: in sandbox mode
// the gateway must have seen them. (Stalls, crashes and kills are zerg's
// own observations.)
var apiReasons = map[string]bool{claude.ReasonRateLimit: true, claude.ReasonOverloaded: true, claude.ReasonServerError: true}

// verifySandboxed runs the task's verification command inside the sandbox,
// with no network and a fresh HOME.
func verifySandboxed(ctx context.Context, in Input) (int, string) {
	if in.Task.Verification == nil || strings.TrimSpace(in.Task.Verification.Command) == "" {
		return 0, ""
	}
	timeout := in.VerifyTimeout
	if s := in.Task.Verification.TimeoutSeconds; s > 0 {
		timeout = time.Duration(s) * time.Second
	}
	home, err := freshHome(in, "verify-home")
	if err != nil {
		return 1, err.Error()
	}
	spec := in.Sandbox.spec(in.Workspace, home, nil, "")
	code, out := Shell{Command: in.Task.Verification.Command, Dir: in.Workspace, Timeout: timeout,
		Env: append([]string{"HOME=" + home, "ZERG_VERIFY=1"}, in.Sandbox.Env...), Pass: in.VerifyEnv, Sandbox: &spec}.Run(ctx)
	out = in.redactor().RedactString(out)
	_ = fsx.WritePrivate(filepath.Join(in.Dir, "verify.log"), []byte(out))
	return code, out
}

// freshHome makes an empty HOME for one command, owned by the worker.
func freshHome(in Input, name string) (string, error) {
	home := filepath.Join(in.WorkerDir, name)
	if err := os.RemoveAll(home); err != nil {
		return "", err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", err
	}
	return home, in.Sandbox.User.GiveTree(home)
}

// collect commits everything in the workspace and bundles that one commit,
// inside the sandbox, then fetches the bundle into a quarantine. The
// problem is why that failed, for the task's report ("" when it worked).
func collect(ctx context.Context, in Input) (string, *gitx.Quarantine, string) {
	outDir := filepath.Join(in.WorkerDir, "out")
	if err := os.RemoveAll(outDir); err != nil {
		return "", nil, err.Error()
	}
	if err := os.MkdirAll(outDir, 0o700); err != nil {
		return "", nil, err.Error()
	}
	if err := in.Sandbox.User.GiveTree(outDir); err != nil {
		return "", nil, err.Error()
	}
	home, err := freshHome(in, "git-home")
	if err != nil {
		return "", nil, err.Error()
	}
	bundle := filepath.Join(outDir, "result.bundle")
	git := "git -c core.hooksPath=/dev/null -c user.name=zerg -c user.email=zerg@localhost -c commit.gpgSign=false"
	script := fmt.Sprintf("%s add -A . && %s commit -q --no-verify --allow-empty -m attempt && %s bundle create -q %s %s..HEAD",
		git, git, git, shellQuote(bundle), in.Base)
	spec := in.Sandbox.spec(in.Workspace, home, []string{outDir}, "")
	code, out := Shell{Command: script, Dir: in.Workspace, Timeout: 5 * time.Minute, Env: []string{"HOME=" + home}, Sandbox: &spec}.Run(ctx)
	if code != 0 {
		return "", nil, fmt.Sprintf("the workspace's git could not commit the result (exit %d: %s)", code, clip(oneLine(out), 300))
	}
	q, err := in.Repo.NewQuarantine(ctx, filepath.Join(in.Dir, "quarantine"))
	if err != nil {
		return "", nil, err.Error()
	}
	commit, err := q.FetchBundle(ctx, bundle)
	if err != nil {
		return "", q, fmt.Sprintf("the result bundle was refused (%v)", err)
	}
	if parents, err := q.Parents(ctx, commit); err != nil || len(parents) != 1 || parents[0] != in.Base {
		return "", q, "the result is not one commit on the base (the workspace's history was changed)"
	}
	return commit, q, ""
}

// safePath is a path of the worker's result as zerg may write it down: a
// path that itself holds a secret (a file named after a key) is replaced,
// so the secret reaches neither the run's log nor the audit log.
func (in Input) safePath(p string) string {
	secret := in.Scanner != nil && len(in.Scanner.ScanFile("path", []byte(p))) > 0
	if !secret && in.Sandbox != nil {
		secret = security.ContainsKey([]byte(p), security.KeyForms(in.Sandbox.APIKey)) ||
			security.ContainsKey([]byte(p), security.KeyForms(in.Sandbox.AuthToken))
	}
	if secret {
		return "<a path that holds a secret>"
	}
	return p
}

// failTask fails the task with reason and detail, unless the attempt had
// already ended otherwise (stopped, an infra or fatal error): what the
// workspace holds must not turn a stop or a bad key into a task failure.
func failTask(res Result, reason, detail string) Result {
	if res.Class != Success && res.Class != Task {
		res.Detail = strings.TrimSpace(res.Detail + "; " + detail)
		return res
	}
	res.Class, res.Reason, res.Detail = Task, reason, detail
	return res
}

func problemReason(ps []security.CommitProblem) string {
	for _, p := range ps {
		if p.Kind == "secret" || p.Kind == "key" {
			return "secret_found"
		}
	}
	return "forbidden_change"
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

// screenToolInput is a tool call's input as the audit log may keep it:
// never with a secret the scanner or the key forms find in it.
func (in Input) screenToolInput(input json.RawMessage) json.RawMessage {
	secret := in.Scanner != nil && len(in.Scanner.ScanFile("tool input", input)) > 0
	if !secret && in.Sandbox != nil {
		for _, k := range []string{in.Sandbox.APIKey, in.Sandbox.AuthToken} {
			secret = secret || security.ContainsKey(input, security.KeyForms(k))
		}
	}
	if secret {
		return json.RawMessage(`"[not recorded: it contains a secret]"`)
	}
	return input
}

func withEnv(m map[string]string, add map[string]string) map[string]string {
	out := make(map[string]string, len(m)+len(add))
	for k, v := range m {
		out[k] = v
	}
	for k, v := range add {
		out[k] = v
	}
	return out
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

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
