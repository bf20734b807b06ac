package driver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
)

// Tasks hands each attempt to the user's own Claude Code session, which
// runs it as a Task subagent (tasks mode, docs/modes.md). zerg prepares the
// workspace (a private clone of the base inside the repository, where the
// session's file tools reach), posts a lease on the board, and waits for
// `zerg tasks done` to report the lease back; then the attempt goes through
// the same verification, checks and commit as in every other mode. There is
// no OS isolation: the subagents run with the session's rights, and the
// commit checks are the boundary for what reaches the repository.
type Tasks struct {
	Repo *gitx.Repo
	// Board is the directory of the run's leases (Lease records) and of
	// the reports zerg tasks done writes.
	Board string
	// Lanes is where Isolate makes its clones.
	Lanes string
	// Lease is how long a lease waits for its report.
	Lease time.Duration
	// Poll is how often a waiting attempt looks for its report (default
	// 200ms).
	Poll time.Duration
}

// Lease is a task handed to the session: what zerg tasks next prints.
type Lease struct {
	Task    string `json:"task"`
	Attempt int    `json:"attempt"`
	// ID is the lease's token, the secret a report names (zerg tasks
	// done --lease): <task>-<attempt>-<128 random bits>, so that no other
	// subagent reports this task from what it can see (the workspace's
	// name <task>-<attempt>, the board, the leases out). The board holds
	// only its hash (TokenSHA256); the token waits in <task>.token until
	// zerg tasks next hands the lease out (HandOut), the one time it is
	// printed, to the session, and put in the task's prompt.
	ID          string `json:"lease,omitempty"`
	TokenSHA256 string `json:"token_sha256,omitempty"`
	Workspace   string `json:"workspace"`
	Model       string `json:"model,omitempty"`
	// AgentModel is Model as the Agent tool takes it (an alias: haiku,
	// sonnet or opus), "" when it names none of them: the subagent then
	// runs on the session's model.
	AgentModel string `json:"agent_model,omitempty"`
	// Owns are the task's own paths, for the session's hook.
	Owns []string `json:"owns"`
	// Prompt is the subagent's prompt (TaskPrompt); on the board, the
	// task's own prompt, which HandOut wraps.
	Prompt  string    `json:"prompt"`
	Issued  time.Time `json:"issued"`
	Expires time.Time `json:"expires"`
	// Coordinator is the pid of the coordinator that waits for it: a
	// lease a dead coordinator left on the board is not open.
	Coordinator int `json:"coordinator"`
}

// LeaseSuffix, TokenSuffix and ReportSuffix name a task's files on the
// board: <task>.lease.json (the open lease), <task>.token (its token, until
// it is handed out) and <task>.done (its report: the token).
const (
	LeaseSuffix  = ".lease.json"
	TokenSuffix  = ".token"
	ReportSuffix = ".done"
)

// newLeaseToken is a fresh token for attempt n of task.
func newLeaseToken(task string, n int) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s-%d-%s", task, n, hex.EncodeToString(b)), nil
}

