package delivery

import (
	"context"
	"strings"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/journey"
	"github.com/zergrush/zerg/internal/security"
)

// ReaderChanges are the paths changed between base and head that a person
// reads before they are merged: protected paths (zerg's list and
// security.protected_paths), which on an integration branch can only come
// from a task security.allow_protected let through or from a person's
// commit, and the instruction files of coding agents, which any task may
// change but which are prompts for the user's next session. zerg review
// reports them as blocking findings; zerg merge asks before it takes them.
type ReaderChanges struct {
	Protected    []string
	Instructions []string
}

// Empty reports whether nothing needs a reader.
func (c ReaderChanges) Empty() bool { return len(c.Protected)+len(c.Instructions) == 0 }

// FindReaderChanges reads the paths changed between base and head (renames
// as a deletion and an addition, so a protected file renamed away counts)
// and sorts them with ClassifyReaderChanges.
func FindReaderChanges(ctx context.Context, repo *gitx.Repo, prot *security.Protection, base, head string) (ReaderChanges, error) {
	names, err := repo.Run(ctx, "diff", "--name-only", "-z", "--no-renames", base, head, "--")
	if err != nil {
		return ReaderChanges{}, err
	}
	return ClassifyReaderChanges(prot, strings.Split(names, "\x00")), nil
}

// ClassifyReaderChanges keeps the paths of changed that prot protects or
// that are a coding agent's instructions; a path is one or the other,
// protected first.
func ClassifyReaderChanges(prot *security.Protection, changed []string) ReaderChanges {
	var out ReaderChanges
	for _, p := range changed {
		if p == "" {
			continue
		}
		if _, ok := prot.Match(p); ok {
			out.Protected = append(out.Protected, p)
		} else if _, ok := security.InstructionFile(p); ok {
			out.Instructions = append(out.Instructions, p)
		}
	}
	return out
}

// Findings are review findings for them: blocking, since no check of
// zerg's can say a CI workflow, a devcontainer or an agent's instructions
// are safe.
func (c ReaderChanges) Findings() []journey.Finding {
	var out []journey.Finding
	for _, p := range c.Protected {
		out = append(out, journey.Finding{Severity: journey.Blocking, Source: "protected", File: p,
			Title:  "changes a protected path (" + p + ")",
			Detail: "CI, hook and editor files run commands with your credentials; security.allow_protected let a task change this one. Read the change yourself, then merge with --force (or answer yes when zerg merge asks)."})
	}
	for _, p := range c.Instructions {
		out = append(out, journey.Finding{Severity: journey.Blocking, Source: "instructions", File: p,
			Title:  "changes instructions your coding agents load (" + p + ")",
			Detail: "Claude Code, Codex, Cursor, Copilot and other agents read this file as instructions when you open the repository: what a worker wrote here is a prompt for your next session, with your credentials and no sandbox. Read the change yourself, then merge with --force (or answer yes when zerg merge asks)."})
	}
	return out
}
