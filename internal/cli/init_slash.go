package cli

import (
	"fmt"
	"path"
	"strings"

	"github.com/zergrush/zerg/internal/slash"
)

// slashOptions is how the slash commands are rendered; tests replace the
// templates to play an older zerg.
var slashOptions = func() slash.Options {
	return slash.Options{Exit: slash.ExitCodes{
		OK: ExitOK, Failed: ExitFailed, Usage: ExitUsage, Interrupted: ExitInterrupted, Locked: ExitLocked,
	}}
}

// slashStep is the init step that installs the Claude Code slash commands:
// /zerg:NAME for every zerg command, the /z: shortcuts, and the details they
// read, all rendered from the command tree (docs/slash-commands.md). A file
// the user edited is kept and reported; .zerg/slash-commands.json records
// what zerg wrote. The files are the team's commands, to be committed: they
// are not added to .gitignore.
func slashStep() initStep {
	return initStep{name: "slash commands", check: checkSlash, apply: installSlash}
}

func checkSlash(env *initEnv) error { return badInput(slash.CheckTree(env.root, env.cmds)) }

// installSlash installs the tree's commands (none without a tree) and
// reports them.
func installSlash(env *initEnv, r *initReport) error {
	results, err := slash.InstallTree(env.root, env.cmds, slashOptions())
	reportSlash(r, results)
	return err
}

// slashGroups are the directories whose created and unchanged files are
// reported as one line each; every other outcome gets a line per file.
var slashGroups = []struct{ dir, what string }{
	{slash.CommandsDir, "slash commands /zerg:NAME"},
	{slash.AliasDir, "shortcuts"},
	{slash.DetailsDir, "details the slash commands read when needed"},
}

func reportSlash(r *initReport, results []slash.Result) {
	type group struct{ created, exists []string }
	groups := map[string]*group{}
	for _, g := range slashGroups {
		groups[g.dir] = &group{}
	}
	var single []slash.Result
	for _, res := range results {
		g := groups[path.Dir(res.Path)]
		switch {
		case g != nil && res.Action == slash.Created:
			g.created = append(g.created, res.Path)
		case g != nil && res.Action == slash.Exists:
			g.exists = append(g.exists, res.Path)
		default:
			single = append(single, res)
		}
	}
	for _, gd := range slashGroups {
		g := groups[gd.dir]
		names := func(paths []string) string {
			var n []string
			for _, p := range paths {
				n = append(n, strings.TrimSuffix(path.Base(p), ".md"))
			}
			return strings.Join(n, " ")
		}
		if len(g.created) > 0 {
			r.Created = append(r.Created, g.created...)
			r.lines = append(r.lines, fmt.Sprintf("%-8s %s/ (%d %s: %s)", "created", gd.dir, len(g.created), gd.what, names(g.created)))
		}
		if len(g.exists) > 0 {
			r.Existing = append(r.Existing, g.exists...)
			r.lines = append(r.lines, fmt.Sprintf("%-8s %s/ (%d %s, up to date)", "exists", gd.dir, len(g.exists), gd.what))
		}
	}
	for _, res := range single {
		list := &r.Existing
		switch res.Action {
		case slash.Created:
			list = &r.Created
		case slash.Updated, slash.Removed:
			list = &r.Updated
		}
		r.add(list, string(res.Action), res.Path, res.Detail)
	}
}
