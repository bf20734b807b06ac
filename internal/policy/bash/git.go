package bash

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Local git in subprocess mode. Reading (status, diff, log …) is always
// allowed. What writes refs, the index or the work tree (add, commit,
// checkout, reset, stash, rebase …) can run repository hooks (pre-commit,
// commit-msg, post-checkout, reference-transaction …), which would run code
// this check never sees; so it is allowed only when no hook can run: the
// repository's hooks directory holds no executable hook, and no
// configuration git reads (the repository's, the user's, the system's, or
// GIT_CONFIG_* in the environment) sets core.hooksPath or includes another
// file. For a repository the same line is about to create (git init in a
// scratch directory), the configuration must not set init.templateDir
// either. Remotes, the configuration itself and everything that runs a
// program from an option (-c, rebase --exec, bisect run) are refused
// (reachCommand and gitDeniedOptions).

// gitReadOnly are the subcommands that change nothing git could hook.
var gitReadOnly = set(gitReadOnlyCmds)

const gitReadOnlyCmds = `status diff log show ls-files rev-parse blame grep describe shortlog show-ref cat-file
	ls-tree merge-base rev-list name-rev for-each-ref check-ignore check-attr count-objects whatchanged range-diff
	diff-tree diff-index diff-files version`

// gitWritesTree are the subcommands that write files of the work tree from
// the repository, which may hold symbolic links: like ln, they make later
// paths of the same line unpredictable (see makesLinks).
var gitWritesTree = set("checkout switch restore reset stash rebase merge cherry-pick revert am apply pull clone")

// gitDeniedOptions are options of a subcommand that run a program, open an
// editor, or take a template from elsewhere.
var gitDeniedOptions = map[string][]string{
	"rebase": {"-x", "--exec", "-i", "--interactive"},
	"init":   {"--template", "--separate-git-dir"},
	"am":     {"-i", "--interactive"},
	"commit": {"--interactive", "--patch", "-p"},
	"add":    {"-i", "--interactive", "-p", "--patch", "-e", "--edit"},
	"apply":  {"--unsafe-paths"},
}

// gitTextOptions are a subcommand's options whose value is text (a
// message, a pattern, a date, a branch name): never a path, and may be
// computed by a quoted command substitution (git commit -m "$(cat <<'EOF'
// …)"). gitPathOptions take a file that is read.
var gitTextOptions = map[string][]string{
	"commit":       {"-m", "--message", "--author", "--date", "--trailer", "--cleanup", "-C", "-c", "--reuse-message", "--reedit-message", "--fixup", "--squash"},
	"checkout":     {"-b", "-B", "--orphan", "--conflict"},
	"switch":       {"-c", "-C", "--create", "--force-create", "--orphan", "--conflict"},
	"merge":        {"-m", "--message", "-s", "--strategy", "-X", "--strategy-option", "--cleanup"},
	"rebase":       {"--onto", "-s", "--strategy", "-X", "--strategy-option"},
	"tag":          {"-m", "--message", "-u", "--local-user"},
	"stash":        {"-m", "--message"},
	"notes":        {"-m", "--message"},
	"log":          {"--grep", "--author", "--committer", "--since", "--until", "--after", "--before", "--format", "--pretty", "--date", "-S", "-G", "--encoding", "-n", "--max-count", "--skip", "--abbrev"},
	"show":         {"--grep", "--author", "--format", "--pretty", "--date", "-S", "-G", "--encoding", "--abbrev"},
	"diff":         {"-S", "-G", "--diff-filter", "--word-diff-regex", "--color-words", "--abbrev"},
	"shortlog":     {"--grep", "--author", "--since", "--until", "--format", "-n", "--max-count"},
	"rev-list":     {"--grep", "--author", "--since", "--until", "--after", "--before", "-n", "--max-count", "--skip", "--format"},
	"grep":         {"-e", "--and", "--or", "--not", "-A", "-B", "-C", "--context", "--after-context", "--before-context", "-m", "--max-count", "--max-depth"},
	"for-each-ref": {"--format", "--sort", "--count"},
	"branch":       {"--format", "--sort", "-u", "--set-upstream-to"},
}

var gitPathOptions = map[string][]string{
	"commit":   {"-F", "--file", "-t", "--template", "--pathspec-from-file"},
	"merge":    {"-F", "--file"},
	"tag":      {"-F", "--file"},
	"notes":    {"-F", "--file"},
	"grep":     {"-f"},
	"add":      {"--pathspec-from-file"},
	"reset":    {"--pathspec-from-file"},
	"checkout": {"--pathspec-from-file"},
	"restore":  {"--pathspec-from-file"},
	"rm":       {"--pathspec-from-file"},
	"stash":    {"--pathspec-from-file"},
}

