package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/journey"
	"github.com/zergrush/zerg/internal/security"
)

// readerChanges are the paths changed between base and head that a person
// reads before they are merged: protected paths (zerg's list and
// security.protected_paths), which on an integration branch can only come
// from a task security.allow_protected let through or from a person's
// commit, and the instruction files of coding agents, which any task may
// change but which are prompts for the user's next session.
type readerChanges struct {
	protected    []string
	instructions []string
}

func (c readerChanges) empty() bool { return len(c.protected)+len(c.instructions) == 0 }

func protectedChanges(ctx context.Context, repo *gitx.Repo, cfg config.Config, base, head string) (readerChanges, error) {
	var out readerChanges
	prot := cfg.Protection()
	names, err := repo.Run(ctx, "diff", "--name-only", "-z", "--no-renames", base, head, "--")
	if err != nil {
		return out, err
	}
	for _, p := range strings.Split(names, "\x00") {
		if p == "" {
			continue
		}
		if _, ok := prot.Match(p); ok {
			out.protected = append(out.protected, p)
		} else if _, ok := security.InstructionFile(p); ok {
			out.instructions = append(out.instructions, p)
		}
	}
	return out, nil
}

// protectedFindings are review findings for them: blocking, since no
// check of zerg's can say a CI workflow, a devcontainer or an agent's
// instructions are safe.
func protectedFindings(c readerChanges) []journey.Finding {
	var out []journey.Finding
	for _, p := range c.protected {
		out = append(out, journey.Finding{Severity: journey.Blocking, Source: "protected", File: p,
			Title:  "changes a protected path (" + p + ")",
			Detail: "CI, hook and editor files run commands with your credentials; security.allow_protected let a task change this one. Read the change yourself, then merge with --force (or answer yes when zerg merge asks)."})
	}
	for _, p := range c.instructions {
		out = append(out, journey.Finding{Severity: journey.Blocking, Source: "instructions", File: p,
			Title:  "changes instructions your coding agents load (" + p + ")",
			Detail: "Claude Code, Codex, Cursor, Copilot and other agents read this file as instructions when you open the repository: what a worker wrote here is a prompt for your next session, with your credentials and no sandbox. Read the change yourself, then merge with --force (or answer yes when zerg merge asks)."})
	}
	return out
}

// protectedGate asks before a merge that brings changes to protected
// paths or instruction files: on a terminal it asks, otherwise it needs
// --force.
func protectedGate(a *app, feature string, c readerChanges, force bool) error {
	if c.empty() {
		return nil
	}
	var parts []string
	if len(c.protected) > 0 {
		parts = append(parts, fmt.Sprintf("%s, protected (CI, hook or editor files that run commands)", listPaths(c.protected)))
	}
	if len(c.instructions) > 0 {
		parts = append(parts, fmt.Sprintf("%s, instructions your coding agents load (a prompt for your next session)", listPaths(c.instructions)))
	}
	what := fmt.Sprintf("%s changes %s", feature, strings.Join(parts, "; and "))
	if force {
		fmt.Fprintf(a.stderr, "zerg: warning: %s; merging anyway (--force)\n", what)
		return nil
	}
	if !stdinIsTerminal() {
		return failedf("%s; read those changes yourself, then merge with --force", what)
	}
	fmt.Fprintf(a.stderr, "zerg: %s.\nHave you read them, and merge? [y/N] ", what)
	line, _ := bufio.NewReader(rushStdin).ReadString('\n')
	if ans := strings.ToLower(strings.TrimSpace(line)); ans == "y" || ans == "yes" {
		return nil
	}
	return failedf("%s: not merged (not confirmed); nothing changed", feature)
}

func listPaths(paths []string) string {
	if len(paths) > 10 {
		return strings.Join(paths[:10], ", ") + fmt.Sprintf(" and %d more", len(paths)-10)
	}
	return strings.Join(paths, ", ")
}
