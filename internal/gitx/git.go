package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds one git call; a hung git (a lock, a slow filesystem)
// must not hang the run.
const DefaultTimeout = 2 * time.Minute

// hardening is passed as -c options to every call: repository hooks never run
// (a worker could have written them), no fsmonitor daemon, no pager, no
// credential prompts, and no automatic gc that could race with other calls.
var hardening = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.pager=cat",
	"-c", "credential.helper=",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "commit.gpgSign=false",
	"-c", "tag.gpgSign=false",
	"-c", "advice.detachedHead=false",
	"-c", "init.defaultBranch=main",
}

// Error is a failed git call: the arguments, where it ran, the exit code and
// git's own stderr.
type Error struct {
	Args     []string
	Dir      string
	ExitCode int
	Stderr   string
	Err      error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i] + " …"
	}
	return fmt.Sprintf("git %s (in %s): exit %d: %s", strings.Join(e.Args, " "), e.Dir, e.ExitCode, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Runner runs git in one directory.
type Runner struct {
	Dir     string
	Timeout time.Duration
	// Commits is how the commits it makes are written: who they name,
	// their sign-off and signature, zerg's trailer (identity.go).
	Commits CommitPolicy
	// ExtraEnv is appended to the minimal environment (e.g. GIT_INDEX_FILE in tests).
	ExtraEnv []string
	// Trusted are workspaces zerg created and handed to an unprivileged
	// worker user. Git refuses to work in a repository owned by someone else
	// ("dubious ownership"); for a call whose Dir is inside one of them the
	// runner passes -c safe.directory=<that exact path>, never "*", after
	// checking that the workspace's .git entry is still zerg's own, so a
	// worker cannot point zerg's git at a config it wrote (core.fsmonitor,
	// filters, diff.external would run as zerg). Nested repositories the
	// worker creates stay untrusted. A call also trusts a listed workspace
	// it names as an argument (git worktree remove runs git status inside it).
	Trusted []string
	// shared holds workspaces trusted at run time (TrustWorkspace); New
	// creates it and In/Trust copies share it.
	shared *trustList
}

type trustList struct {
	mu   sync.Mutex
	dirs []string
}

// New returns a runner for dir whose commits are zerg's (ZergCommits).
func New(dir string) *Runner {
	return &Runner{Dir: dir, Timeout: DefaultTimeout, Commits: ZergCommits(), shared: &trustList{}}
}

// Trust returns a copy of r that also trusts dirs (see Runner.Trusted).
func (r *Runner) Trust(dirs ...string) *Runner {
	c := *r
	c.Trusted = append(append([]string{}, r.Trusted...), dirs...)
	return &c
}

// In returns a copy of r that runs in dir.
func (r *Runner) In(dir string) *Runner {
	c := *r
	c.Dir = dir
	return &c
}

// env builds git's environment from scratch: inherited GIT_* variables
// (GIT_DIR, GIT_WORK_TREE, GIT_CONFIG_*) could point zerg's calls elsewhere.
func (r *Runner) env() []string {
	env := []string{
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=true",
		"SSH_ASKPASS=true",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_OPTIONAL_LOCKS=0",
		"LC_ALL=C",
	}
	env = append(env, r.identityEnv()...)
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "XDG_CONFIG_HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, r.ExtraEnv...)
}

// Run runs git with args and returns stdout. Arguments are never passed
// through a shell.
func (r *Runner) Run(ctx context.Context, args ...string) (string, error) {
	out, err := r.run(ctx, nil, args...)
	return string(out), err
}

// RunInput runs git with stdin.
func (r *Runner) RunInput(ctx context.Context, stdin []byte, args ...string) (string, error) {
	out, err := r.run(ctx, stdin, args...)
	return string(out), err
}

func (r *Runner) run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	full := append([]string{}, hardening...)
	for _, dir := range r.trustedFor(args) {
		if err := checkGitEntry(dir); err != nil {
			return nil, &Error{Args: args, Dir: r.Dir, ExitCode: -1, Stderr: err.Error(), Err: err}
		}
		for _, d := range safeForms(dir) {
			full = append(full, "-c", "safe.directory="+d)
		}
	}
	full = append(append(full, r.signingOptions()...), args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = r.Dir
	cmd.Env = r.env()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err != nil {
		ge := &Error{Args: args, Dir: r.Dir, ExitCode: -1, Stderr: stderr.String(), Err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ge.ExitCode = ee.ExitCode()
		}
		if ctx.Err() != nil {
			ge.Err = fmt.Errorf("%w (after %s)", ctx.Err(), timeout)
			if ge.Stderr == "" {
				ge.Stderr = ge.Err.Error()
			}
		}
		return stdout.Bytes(), ge
	}
	return stdout.Bytes(), nil
}

// trim returns git's single-line output.
func trim(s string, err error) (string, error) { return strings.TrimSpace(s), err }

// Repo serializes the operations that touch shared state of one repository
// (refs, worktree list, the object database's packing): git takes its own
// locks, but a failed lock is an error, not a wait.
type Repo struct {
	*Runner
	mu sync.Mutex
}

// OpenRepo returns the repository whose top level contains dir.
func OpenRepo(ctx context.Context, dir string) (*Repo, error) {
	top, err := trim(New(dir).Run(ctx, "rev-parse", "--show-toplevel"))
	if err != nil {
		return nil, fmt.Errorf("%s is not inside a git repository: %w", dir, err)
	}
	return &Repo{Runner: New(top)}, nil
}

// Locked runs fn while holding the repository's lock.
func (r *Repo) Locked(fn func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fn()
}