// checkGit: "git -C dir" makes the rest relative to dir; the subcommand's
// options are read for what they are (a message is text, -F names a file);
// what changes the repository needs a repository no hook can run in; git
// grep's -O (--open-files-in-pager) runs a program and may sit in a
// cluster or be abbreviated.
func checkGit(ck *bashChecker, args []bashWord) error {
	inv := &invocation{name: "git"}
	i := 0
	for i < len(args) && strings.HasPrefix(args[i].lit, "-") {
		if args[i].lit == "-C" && i+1 < len(args) {
			inv.opts = append(inv.opts, parsedOpt{name: "-C", kind: optDir, value: args[i+1].lit, has: true})
			i++
		}
		i++
	}
	ck2, err := ck.withDirs("git", inv)
	if err != nil {
		return err
	}
	if err := ck2.rawArgs(args[:i], false); err != nil {
		return err
	}
	if i >= len(args) {
		return nil
	}
	sub := args[i].lit
	rest := args[i+1:]
	for _, a := range rest {
		if a.lit == "--" {
			break
		}
		nm, _, _ := strings.Cut(strings.TrimPrefix(a.lit, "--"), "=")
		switch {
		case sub != "grep":
		case strings.HasPrefix(a.lit, "--") && nm != "" && strings.HasPrefix("open-files-in-pager", nm):
			return fmt.Errorf("git grep %s is not allowed (%s)", a.lit, whyRuns)
		case !strings.HasPrefix(a.lit, "--") && strings.HasPrefix(a.lit, "-") && strings.Contains(a.lit, "O"):
			return fmt.Errorf("git grep %s is not allowed (-O %s)", a.lit, whyRuns)
		}
		for _, o := range gitDeniedOptions[sub] {
			if a.lit == o || strings.HasPrefix(a.lit, o+"=") {
				return fmt.Errorf("git %s %s is not allowed (it runs a program or an editor, or takes a template from elsewhere)", sub, a.lit)
			}
		}
	}
	if !gitReadOnly[sub] {
		if err := ck2.gitHooksSafe(sub); err != nil {
			return err
		}
	}
	return ck2.gitArgs(sub, rest)
}

// gitArgs checks a subcommand's arguments: text option values are free,
// path option values and every other word are paths (options this check
// does not know the way a command without a spec has them checked).
func (ck *bashChecker) gitArgs(sub string, rest []bashWord) error {
	texts, paths := gitTextOptions[sub], gitPathOptions[sub]
	grepPattern := sub == "grep"
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a.lit == "--" && !a.dynamic {
			for _, p := range rest[i+1:] {
				if p.dynamic {
					return fmt.Errorf("the argument %q is computed at run time", p.raw)
				}
				if err := ck.pathspec(p); err != nil {
					return err
				}
			}
			return nil
		}
		if !a.dynamic && strings.HasPrefix(a.lit, "-") && a.lit != "-" {
			name, val, eq := strings.Cut(a.lit, "=")
			if !strings.HasPrefix(a.lit, "--") && len(a.lit) > 2 {
				// a cluster: the first letter that takes a value takes
				// the rest of the word, or the next word (-am MSG)
				name, val, eq = a.lit, "", false
				for j := 1; j < len(a.lit); j++ {
					o := "-" + a.lit[j:j+1]
					if slices.Contains(texts, o) || slices.Contains(paths, o) {
						name, val, eq = o, a.lit[j+1:], j+1 < len(a.lit)
						break
					}
				}
			}
			isText, isPath := slices.Contains(texts, name), slices.Contains(paths, name)
			if grepPattern && (name == "-e" || name == "-f") {
				grepPattern = false
			}
			switch {
			case (isText || isPath) && !eq:
				if i+1 >= len(rest) {
					return nil // git says the value is missing
				}
				i++
				v := rest[i]
				if isPath {
					if v.dynamic {
						return fmt.Errorf("the file %q is computed at run time", v.raw)
					}
					if err := ck.checkPath(v.lit, false); err != nil {
						return err
					}
				} else if v.split {
					return fmt.Errorf("the unquoted command substitution in %s is split at run time; quote it", v.raw)
				}
			case isText:
			case isPath:
				if err := ck.checkPath(val, false); err != nil {
					return err
				}
			default:
				if err := ck.rawWord(a.lit, false, true); err != nil {
					return err
				}
			}
			continue
		}
		if a.dynamic {
			return fmt.Errorf("the argument %q is computed at run time", a.raw)
		}
		if grepPattern {
			grepPattern = false // git grep's first operand is the pattern
			continue
		}
		if err := ck.pathspec(a); err != nil {
			return err
		}
	}
	return nil
}

// pathspec checks an operand: a revision (HEAD~2, abc123:dir/file) or a
// path, both judged as paths, the part after a colon too.
func (ck *bashChecker) pathspec(a bashWord) error {
	if a.tilde {
		return fmt.Errorf("%s names a home directory", a.lit)
	}
	if a.glob >= 0 {
		// git expands pathspec patterns itself, inside the repository.
		return ck.plainWord(a.lit[:a.glob], false)
	}
	return ck.plainWord(a.lit, false)
}

