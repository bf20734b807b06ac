package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/container"
	"github.com/zergrush/zerg/internal/gitx"
)

func init() { register(newInitCmd) }

// gitignoreEntries are the paths zerg writes that must never be committed:
// run state (event logs, attempts, worker config dirs) and re-creatable
// caches such as the fetched security rules.
var gitignoreEntries = []string{".zerg/runs/", ".zerg/cache/", ".zerg/tasks/", ".zerg/audit.jsonl*"}

// initReport is what init did, per path relative to the repository root.
type initReport struct {
	Root     string   `json:"root"`
	Created  []string `json:"created"`
	Existing []string `json:"existing"`
	Updated  []string `json:"updated"`
	lines    []string // the text report, one line per path
}

func (r *initReport) add(list *[]string, verb, path, detail string) {
	*list = append(*list, path)
	line := fmt.Sprintf("%-8s %s", verb, path)
	if detail != "" {
		line += " (" + detail + ")"
	}
	r.lines = append(r.lines, line)
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

func (e *initEnv) abs(rel string) string { return filepath.Join(e.root, filepath.FromSlash(rel)) }

// initSteps lists init's steps in order.
func initSteps() []initStep {
	return []initStep{
		{name: "config", check: checkConfigFile, apply: writeConfigFile},
		rulesStep(),
		{name: "specs", check: checkSpecsDir, apply: makeSpecsDir},
		{name: "gitignore", check: checkGitignore, apply: updateGitignore},
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
	r := &initReport{Root: root, Created: []string{}, Existing: []string{}, Updated: []string{}}
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
	if len(r.Created)+len(r.Updated) == 0 {
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

// initCheckDirOrAbsent rejects a path that exists but is not a directory.
func initCheckDirOrAbsent(env *initEnv, rel string) error {
	fi, err := os.Lstat(env.abs(rel))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return usageErrorf("check %s: %v", rel, err)
	case !fi.IsDir():
		return usageErrorf("%s exists but is not a directory; move it away and run zerg init again", rel)
	}
	return nil
}

func checkConfigFile(env *initEnv) error {
	if err := initCheckDirOrAbsent(env, ".zerg"); err != nil {
		return err
	}
	path := env.abs(config.FileName)
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return usageErrorf("check %s: %v", config.FileName, err)
	case !fi.Mode().IsRegular():
		return usageErrorf("%s exists but is not a regular file; move it away and run zerg init again", config.FileName)
	}
	// An existing config is the user's: report its problems, never replace it.
	if _, err := loadConfigFile(path, config.FileName); err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			printConfigProblems(env.a, ce)
			return usageErrorf("%s has %s; fix it (zerg config check shows them again) or delete it, then run zerg init again; nothing was changed",
				config.FileName, countNoun(len(ce.Problems), "problem"))
		}
		return usageErrorf("%v", err)
	}
	return nil
}

func writeConfigFile(env *initEnv, r *initReport) error {
	path := env.abs(config.FileName)
	if _, err := os.Lstat(path); err == nil {
		r.add(&r.Existing, "exists", config.FileName, "valid, left as is")
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	// O_EXCL: never overwrite a config that appeared since the check.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	tmpl, detail := config.Template(), ""
	// A devcontainer makes container mode an option worth a line; sandbox
	// stays the mode. A devcontainer.json zerg cannot look at (a directory
	// of that name) is no reason to fail init: the config says nothing.
	if dc, _ := container.FindDevcontainer(env.root); dc != "" {
		rel, _ := filepath.Rel(env.root, dc)
		rel = filepath.ToSlash(rel)
		tmpl = config.TemplateWithDevcontainer(rel)
		detail = "a devcontainer was found at " + rel + ": mode: container is an option"
	}
	_, err = f.Write(tmpl)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// A half-written config would fail the next init; remove it.
		_ = os.Remove(path)
		return err
	}
	r.add(&r.Created, "created", config.FileName, detail)
	return nil
}

const initSpecsDir = ".zerg/specs/"

func checkSpecsDir(env *initEnv) error { return initCheckDirOrAbsent(env, initSpecsDir) }

func makeSpecsDir(env *initEnv, r *initReport) error {
	path := env.abs(initSpecsDir)
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		r.add(&r.Existing, "exists", initSpecsDir, "")
		return nil
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	r.add(&r.Created, "created", initSpecsDir, "")
	return nil
}

func checkGitignore(env *initEnv) error {
	fi, err := os.Stat(env.abs(".gitignore"))
	if err == nil && !fi.Mode().IsRegular() {
		return usageErrorf(".gitignore exists but is not a regular file; move it away and run zerg init again")
	}
	return nil
}

// updateGitignore appends the entries the file lacks and leaves every existing
// byte as it was.
func updateGitignore(env *initEnv, r *initReport) error {
	path := env.abs(".gitignore")
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	missing := missingIgnoreEntries(old, gitignoreEntries)
	if len(missing) == 0 {
		r.add(&r.Existing, "exists", ".gitignore", "zerg entries present")
		return nil
	}
	nl := "\n"
	if bytes.Contains(old, []byte("\r\n")) {
		nl = "\r\n" // keep the file's own line endings
	}
	var b strings.Builder
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		b.WriteString(nl)
	}
	if !bytes.Contains(old, []byte(gitignoreHeader)) {
		b.WriteString(gitignoreHeader + nl)
	}
	for _, e := range missing {
		b.WriteString(e + nl)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		_ = f.Close() // the write's error is the one to report
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	detail := "added " + strings.Join(missing, ", ")
	if exists {
		r.add(&r.Updated, "updated", ".gitignore", detail)
	} else {
		r.add(&r.Created, "created", ".gitignore", detail)
	}
	return nil
}

const gitignoreHeader = "# zerg: run state and caches (added by zerg init)"

// missingIgnoreEntries returns the wanted entries the file does not already
// list. "/.zerg/runs", ".zerg/runs" and ".zerg/runs/" count as the same entry.
func missingIgnoreEntries(content []byte, want []string) []string {
	norm := func(s string) string {
		s = strings.TrimSpace(s)
		return strings.TrimSuffix(strings.TrimPrefix(s, "/"), "/")
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(content), "\n") {
		have[norm(line)] = true
	}
	var missing []string
	for _, w := range want {
		if !have[norm(w)] {
			missing = append(missing, w)
		}
	}
	return missing
}

func countNoun(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
