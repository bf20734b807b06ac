package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/textx"
)

// Subprocess runs the worker as a process on this machine, as an
// unprivileged user when zerg runs as root, in a git worktree of the
// repository. Its boundary for tool calls is the worker's hook policy.
type Subprocess struct {
	Repo *gitx.Repo
	// RunAs is the worker user (nil: zerg's own user).
	RunAs *security.WorkerUser
	// Lanes is where Isolate makes its clones.
	Lanes string
}

func (d *Subprocess) Name() string { return "subprocess" }

func (d *Subprocess) Prepare(ctx context.Context, a Attempt) (Workspace, error) {
	if err := a.Repo.AddWorktree(ctx, a.Workspace, a.Branch, a.Base); err != nil {
		return nil, fmt.Errorf("create workspace for %s: %w", a.Task, err)
	}
	return d.open(a)
}

func (d *Subprocess) Reopen(ctx context.Context, a Attempt) (Workspace, error) {
	if _, err := os.Stat(a.Workspace); err != nil {
		return nil, err
	}
	return d.open(a)
}

func (d *Subprocess) open(a Attempt) (Workspace, error) {
	w := &worktree{d: d, a: a, dir: a.Workspace, state: a.WorkerDir}
	if u := d.RunAs; u != nil {
		// The worker owns its files; .git stays zerg's, and zerg trusts
		// exactly this workspace for its own git calls.
		if err := a.Repo.TrustWorkspace(a.Workspace); err != nil {
			return nil, err
		}
		w.trusted = true
		if err := u.PrepareWorkspace(a.Workspace); err != nil {
			w.Close()
			return nil, fmt.Errorf("hand the workspace of %s to %s: %w", a.Task, u.Name, err)
		}
	}
	return w, nil
}

func (d *Subprocess) Isolate(ctx context.Context, commit, name string) (Workspace, error) {
	l, err := newLane(ctx, d.Repo, d.Lanes, commit, name)
	if err != nil {
		return nil, err
	}
	if u := d.RunAs; u != nil {
		for _, p := range []string{l.ws, l.state} {
			if err := u.GiveTree(p); err != nil {
				l.remove()
				return nil, fmt.Errorf("hand %s to %s: %w", p, u.Name, err)
			}
		}
	}
	return &worktree{d: d, dir: l.ws, state: l.state, lane: l}, nil
}

// worktree is a subprocess-mode workspace: a git worktree of the
// repository for an attempt, or a private clone (lane) for zerg's own
// commands.
type worktree struct {
	d       *Subprocess
	a       Attempt
	dir     string
	state   string // where fresh homes go
	lane    *lane
	trusted bool
}

func (w *worktree) Dir() string { return w.dir }

func (w *worktree) Launch(ctx context.Context, sp claude.Spec, start Starter) (Verdict, error) {
	sp.RunAs = w.d.RunAs
	out, err := start(ctx, sp)
	if err != nil {
		return Verdict{}, err
	}
	v := Verdict{Worker: out, Class: out.Class, Reason: out.Reason, Refused: cliRefusals(out.PermissionDenials)}
	// Without a gateway the CLI's own report of the calls its hook denied
	// is all there is; the worker's code could forge it, so it only ever
	// adds records, it never clears anyone.
	for _, d := range out.PermissionDenials {
		if err := w.a.Audit(security.AuditHookDenied, deniedCall(d, w.a.Screen)); err != nil {
			return v, &AuditError{Err: err}
		}
	}
	if out.Class != outcome.Success {
		v.Detail = WorkerDetail(out)
		if out.Class == outcome.Account {
			v.Reset = claude.ResetFromText(out.Detail)
		}
	}
	switch out.Class {
	case outcome.Success:
		v.Reason = outcome.ReasonCompleted
	case outcome.Task, outcome.Infra, outcome.Fatal, outcome.Account:
	default:
		v.Class, v.Reason = outcome.Infra, outcome.ReasonUnknown
	}
	return v, nil
}

func (w *worktree) Exec(ctx context.Context, c Command) (int, string) {
	env := c.Env
	if c.Home != "" {
		home, err := freshHome(w.state, c.Home, w.d.RunAs)
		if err != nil {
			return 1, "zerg: make the command's home: " + err.Error()
		}
		env = append([]string{"HOME=" + home}, env...)
	}
	return Shell{Command: c.Command, Dir: w.dir, Timeout: c.Timeout, Env: env, Pass: c.Pass, RunAs: w.d.RunAs}.Run(ctx)
}

func (w *worktree) Snapshot(ctx context.Context, q *gitx.Quarantine, base string) (string, string) {
	commit, err := q.Snapshot(ctx, w.a.Repo.In(w.dir), base)
	if err != nil {
		return "", fmt.Sprintf("the workspace's content could not be committed (%v)", err)
	}
	return commit, ""
}

func (w *worktree) Keep(why string) string {
	// The worktree is the repository's: git works there as it is.
	return "the workspace stays in " + w.dir
}

func (w *worktree) Remove(ctx context.Context) error {
	if w.lane != nil {
		w.lane.remove()
		return nil
	}
	// The branch holds the snapshot now: the index follows it, and git
	// then removes a worktree only when nothing in it differs.
	if _, err := w.a.Repo.In(w.dir).Run(ctx, "reset", "--quiet"); err != nil {
		return fmt.Errorf("remove workspace of %s: %w", w.a.Task, err)
	}
	if err := w.a.Repo.RemoveWorktree(ctx, w.dir); err != nil && !errors.Is(err, gitx.ErrDirty) {
		return fmt.Errorf("remove workspace of %s: %w", w.a.Task, err)
	}
	return nil
}

func (w *worktree) Discard(ctx context.Context) error {
	if w.lane != nil {
		w.lane.remove()
		return nil
	}
	return w.a.Repo.DiscardWorktree(ctx, w.dir)
}

func (w *worktree) Close() {
	if w.trusted {
		w.a.Repo.UntrustWorkspace(w.dir)
		w.trusted = false
	}
}

// freshHome makes an empty HOME called name under dir for one command,
// owned by u (nil: zerg's own user).
func freshHome(dir, name string, u *security.WorkerUser) (string, error) {
	home := filepath.Join(dir, name)
	if err := os.RemoveAll(home); err != nil {
		return "", err
	}
	// The directories above stay passable for u (made again here when
	// zerg cleanup removed the workers' state); the home is u's alone.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.Mkdir(home, 0o700); err != nil {
		return "", err
	}
	if u == nil {
		return home, nil
	}
	return home, u.GiveTree(home)
}

// deniedCall describes a denied tool call for the audit log: the tool and
// its target, never file contents, and a Bash command only when it holds
// no secret (screen replaces an input that does).
func deniedCall(d claude.PermissionDenial, screen func(json.RawMessage) json.RawMessage) map[string]any {
	fields := map[string]any{"tool": d.ToolName}
	var input map[string]any
	if json.Unmarshal(d.ToolInput, &input) != nil {
		return fields
	}
	for _, k := range []string{"file_path", "notebook_path", "path", "pattern"} {
		if v, ok := input[k].(string); ok {
			fields[k] = textx.Clip(v, 300)
		}
	}
	if cmd, ok := input["command"].(string); ok {
		if raw, _ := json.Marshal(cmd); screen != nil && string(screen(raw)) != string(raw) {
			cmd = "[not recorded: it contains a secret]"
		}
		fields["command"] = textx.Clip(cmd, 300)
	}
	return fields
}