func tokenSum(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Holds reports whether token is the lease's (constant time).
func (l Lease) Holds(token string) bool {
	return token != "" && l.TokenSHA256 != "" && subtle.ConstantTimeCompare([]byte(tokenSum(token)), []byte(l.TokenSHA256)) == 1
}

// Name is the lease's public name, its workspace's: <task>-<attempt>.
func (l Lease) Name() string { return filepath.Base(l.Workspace) }

// HandOut is the open lease l of the board as zerg tasks next prints it
// once: with its token and the subagent's whole prompt. It takes the token
// off the board (a rename first, so that of two zerg tasks next at once
// only one hands the lease out) and marks the lease handed out
// (HandedOut); ok is false when another has.
func HandOut(board string, l Lease) (Lease, bool, error) {
	file := filepath.Join(board, l.Task+TokenSuffix)
	claimed := fmt.Sprintf("%s.handing-%d", file, os.Getpid())
	if err := os.Rename(file, claimed); errors.Is(err, os.ErrNotExist) {
		return Lease{}, false, nil
	} else if err != nil {
		return Lease{}, false, err
	}
	b, err := os.ReadFile(claimed)
	_ = os.Remove(claimed)
	if err != nil {
		return Lease{}, false, err
	}
	token := strings.TrimSpace(string(b))
	if !l.Holds(token) {
		return Lease{}, false, nil // a token of another attempt of the task
	}
	if err := markHanded(board, l); err != nil {
		return Lease{}, false, err
	}
	l.ID, l.TokenSHA256 = token, ""
	l.Prompt = TaskPrompt(l.Workspace, token, l.Prompt)
	return l, true, nil
}

// OpenLeases reads the leases open on board, oldest first, as the board
// holds them: without their tokens.
func OpenLeases(board string) ([]Lease, error) {
	entries, err := os.ReadDir(board)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Lease
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), LeaseSuffix) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(board, e.Name()))
		if err != nil {
			continue // closed while we read
		}
		var l Lease
		if json.Unmarshal(b, &l) == nil {
			out = append(out, l)
		}
	}
	// Issued order, so that a session starts the oldest first.
	slices.SortFunc(out, func(a, b Lease) int { return a.Issued.Compare(b.Issued) })
	return out, nil
}

// Report records that the session finished the lease of task whose token
// is token: the waiting attempt takes it from there when the token is its
// lease's. The caller checks the lease is open.
func Report(board, task, token string) error {
	return fsx.WritePrivate(filepath.Join(board, task+ReportSuffix), []byte(token+"\n"))
}

func (d *Tasks) Name() string { return "tasks" }

func (d *Tasks) Prepare(ctx context.Context, a Attempt) (Workspace, error) {
	if err := os.MkdirAll(filepath.Dir(a.Workspace), 0o755); err != nil {
		return nil, err
	}
	if err := a.Repo.CloneCommit(ctx, a.Workspace, a.Base); err != nil {
		return nil, fmt.Errorf("create workspace for %s: %w", a.Task, err)
	}
	return &handed{d: d, a: a, dir: a.Workspace, state: a.WorkerDir}, nil
}

func (d *Tasks) Reopen(ctx context.Context, a Attempt) (Workspace, error) {
	if _, err := os.Stat(a.Workspace); err != nil {
		return nil, err
	}
	return &handed{d: d, a: a, dir: a.Workspace, state: a.WorkerDir}, nil
}

func (d *Tasks) Isolate(ctx context.Context, commit, name string) (Workspace, error) {
	l, err := newLane(ctx, d.Repo, d.Lanes, commit, name)
	if err != nil {
		return nil, err
	}
	return &handed{d: d, dir: l.ws, state: l.state, lane: l}, nil
}

// handed is a tasks-mode workspace: a private clone the session's subagent
// works in, or a lane for zerg's own commands.
type handed struct {
	d     *Tasks
	a     Attempt
	dir   string
	state string
	lane  *lane
}

func (w *handed) Dir() string { return w.dir }

func (w *handed) leaseFile() string  { return filepath.Join(w.d.Board, w.a.Task+LeaseSuffix) }
func (w *handed) tokenFile() string  { return filepath.Join(w.d.Board, w.a.Task+TokenSuffix) }
func (w *handed) reportFile() string { return filepath.Join(w.d.Board, w.a.Task+ReportSuffix) }

