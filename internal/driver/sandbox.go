package driver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/zergrush/zerg/internal/cgroup"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/sandbox"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/textx"
)

// Sandbox runs the worker, its verification and its commit inside an
// operating-system boundary (a bubblewrap sandbox, or a container: see
// Boundary) as an unprivileged user of their own (one per concurrent
// worker, from a pool); the workspace is a private clone of the base; the
// API key stays with a gateway on this side; what the worker produced
// comes back as a bundle fetched into a quarantine.
type Sandbox struct {
	Repo *gitx.Repo
	// Boundary makes the processes; nil: bubblewrap on this host's root
	// (sandbox mode).
	Boundary Boundary
	// Users is the pool of worker users: one per workspace in use, so no
	// two sandboxes ever run as the same uid.
	Users chan *security.WorkerUser
	// Hide are host directories invisible inside (the repository, the
	// workspaces, zerg's records); ReadOnly are host paths visible
	// read-only (the CLI's install, zerg's binary).
	Hide     []string
	ReadOnly []string
	// HideFiles are host files covered inside, their content out of reach
	// (an agent's credentials file).
	HideFiles []string
	// Tools is what the repository's toolchains give a sandboxed command
	// whose writable build cache is the given directory: the shared
	// installs and caches (read-only), the writable ones of this command
	// alone (created empty for it and removed after it), and the
	// variables they need (PATH first).
	Tools  func(buildCache string) (shared, private, env []string)
	Limits sandbox.Limits
	// Upstream, APIKey, AuthToken and OAuthToken are the real Messages API
	// and its credentials: only the gateway holds them.
	Upstream     string
	APIKey       string
	AuthToken    string
	OAuthToken   string
	Allow        []string // egress allowlist (egress.allow)
	MaxFileBytes int64
	// Gateway is the policy of every model-API request (the caps, the
	// betas, the server tools, the run's budget); each attempt adds its
	// models and its own budget.
	Gateway gateway.Policy
	// Cgroups makes a control group per workspace where the machine has
	// them: memory and processes as totals (Limits). nil: the per-process
	// limits only.
	Cgroups *cgroup.Manager
	// Lanes is where Isolate makes its clones.
	Lanes string
}

// Boundary is the operating system's boundary around a sandboxed
// workspace's processes, as laid out by a sandbox.Spec: a bubblewrap
// sandbox on the host's root (sandbox mode) or a container of the
// project's image (container mode, internal/container).
type Boundary interface {
	// Mode is the config mode the boundary is.
	Mode() string
	// Command is the process that runs argv inside s; done, called once it
	// has ended (however), removes what it may have left (a container).
	Command(ctx context.Context, s sandbox.Spec, argv ...string) (cmd *exec.Cmd, done func(), err error)
}

// Bubblewrap is sandbox mode's boundary (internal/sandbox).
type Bubblewrap struct{}

func (Bubblewrap) Mode() string { return "sandbox" }

func (Bubblewrap) Command(ctx context.Context, s sandbox.Spec, argv ...string) (*exec.Cmd, func(), error) {
	cmd, err := sandbox.Command(ctx, s, argv...)
	return cmd, func() {}, err
}

func (d *Sandbox) boundary() Boundary {
	if d.Boundary == nil {
		return Bubblewrap{}
	}
	return d.Boundary
}

func (d *Sandbox) Name() string { return d.boundary().Mode() }

// Reaper is a driver, or a boundary, that can find what a dead
// coordinator's run left outside its process records (containers, by
// their label) and remove it.
type Reaper interface {
	ReapLeftovers(ctx context.Context) int
}

func (d *Sandbox) ReapLeftovers(ctx context.Context) int {
	if r, ok := d.boundary().(Reaper); ok {
		return r.ReapLeftovers(ctx)
	}
	return 0
}

// placeholderKey is what the sandbox holds instead of the API key (or the
// subscription token).
const placeholderKey = "sk-ant-zerg-sandbox-placeholder"

// sandboxProxy is the forwarder's address inside the sandbox.
const sandboxProxy = "http://127.0.0.1:3128"

// placeholderAPI is the sandbox's API settings: the gateway, and a
// placeholder in the shape of the real credential, so the CLI inside sends
// what it would send with the real one (with a subscription token: a
// bearer and the OAuth beta) and the gateway only swaps the value.
func (d *Sandbox) placeholderAPI() claude.APISettings {
	if d.APIKey == "" && d.AuthToken == "" && d.OAuthToken != "" {
		return claude.APISettings{BaseURL: sandboxProxy, OAuthToken: placeholderKey}
	}
	return claude.APISettings{BaseURL: sandboxProxy, APIKey: placeholderKey}
}

