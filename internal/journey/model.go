package journey

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/spec"
)

// DraftDir is the directory, relative to a session's private clone, where the
// session writes its files; zerg copies them into .zerg/specs/FEATURE. The
// hook never lets a session write inside .zerg, and the clone is not the
// user's checkout, so the session's writes reach nothing else.
const DraftDir = ".zerg-draft"

// Session is one non-interactive Claude Code session of a journey command.
type Session struct {
	// Name names the session's private state directory ("plan", "design-2").
	Name string
	// Workdir is the private clone the session runs in.
	Workdir string
	// Prompt starts with a recognisable first line ("Design auth round 2:"):
	// rehearsal scenarios match on it.
	Prompt string
	// System is appended to Claude Code's system prompt.
	System string
	// Tools is the exact tool set (no Bash in any journey session).
	Tools []string
	// Writable are the repo-relative paths the session may write; empty: none.
	Writable []string
	// Model is the model alias or id; empty: the CLI's default.
	Model string
}

// Answer is what a session produced besides its files.
type Answer struct {
	Text    string
	CostUSD float64
	Turns   int
}

// Model runs sessions: the real Claude Code CLI (Claude) or a fake in tests.
type Model interface {
	Run(ctx context.Context, s Session) (Answer, error)
}

// Tool sets of the sessions: reading and searching the repository, and
// writing only through Write/Edit (the hook keeps them to Session.Writable).
var (
	WriterTools = []string{"Read", "Glob", "Grep", "Write", "Edit"}
	ReaderTools = []string{"Read", "Glob", "Grep"}
)

// Claude runs sessions with the real Claude Code CLI through internal/claude.
type Claude struct {
	// Base carries the binary, the API settings, the hook's zerg binary and
	// the retry settings; the rest is filled per session.
	Base claude.Spec
	// StateDir holds each session's attempt directory (settings, policy,
	// HOME); it must be outside every workdir.
	StateDir string
	// MaxTurns and MaxBudgetUSD bound each session (0: none).
	MaxTurns     int
	MaxBudgetUSD float64
}

// SessionError is a session that did not finish successfully.
type SessionError struct {
	Session string
	Class   outcome.Class
	Reason  string
	Detail  string
}

func (e *SessionError) Error() string {
	d := strings.TrimSpace(e.Detail)
	if i := strings.IndexByte(d, '\n'); i >= 0 {
		d = d[:i]
	}
	if len(d) > 200 {
		d = d[:200] + "…"
	}
	if d == "" {
		return fmt.Sprintf("the %s session failed (%s: %s)", e.Session, e.Class, e.Reason)
	}
	return fmt.Sprintf("the %s session failed (%s: %s): %s", e.Session, e.Class, e.Reason, d)
}

// Run starts one session and waits for it.
func (c *Claude) Run(ctx context.Context, s Session) (Answer, error) {
	sp := c.Base
	sp.Workdir = s.Workdir
	sp.AttemptDir = filepath.Join(c.StateDir, s.Name)
	sp.Prompt = s.Prompt
	sp.AppendSystemPrompt = s.System
	sp.Tools = s.Tools
	if sp.Tools == nil {
		sp.Tools = []string{}
	}
	sp.Model = s.Model
	sp.MaxTurns = c.MaxTurns
	sp.MaxBudgetUSD = c.MaxBudgetUSD
	sp.Hook.AllowedPaths = append([]string{}, s.Writable...)
	sp.Hook.BashCommands = nil
	if u := sp.RunAs; u != nil {
		// The session's user works in the clone; its .git stays zerg's.
		if err := u.PrepareWorkspace(s.Workdir); err != nil {
			return Answer{}, fmt.Errorf("hand the %s session's clone to %s: %w", s.Name, u.Name, err)
		}
	}
	r, err := claude.Start(ctx, sp)
	if err != nil {
		return Answer{}, err
	}
	out := r.Wait()
	a := Answer{Text: out.ResultText, CostUSD: out.CostUSD, Turns: out.NumTurns}
	if out.Err != nil && out.Class == "" {
		return a, out.Err
	}
	if out.Class != outcome.Success {
		return a, &SessionError{Session: s.Name, Class: out.Class, Reason: out.Reason, Detail: out.Detail}
	}
	return a, nil
}

// CheckFeature says what is wrong with a feature name, or nil: it becomes a
// directory and part of branch names. The rule is the task graph's
// (spec.FeatureNameProblem), the one every command applies.
func CheckFeature(feature string) error {
	if why := spec.FeatureNameProblem(feature); why != "" || gitx.ValidateRef(run.BranchPrefix(feature)+"x") != nil {
		return fmt.Errorf("%q is not a feature name; use letters, digits, '_', '.' and '-' (it becomes a directory and branch name)", feature)
	}
	return nil
}