// gitHooksSafe refuses a git command that may change the repository when
// a hook could run in the repository of any directory the shell may be in.
func (ck *bashChecker) gitHooksSafe(sub string) error {
	if os.Getenv("GIT_DIR") != "" || os.Getenv("GIT_WORK_TREE") != "" || os.Getenv("GIT_COMMON_DIR") != "" {
		return fmt.Errorf("git %s with GIT_DIR set: the repository cannot be judged", sub)
	}
	seen := map[string]bool{}
	for _, cwd := range ck.cwds {
		gitDir, common, err := findGitDir(cwd)
		if err != nil {
			return fmt.Errorf("git %s: %v", sub, err)
		}
		if seen[gitDir+"\x00"+common] {
			continue
		}
		seen[gitDir+"\x00"+common] = true
		if err := hooksSafe(gitDir, common); err != nil {
			return fmt.Errorf("git %s is not allowed here: %v, and it could run", sub, err)
		}
	}
	return nil
}

// findGitDir finds the repository git would use from dir: the git
// directory and the common directory (they differ for a worktree). Both
// are "" when there is none up to the root (git init would make one).
func findGitDir(dir string) (gitDir, common string, err error) {
	for d := filepath.Clean(dir); ; {
		p := filepath.Join(d, ".git")
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.Mode()&os.ModeSymlink != 0:
			return "", "", fmt.Errorf("%s is a symbolic link", p)
		case err == nil && fi.IsDir():
			gitDir = p
		case err == nil && fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return "", "", err
			}
			line := strings.TrimSpace(string(data))
			if !strings.HasPrefix(line, "gitdir:") {
				return "", "", fmt.Errorf("%s is not a gitdir file", p)
			}
			gitDir = strings.TrimSpace(strings.TrimPrefix(line, "gitdir:"))
			if !filepath.IsAbs(gitDir) {
				gitDir = filepath.Join(d, gitDir)
			}
		case err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return "", "", err
		}
		if gitDir != "" {
			common = gitDir
			if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
				c := strings.TrimSpace(string(data))
				if !filepath.IsAbs(c) {
					c = filepath.Join(gitDir, c)
				}
				common = filepath.Clean(c)
			}
			return gitDir, common, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", nil
		}
		d = parent
	}
}

// hooksSafe says why a hook could run in the repository (gitDir, common),
// or nil: an executable hook in its hooks directory, or a configuration
// that moves the hooks, includes another file, or (for a repository not
// made yet) takes templates from elsewhere.
func hooksSafe(gitDir, common string) error {
	var configs []string
	if common != "" {
		configs = append(configs, filepath.Join(common, "config"), filepath.Join(gitDir, "config.worktree"))
	}
	configs = append(configs, userGitConfigs()...)
	keys := []string{"hookspath", "[include", "includeif"}
	if common == "" {
		keys = append(keys, "templatedir")
		if os.Getenv("GIT_TEMPLATE_DIR") != "" {
			return errors.New("GIT_TEMPLATE_DIR is set")
		}
	}
	for _, f := range configs {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		text := strings.ToLower(string(data))
		for _, k := range keys {
			if strings.Contains(text, k) {
				return fmt.Errorf("%s sets %s", f, strings.Trim(k, "["))
			}
		}
	}
	var env []string
	if n, err := strconv.Atoi(os.Getenv("GIT_CONFIG_COUNT")); err == nil {
		for i := 0; i < n && i < 1000; i++ {
			env = append(env, os.Getenv(fmt.Sprintf("GIT_CONFIG_KEY_%d", i)))
		}
	}
	env = append(env, os.Getenv("GIT_CONFIG_PARAMETERS"))
	for _, e := range env {
		e = strings.ToLower(e)
		for _, k := range keys {
			if strings.Contains(e, strings.Trim(k, "[")) {
				return fmt.Errorf("the environment's git configuration sets %s", strings.Trim(k, "["))
			}
		}
	}
	if common == "" {
		return nil
	}
	dir := filepath.Join(common, "hooks")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sample") {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return fmt.Errorf("the repository has the hook %s", e.Name())
		}
	}
	return nil
}

// userGitConfigs are the user's and the system's git configuration files,
// where git looks for them in this environment.
func userGitConfigs() []string {
	var out []string
	if v := os.Getenv("GIT_CONFIG_GLOBAL"); v != "" {
		out = append(out, v)
	} else {
		home := os.Getenv("HOME")
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			out = append(out, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			out = append(out, filepath.Join(home, ".gitconfig"))
		}
	}
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		if v := os.Getenv("GIT_CONFIG_SYSTEM"); v != "" {
			out = append(out, v)
		} else {
			out = append(out, "/etc/gitconfig", "/usr/local/etc/gitconfig")
		}
	}
	return out
}
