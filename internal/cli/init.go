package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/projectinit"
)

func init() { register(newInitCmd) }

// initReport is what init did (projectinit.Report, its JSON) and the text
// report, one line per path.
type initReport struct {
	projectinit.Report
	lines []string
}

func (r *initReport) add(list *[]string, verb, path, detail string) {
	*list = append(*list, path)
	line := fmt.Sprintf("%-8s %s", verb, path)
	if detail != "" {
		line += " (" + detail + ")"
	}
	r.lines = append(r.lines, line)
}

// note adds what a projectinit step did, when it did it (err is nil), to
// the report's list for its kind, and returns err.
func (r *initReport) note(o projectinit.Outcome, err error) error {
	if err == nil {
		r.add(r.List(o.Kind), o.Verb, o.Path, o.Detail)
	}
	return err
}

// initStep is one thing init sets up. Every check runs before any apply, so
// rejected input (an invalid existing config, a file where a directory must
// be) leaves the repository untouched. Steps must be idempotent: when their
// result exists, apply reports it as existing and writes nothing.
type initStep struct {
	name  string
	check func(env *initEnv) error
	apply func(env *initEnv, r *initReport) error
}

// initEnv is what steps share.
type initEnv struct {
	ctx  context.Context
	a    *app
	root string         // repository root (absolute)
	cmds *cobra.Command // the command tree, for the slash commands (nil: skipped)
}

// checked makes a projectinit check an init step's check: what it rejects
// is the user's to fix (exit 2).
func checked(check func(root string) error) func(*initEnv) error {
	return func(env *initEnv) error { return badInput(check(env.root)) }
}

// applied makes a projectinit write an init step's apply.
func applied(write func(root string) (projectinit.Outcome, error)) func(*initEnv, *initReport) error {
	return func(env *initEnv, r *initReport) error { return r.note(write(env.root)) }
}

// initSteps lists init's steps in order.
func initSteps() []initStep {
	return []initStep{
		{name: "config", check: checkConfigFile, apply: applied(projectinit.WriteConfig)},
		rulesStep(),
		{name: "specs", check: checked(projectinit.CheckSpecsDir), apply: applied(projectinit.MakeSpecsDir)},
		{name: "gitignore", check: checked(projectinit.CheckGitignore), apply: applied(projectinit.UpdateGitignore)},
		slashStep(),
		tasksHookStep(),
		precommitStep(),
	}
}

func newInitCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Set up zerg in this git repository (.zerg/config.yaml, .zerg/specs/, .gitignore, slash commands)",
		Long: `Sets up zerg at the root of the current git repository: writes
.zerg/config.yaml with every option at its default, creates .zerg/specs/,
adds zerg's run state to .gitignore, and installs the Claude Code slash
commands (/zerg:NAME for every zerg command, /z: shortcuts) in .claude/,
and tasks mode's PreToolUse hook in .claude/settings.json (docs/modes.md;
your settings are kept). Running it again changes nothing; an existing
config is checked, never overwritten, and a slash command file you edited is
kept.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInit(cmd.Context(), a, cmd.Root(), asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was created as a JSON object")
	return cmd
}

func runInit(ctx context.Context, a *app, cmds *cobra.Command, asJSON bool) error {
	cwd, err := a.getwd()
	if err != nil {
		return failedf("find the current directory: %v", err)
	}
	root, err := zergRepoRoot(ctx, cwd)
	if err != nil {
		return err
	}
	env := &initEnv{ctx: ctx, a: a, root: root, cmds: cmds}
	steps := initSteps()
	for _, s := range steps {
		if err := s.check(env); err != nil {
			return err
		}
	}
	r := &initReport{Report: projectinit.NewReport(root)}
	for _, s := range steps {
		if err := s.apply(env, r); err != nil {
			return failedf("init %s: %v", s.name, err)
		}
	}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	for _, l := range r.lines {
		fmt.Fprintln(a.stdout, l)
	}
	if !r.Changed() {
		fmt.Fprintf(a.stdout, "zerg is already set up in %s; nothing changed\n", root)
	} else {
		fmt.Fprintf(a.stdout, "zerg is set up in %s; review %s, then run: zerg config check\n", root, config.FileName)
	}
	return nil
}

// zergRepoRoot returns the top of the git working tree holding dir. Outside a
// repository it is a usage error telling the user to run git init.
func zergRepoRoot(ctx context.Context, dir string) (string, error) {
	root, err := gitx.WorkTreeRoot(ctx, dir)
	return root, badInput(err)
}

// checkConfigFile shows an existing config's problems, one per line, before
// the error that stops init.
func checkConfigFile(env *initEnv) error {
	return configRefused(env.a, projectinit.CheckConfig(env.root), " or delete it, then run zerg init again; nothing was changed")
}

func countNoun(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
