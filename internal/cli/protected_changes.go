package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/journey"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/security"
)

// protectedChanges are the paths changed between base and head that are
// protected (zerg's list and security.protected_paths). On an integration
// branch they can only come from a task security.allow_protected let
// through, or from a person's commit: either way a person reads them
// before they are merged.
func protectedChanges(ctx context.Context, repo *gitx.Repo, cfg config.Config, base, head string) ([]string, error) {
	prot, err := security.NewProtectedPaths(run.ProtectedPaths(cfg))
	if err != nil {
		return nil, badInput(err)
	}
	names, err := repo.Run(ctx, "diff", "--name-only", "-z", "--no-renames", base, head, "--")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range strings.Split(names, "\x00") {
		if _, ok := prot.Match(p); p != "" && ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// protectedFindings are review findings for them: blocking, since no
// check of zerg's can say a CI workflow or a devcontainer is safe.
func protectedFindings(paths []string) []journey.Finding {
	var out []journey.Finding
	for _, p := range paths {
		out = append(out, journey.Finding{Severity: journey.Blocking, Source: "protected", File: p,
			Title:  "changes a protected path (" + p + ")",
			Detail: "CI, hook and editor files run commands with your credentials; security.allow_protected let a task change this one. Read the change yourself, then merge with --force (or answer yes when zerg merge asks)."})
	}
	return out
}

// protectedGate asks before a merge that brings changes to protected
// paths: on a terminal it asks, otherwise it needs --force.
func protectedGate(a *app, feature string, paths []string, force bool) error {
	if len(paths) == 0 {
		return nil
	}
	what := fmt.Sprintf("%s changes %s, protected (CI, hook or editor files that run commands)", feature, listPaths(paths))
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