func (d *Sandbox) Prepare(ctx context.Context, a Attempt) (Workspace, error) {
	w, err := d.open(ctx, a.WorkerDir, fmt.Sprintf("%s-%d", a.Task, a.Number))
	if err != nil {
		return nil, err
	}
	w.a, w.dir = a, a.Workspace
	if err := a.Repo.CloneCommit(ctx, a.Workspace, a.Base); err != nil {
		w.Close()
		return nil, fmt.Errorf("create workspace for %s: %w", a.Task, err)
	}
	// The whole clone is the worker's, .git included: zerg never runs git
	// in it again; the worker's git runs inside the sandbox.
	if err := w.user.GiveTree(a.Workspace); err != nil {
		w.Close()
		return nil, fmt.Errorf("hand the workspace of %s to %s: %w", a.Task, w.user.Name, err)
	}
	return w, nil
}

// Rebase lays the workspace again from base, for a prepared worker whose
// CLI already runs in it and waits for its prompt: it empties the directory
// (kept: the sandbox binds it) and clones base into it as Prepare does. It
// never runs git in the worker's .git: it removes it.
func (w *sandboxed) Rebase(ctx context.Context, base string) error {
	if w.lane != nil {
		return errors.New("a lane is not an attempt's workspace")
	}
	ents, err := os.ReadDir(w.dir)
	if err != nil {
		return fmt.Errorf("lay the workspace of %s again: %w", w.a.Task, err)
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(w.dir, e.Name())); err != nil {
			return fmt.Errorf("lay the workspace of %s again: %w", w.a.Task, err)
		}
	}
	// Empty, the directory is zerg's again for the clone (git refuses to
	// work in a directory another user owns), then the worker's.
	if err := os.Lchown(w.dir, os.Geteuid(), os.Getegid()); err != nil {
		return fmt.Errorf("lay the workspace of %s again: %w", w.a.Task, err)
	}
	if err := w.a.Repo.CloneCommit(ctx, w.dir, base); err != nil {
		return fmt.Errorf("lay the workspace of %s again: %w", w.a.Task, err)
	}
	w.a.Base = base
	if err := w.user.GiveTree(w.dir); err != nil {
		return fmt.Errorf("hand the workspace of %s to %s: %w", w.a.Task, w.user.Name, err)
	}
	return nil
}

func (d *Sandbox) Reopen(ctx context.Context, a Attempt) (Workspace, error) {
	if _, err := os.Stat(a.Workspace); err != nil {
		return nil, err
	}
	w, err := d.open(ctx, a.WorkerDir, fmt.Sprintf("%s-%d-recover", a.Task, a.Number))
	if err != nil {
		return nil, err
	}
	w.a, w.dir = a, a.Workspace
	// The worker's state may be gone (zerg cleanup removes it): its
	// directory is made again as a launch makes it, passable for the slot.
	if err := w.user.PrepareAttemptDir(a.WorkerDir); err != nil {
		w.Close()
		return nil, fmt.Errorf("the worker state of %s: %w", a.Task, err)
	}
	// The workspace belonged to the slot it ran in (or, handed back by
	// zerg cleanup, to you); it now goes to the slot that finishes it, and
	// a record that it was handed back is no longer true.
	_ = os.Remove(a.Workspace + KeptSuffix)
	if err := w.user.GiveTree(a.Workspace); err != nil {
		w.Close()
		return nil, fmt.Errorf("hand the workspace of %s to %s: %w", a.Task, w.user.Name, err)
	}
	return w, nil
}

func (d *Sandbox) Isolate(ctx context.Context, commit, name string) (Workspace, error) {
	l, err := newLane(ctx, d.Repo, d.Lanes, commit, name)
	if err != nil {
		return nil, err
	}
	w, err := d.open(ctx, l.state, name)
	if err != nil {
		l.remove()
		return nil, err
	}
	w.dir, w.lane = l.ws, l
	for _, p := range []string{l.ws, l.state} {
		if err := w.user.GiveTree(p); err != nil {
			w.Close()
			l.remove()
			return nil, fmt.Errorf("hand %s to %s: %w", p, w.user.Name, err)
		}
	}
	return w, nil
}