// Launch posts the lease and waits for its report, its expiry or the end
// of the run. Nothing is started: the session's subagent is the worker.
func (w *handed) Launch(ctx context.Context, sp claude.Spec, _ Starter) (Verdict, error) {
	if err := os.MkdirAll(w.d.Board, 0o700); err != nil {
		return Verdict{}, err
	}
	// A report left from an earlier attempt is not this one's.
	_ = os.Remove(w.reportFile())
	token, err := newLeaseToken(w.a.Task, w.a.Number)
	if err != nil {
		return Verdict{}, err
	}
	now := time.Now().UTC()
	l := Lease{Task: w.a.Task, Attempt: w.a.Number, TokenSHA256: tokenSum(token), Workspace: w.dir,
		Model: sp.Model, AgentModel: AgentModel(sp.Model), Owns: nonNilStrings(sp.Hook.AllowedPaths), Prompt: sp.Prompt,
		Issued: now, Expires: now.Add(w.d.Lease), Coordinator: os.Getpid()}
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return Verdict{}, err
	}
	// The token first: a lease on the board is one zerg tasks next can
	// hand out.
	if err := fsx.WritePrivate(w.tokenFile(), []byte(token+"\n")); err != nil {
		return Verdict{}, err
	}
	defer os.Remove(w.tokenFile())
	if err := fsx.WritePrivate(w.leaseFile(), append(b, '\n')); err != nil {
		return Verdict{}, err
	}
	defer os.Remove(w.leaseFile())
	poll := w.d.Poll
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	expire := time.NewTimer(w.d.Lease)
	defer expire.Stop()
	for {
		if got, err := os.ReadFile(w.reportFile()); err == nil && l.Holds(strings.TrimSpace(string(got))) {
			_ = os.Remove(w.reportFile())
			return Verdict{Class: outcome.Success, Reason: outcome.ReasonCompleted}, nil
		}
		select {
		case <-ctx.Done():
			return Verdict{Class: outcome.Infra, Reason: outcome.ReasonStopped, Detail: "the run was stopped"}, nil
		case <-expire.C:
			return Verdict{Class: outcome.Infra, Reason: outcome.ReasonStalled,
				Detail: fmt.Sprintf("the lease of %s expired after %s without zerg tasks done (tasks.lease)", l.Name(), w.d.Lease)}, nil
		case <-tick.C:
		}
	}
}

// AgentModel is the Agent tool's alias for model: the family a model id
// or alias names, "" for none it knows.
func AgentModel(model string) string {
	m := strings.ToLower(model)
	for _, family := range []string{"opus", "sonnet", "haiku"} {
		if strings.Contains(m, family) {
			return family
		}
	}
	return ""
}

// TaskPrompt is the prompt a subagent gets: where its workspace is and its
// lease, then the task's own prompt (written, as in every mode, for a
// worker whose working directory is the workspace).
func TaskPrompt(workspace, lease, prompt string) string {
	return fmt.Sprintf(`You are a zerg worker. Your workspace is %[1]s: a private clone of the repository made for this task. Treat it as the repository root: every path below is relative to it. Give file tools absolute paths under %[1]s, and start every shell command with cd %[1]s &&. Change nothing outside it, do not commit (zerg commits your work), and when you are done answer with one line saying what you changed. This task's lease is %[2]s: your work is reported to zerg with it, and with no other.

%[3]s`, workspace, lease, prompt)
}

func (w *handed) Exec(ctx context.Context, c Command) (int, string) {
	env := c.Env
	if c.Home != "" {
		home, err := freshHome(w.state, c.Home, nil)
		if err != nil {
			return 1, "zerg: make the command's home: " + err.Error()
		}
		env = append([]string{"HOME=" + home}, env...)
	}
	return Shell{Command: c.Command, Dir: w.dir, Timeout: c.Timeout, Env: env, Pass: c.Pass}.Run(ctx)
}

func (w *handed) Snapshot(ctx context.Context, q *gitx.Quarantine, base string) (string, string) {
	commit, err := q.Snapshot(ctx, w.a.Repo.In(w.dir), base)
	if err != nil {
		return "", fmt.Sprintf("the workspace's content could not be committed (%v)", err)
	}
	return commit, ""
}

func (w *handed) Keep(why string) string { return "the workspace is kept in " + w.dir }

func (w *handed) Remove(ctx context.Context) error {
	if w.lane != nil {
		w.lane.remove()
		return nil
	}
	if err := os.RemoveAll(w.dir); err != nil {
		return fmt.Errorf("remove workspace of %s: %w", w.a.Task, err)
	}
	return nil
}

func (w *handed) Discard(ctx context.Context) error { return w.Remove(ctx) }

func (w *handed) Close() {}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