// open takes a worker user, creates the build cache of state (empty, the
// user's) and a control group called name.
func (d *Sandbox) open(ctx context.Context, state, name string) (*sandboxed, error) {
	var u *security.WorkerUser
	select {
	case u = <-d.Users:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	w := &sandboxed{d: d, user: u, state: state}
	w.shared, w.private, w.env = d.Tools(filepath.Join(state, "cache"))
	if err := w.preparePrivate(); err != nil {
		w.Close()
		return nil, fmt.Errorf("create the build cache of %s: %w", name, err)
	}
	if err := w.newGroup(name); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// sandboxed is a sandbox-mode workspace: an attempt's private clone, or a
// lane's.
type sandboxed struct {
	d     *Sandbox
	a     Attempt
	user  *security.WorkerUser
	dir   string
	state string // the worker's state: homes, the build cache, the bundle
	lane  *lane
	// shared, private and env are the toolchains' (Sandbox.Tools).
	shared, private, env []string
	group                *cgroup.Group
}

func (w *sandboxed) Dir() string { return w.dir }

// spec is the sandbox of one process tree in the workspace with home as
// its HOME, writable besides the workspace, and proxy as its only way out
// ("" for none).
func (w *sandboxed) spec(home string, writable []string, proxy string) sandbox.Spec {
	d := w.d
	return sandbox.Spec{
		Workdir: w.dir, Home: home, ReadOnly: d.ReadOnly, Writable: append(append([]string{}, writable...), w.private...),
		Shared: w.shared, Hide: d.Hide, HideFiles: d.HideFiles, ProxySocket: proxy, UID: w.user.UID, GID: w.user.GID, Limits: d.Limits,
		Cgroup: w.group,
	}
}

func (w *sandboxed) Launch(ctx context.Context, sp claude.Spec, start Starter) (Verdict, error) {
	d, a := w.d, w.a
	// The gateway: the sandbox's only way out, on a socket only this
	// slot's user may use, in a directory only zerg and that user can pass
	// (short: a socket path has at most 107 bytes).
	sockDir, err := gatewayDir(w.user)
	if err != nil {
		return Verdict{}, err
	}
	defer os.RemoveAll(sockDir)
	sock := filepath.Join(sockDir, "s")
	policy := d.Gateway
	policy.Models, policy.TaskUSD = a.Models, a.TaskUSD
	gw, err := gateway.Start(gateway.Config{
		Upstream: d.Upstream, APIKey: d.APIKey, AuthToken: d.AuthToken, OAuthToken: d.OAuthToken, Placeholder: placeholderKey,
		Allow: d.Allow, Audit: a.Audit, Screen: a.Screen, Policy: policy, Price: priceUsage,
		Peer: &gateway.Peer{UID: w.user.UID, GID: w.user.GID}, WorkerTimeout: sp.APITimeout,
	}, sock)
	if err != nil {
		return Verdict{}, fmt.Errorf("start the gateway of %s: %w", a.Task, err)
	}
	gwClosed := false
	closeGW := func() error {
		if gwClosed {
			return nil
		}
		gwClosed = true
		return gw.Close()
	}
	defer func() { _ = closeGW() }() // on the early returns; the normal path checks its error

	sp.RunAs = w.user
	// The sandbox, not the Bash check, is the boundary for commands: the
	// hook only refuses what reaches outside it.
	sp.Hook.BashSandboxed = true
	// Inside, only the directories zerg binds exist (the run binds the
	// located and the resolved one of each binary), so a link on the way
	// (node_modules linked from another checkout) would not resolve: start
	// the resolved files.
	sp.Binary, sp.Hook.ZergBinary = resolved(sp.Binary), resolved(sp.Hook.ZergBinary)
	sp.API = d.placeholderAPI()
	sp.SetEnv = withEnv(withEnv(sp.SetEnv, envMap(w.env)), map[string]string{"HTTP_PROXY": sandboxProxy, "HTTPS_PROXY": sandboxProxy,
		"http_proxy": sandboxProxy, "https_proxy": sandboxProxy, "NO_PROXY": "", "no_proxy": ""})
	spec := w.spec(filepath.Join(sp.AttemptDir, "home"),
		[]string{filepath.Join(sp.AttemptDir, "config"), filepath.Join(sp.AttemptDir, "tmp")}, sock)
	// The attempt dir holds the settings and the hook's policy: visible,
	// not writable.
	spec.ReadOnly = append(append([]string{}, spec.ReadOnly...), sp.AttemptDir)
	iso := &isolation{spec: spec, box: d.boundary()}
	sp.Isolation = iso

	out, err := start(ctx, sp)
	iso.finish()
	if err != nil {
		return Verdict{}, err
	}
	v := Verdict{Worker: out}
	// Closing writes the gateway's record to the audit log: an attempt
	// whose record cannot be written does not go on unaudited.
	if err := closeGW(); err != nil {
		return v, &AuditError{Err: err}
	}
	// The denials were audited by the gateway as the CLI reported them to
	// the model (the result event's list is the worker's to forge).
	st := gw.Stats()
	judgeGateway(&v, out, st, ctx.Err() != nil)
	v.Refused = gatewayRefusals(st)
	w.outOfMemory(&v)
	return v, nil
}

// isolation runs the worker's CLI in the boundary spec describes.
type isolation struct {
	spec sandbox.Spec
	box  Boundary
	mu   sync.Mutex
	done []func()
}

func (i *isolation) Command(ctx context.Context, argv []string, dir string, env []string) (*exec.Cmd, error) {
	sb := i.spec
	sb.Workdir, sb.Env = dir, env
	cmd, done, err := i.box.Command(ctx, sb, argv...)
	if err != nil {
		return nil, err
	}
	i.mu.Lock()
	i.done = append(i.done, done)
	i.mu.Unlock()
	return cmd, nil
}

// finish cleans up after every process the worker's start made, once
// the start has returned (its processes have ended).
func (i *isolation) finish() {
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, f := range i.done {
		f()
	}
	i.done = nil
}

// AuditError is a security decision a driver could not write to the audit
// log: the attempt must not go on unaudited.
type AuditError struct{ Err error }

func (e *AuditError) Error() string { return e.Err.Error() }
func (e *AuditError) Unwrap() error { return e.Err }

// outOfMemory makes an attempt whose processes the kernel killed for
// passing the group's memory limit a task failure: the worker's code took
// the memory, and retrying it as an infrastructure failure would let it
// do so without end. It also records the group's peak.
func (w *sandboxed) outOfMemory(v *Verdict) {
	v.MemoryPeak = w.group.MemoryPeak()
	// A container's init reports the kill itself (its cgroup is the
	// engine's): zerg's own code inside, whose exit the worker cannot make.
	killed := w.group.OOMKills() > 0 || v.Worker.ExitCode == sandbox.ExitOutOfMemory
	if !killed || v.Class == outcome.Success || v.Class == outcome.Task || v.Reason == outcome.ReasonCancelled {
		return
	}
	v.Class, v.Reason = outcome.Task, outcome.ReasonOutOfMemory
	v.Detail = fmt.Sprintf("the kernel killed a process of the attempt: its processes together passed sandbox.memory_mb (%d MiB); use less memory (build or test less at once)",
		w.d.Limits.MemoryBytes>>20)
}

func (w *sandboxed) Exec(ctx context.Context, c Command) (int, string) {
	home := ""
	if c.Home != "" {
		h, err := freshHome(w.state, c.Home, w.user)
		if err != nil {
			return 1, "zerg: make the command's home: " + err.Error()
		}
		home = h
	}
	spec := w.spec(home, nil, "")
	env := append([]string{}, w.env...)
	if home != "" {
		env = append([]string{"HOME=" + home}, env...)
	}
	return Shell{Command: c.Command, Dir: w.dir, Timeout: c.Timeout, Env: append(env, c.Env...), Pass: c.Pass, Sandbox: &spec, Boundary: w.d.boundary()}.Run(ctx)
}

// Snapshot commits everything in the workspace and bundles that one
// commit, inside the sandbox (zerg runs no git in a worker's clone), then
// fetches the bundle into q.
func (w *sandboxed) Snapshot(ctx context.Context, q *gitx.Quarantine, base string) (string, string) {
	outDir := filepath.Join(w.state, "out")
	if err := os.RemoveAll(outDir); err != nil {
		return "", err.Error()
	}
	if err := os.MkdirAll(outDir, 0o700); err != nil {
		return "", err.Error()
	}
	if err := w.user.GiveTree(outDir); err != nil {
		return "", err.Error()
	}
	home, err := freshHome(w.state, "git-home", w.user)
	if err != nil {
		return "", err.Error()
	}
	bundle := filepath.Join(outDir, "result.bundle")
	git := "git -c core.hooksPath=/dev/null -c user.name=zerg -c user.email=zerg@localhost -c commit.gpgSign=false"
	// Every process of the worker has ended (its sandbox or container is
	// gone), so a git lock is a leftover (index, HEAD, a ref): of a snapshot
	// or a worker's git that a killed coordinator cut short, which would fail
	// the commit for good. find does not follow a .git that is a link.
	// A snapshot cut short after its commit (the coordinator killed before
	// it took the bundle) left zerg's commit on the base: a second one on
	// top would not be one commit on the base, so start from the base
	// again with the tree kept. A worker's commit forged to look like it
	// gains nothing: its tree is what is checked either way.
	undo := fmt.Sprintf(`if [ "$(%s rev-parse -q --verify HEAD^ 2>/dev/null)" = %s ] && [ "$(%s log -1 --format='%%ae %%s' HEAD)" = 'zerg@localhost attempt' ]; then %s reset -q --soft %s; fi`,
		git, textx.ShellQuote(base), git, git, textx.ShellQuote(base))
	script := fmt.Sprintf("find .git -name '*.lock' -type f -delete 2>/dev/null; %s; %s add -A . && %s commit -q --no-verify --allow-empty -m attempt && %s bundle create -q %s %s..HEAD",
		undo, git, git, git, textx.ShellQuote(bundle), base)
	spec := w.spec(home, []string{outDir}, "")
	code, out := Shell{Command: script, Dir: w.dir, Timeout: 5 * time.Minute, Env: []string{"HOME=" + home}, Sandbox: &spec, Boundary: w.d.boundary()}.Run(ctx)
	if code != 0 {
		return "", fmt.Sprintf("the workspace's git could not commit the result (exit %d: %s)", code, textx.Clip(textx.OneLine(out), 300))
	}
	commit, err := q.FetchBundle(ctx, bundle)
	if err != nil {
		return "", fmt.Sprintf("the result bundle was refused (%v)", err)
	}
	return commit, ""
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

// Keep hands the workspace back to the person who ran zerg
// (security.HandBack), records why beside it, and says so.
func (w *sandboxed) Keep(why string) string {
	note := "the workspace is kept in " + w.dir
	if err := security.HandBack(w.dir); err != nil {
		return note + fmt.Sprintf(" (it could not be handed back to you: %v)", err)
	}
	if b, err := json.Marshal(Kept{Task: w.a.Task, Attempt: w.a.Number, Reason: why, Time: time.Now().UTC()}); err == nil {
		_ = fsx.WritePrivate(w.dir+KeptSuffix, b)
	}
	return note + " (yours now: git works there; the worker's .git/config and hooks are set aside as .git/config.worker and .git/hooks.worker)"
}

func (w *sandboxed) Remove(ctx context.Context) error {
	if w.lane != nil {
		w.lane.remove()
		return nil
	}
	if err := os.RemoveAll(w.dir); err != nil {
		return fmt.Errorf("remove workspace of %s: %w", w.a.Task, err)
	}
	return nil
}

func (w *sandboxed) Discard(ctx context.Context) error { return w.Remove(ctx) }

func (w *sandboxed) Close() {
	for _, d := range w.private {
		_ = os.RemoveAll(d)
	}
	w.private = nil
	// Best effort: it kills the members whatever else fails; what can be
	// left is an empty group directory, which holds no process.
	_ = w.group.Close()
	w.group = nil
	if w.user != nil {
		w.d.Users <- w.user
		w.user = nil
	}
}

// preparePrivate creates the private directories empty, owned by the
// workspace's user.
func (w *sandboxed) preparePrivate() error {
	for _, d := range w.private {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		// The directories above it stay passable (an attempt's worker
		// state dir is 0755, as PrepareAttemptDir makes it).
		if err := os.MkdirAll(filepath.Dir(d), 0o755); err != nil {
			return err
		}
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
		if err := w.user.GiveTree(d); err != nil {
			return err
		}
	}
	return nil
}

// newGroup gives the workspace's commands a control group of their own,
// named after what runs (a task and attempt, a gate), with the sandbox's
// memory and process limits as totals; none where the machine has no
// cgroup.
func (w *sandboxed) newGroup(name string) error {
	if w.d.Cgroups == nil {
		return nil
	}
	var r [4]byte
	_, _ = rand.Read(r[:])
	safe := strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' {
			return c
		}
		return '-'
	}, textx.Clip(name, 80))
	g, err := w.d.Cgroups.New(fmt.Sprintf("%s-%x", safe, r), cgroup.Limits{MemoryBytes: w.d.Limits.MemoryBytes, Processes: w.d.Limits.Processes})
	if err != nil {
		return fmt.Errorf("create the cgroup of %s: %w", name, err)
	}
	w.group = g
	return nil
}

// gatewayDir makes the directory of an attempt's gateway socket: zerg's,
// mode 0710 with u's group (u may pass, not list), or 0700 when u is
// zerg's own user.
func gatewayDir(u *security.WorkerUser) (string, error) {
	dir, err := fsx.MkdirTemp("zerg-gw-")
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

// envMap is a list of NAME=value as a map, for the worker's launch spec.
func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
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
