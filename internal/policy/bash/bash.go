package bash

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/policy/resolve"
	"github.com/zergrush/zerg/internal/textx"
)

// Policy says which commands the Bash tool may run. The check works on
// the command string, before it runs: it is a guard against mistakes and
// casual escapes, not a boundary (see docs/security.md). A script or test the
// worker may run can do anything its uid can; the unprivileged worker user
// and the sandbox are what bound that.
type Policy struct {
	// Allow lists command rules. A rule is space-separated words matched
	// against the first words of one simple command: each word is a
	// path.Match glob over one argument, "*" matches any one argument and
	// "{script}" matches a regular file inside the workspace (a repository
	// script). Further arguments are free but still checked: as paths, and
	// for the commands the check knows (cmdSpecs) option by option, with
	// their scripts (sed, awk, jq) read too. A one-word rule ("mise") lets
	// that program run with any arguments: the toolchains of the repository,
	// the verification's programs and worker_policy.allow_commands. Note that
	// "*", or a rule for an interpreter, lets the worker run any code its uid
	// can.
	// Examples: "ls", "git status", "go test", "sh {script}".
	Allow []string `json:"allow"`
	// Commands are whole command lines allowed exactly as written (after
	// trimming), such as the task's verification command: zerg runs it
	// itself anyway.
	Commands []string `json:"commands,omitempty"`
	// Deny are programs never allowed, in either mode, on top of zerg's own
	// list of what reaches outside (worker_policy.deny_commands). Like that
	// list, they win over every allow rule.
	Deny []string `json:"deny,omitempty"`
	// Sandboxed is sandbox mode: the sandbox is the boundary for commands,
	// so a command runs unless it reaches outside (the network, the
	// repository's remote, paths outside the workspace, other processes,
	// the environment's credentials, the user's Claude settings, listeners
	// on every interface). A courtesy: the model learns at once why such a
	// call cannot work; the kernel enforces it either way.
	Sandboxed bool `json:"sandboxed,omitempty"`
	// Scratch are directories the worker's commands may read and write as
	// their own, outside the workspace: its TMPDIR under the attempt dir.
	Scratch []string `json:"scratch,omitempty"`
	// SharedTmp is the machine's temporary directory (/tmp) in subprocess
	// mode: the worker's commands may make entries there and use those
	// that are its own (see sharedTmpOK), and read Claude Code's task
	// output files under it.
	SharedTmp string `json:"shared_tmp,omitempty"`
	// Unrestricted skips the Bash check (tests of the driver only).
	Unrestricted bool `json:"unrestricted,omitempty"`
}

func (b Policy) Validate() error {
	for _, r := range b.Allow {
		words := strings.Fields(r)
		if len(words) == 0 {
			return fmt.Errorf("empty bash rule")
		}
		for _, w := range words {
			if _, err := path.Match(w, ""); err != nil {
				return fmt.Errorf("bash rule %q: bad pattern %q", r, w)
			}
		}
	}
	for _, c := range b.Commands {
		if strings.TrimSpace(c) == "" {
			return fmt.Errorf("empty bash command")
		}
	}
	for _, d := range b.Deny {
		if d == "" || strings.ContainsAny(d, "/ \t\n") {
			return fmt.Errorf("denied program %q is not a program name", d)
		}
	}
	for _, d := range b.Scratch {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("scratch dir %q is not an absolute path", d)
		}
	}
	if b.SharedTmp != "" && (!filepath.IsAbs(b.SharedTmp) || filepath.Clean(b.SharedTmp) == "/") {
		return fmt.Errorf("shared tmp %q is not an absolute directory", b.SharedTmp)
	}
	return nil
}

// DefaultAllow is the command set every worker gets: reading and
// comparing files (sed too: its scripts are checked), simple file management
// inside the workspace, local git (the commands that write refs or the
// work tree only when no repository hook can run, see gitHooksSafe), and
// running a repository script with sh or bash (or directly).
func DefaultAllow() []string {
	out := strings.Fields(`ls cat head tail wc sort uniq cut tr diff cmp comm sed grep egrep fgrep find file stat du nl tac rev
		md5sum sha256sum tree xxd hexdump od column paste fold strings jq echo printf true false test \[ pwd date id
		whoami uname basename dirname realpath readlink seq sleep which type mkdir touch cp mv rm rmdir tee chmod`)
	for _, sub := range strings.Fields(gitReadOnlyCmds + ` reflog add commit checkout switch restore reset stash rebase merge
		cherry-pick revert mv rm init clean apply branch tag notes`) {
		out = append(out, "git "+sub)
	}
	return append(out, "sh {script}", "bash {script}", "{script}")
}

// toolchainRules are the rules a toolchain gets when the task's verification
// command uses it (keyed by the command names that select it).
var toolchainRules = []struct {
	names []string
	rules []string
}{
	{[]string{"go", "gofmt"}, []string{"go build", "go test", "go vet", "go run", "go fmt", "go list", "go version", "gofmt"}},
	{[]string{"npm", "node", "npx"}, []string{"npm test", "npm run", "node {script}"}},
	{[]string{"python", "python3", "pytest"}, []string{"python {script}", "python3 {script}", "python -m pytest", "python3 -m pytest", "python -m unittest", "python3 -m unittest", "pytest"}},
	{[]string{"make"}, []string{"make"}},
	{[]string{"cargo"}, []string{"cargo build", "cargo test", "cargo check", "cargo fmt", "cargo clippy"}},
}

// ToolchainRules returns the Bash rules for the toolchains a command line
// uses (go, npm/node, python/pytest, make, cargo), so a worker may run the
// same tools as its verification command. An unparsable line yields none.
func ToolchainRules(commandLine string) []string {
	cmds, err := parseBash(commandLine, 0)
	if err != nil {
		return nil
	}
	var out []string
	for _, c := range cmds {
		words := innerWords(c.words)
		if len(words) == 0 {
			continue
		}
		name := filepath.Base(words[0].lit)
		for _, tc := range toolchainRules {
			if slices.Contains(tc.names, name) {
				out = union(out, tc.rules)
			}
		}
	}
	return out
}

// CommandPrograms returns the programs a command line runs (the task's
// verification command): each may then run with any arguments. Wrappers
// (time, env, timeout …) are looked through; shell builtins, scripts named
// by a path, and programs that reach outside (curl, ssh …) are left out:
// the line itself stays allowed as it is (Policy.Commands), the
// programs in it never. An unparsable line yields none.
func CommandPrograms(commandLine string) []string {
	cmds, err := parseBash(commandLine, 0)
	if err != nil {
		return nil
	}
	var out []string
	for _, c := range cmds {
		words := innerWords(c.words)
		if len(words) == 0 || words[0].dynamic || words[0].lit == "" || strings.ContainsAny(words[0].lit, `*?[\`) {
			continue // a rule is a pattern: a program named by one would allow others
		}
		name := words[0].lit
		if strings.Contains(name, "/") || shellBuiltins[name] || pureCommands[name] || reachCommand(name, words[1:]) != nil || bashDenied[name] != "" {
			continue
		}
		if u, ok, _ := unwrap(name, words[1:]); ok && !shells[name] || u.script != nil {
			continue // a wrapper this check does not look through
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// innerWords returns the command the wrappers subprocess mode looks through
// (time, env, timeout …) run: words itself when it is no such wrapper.
func innerWords(words []bashWord) []bashWord {
	for depth := 0; len(words) > 0 && depth < maxBashDepth; depth++ {
		if words[0].dynamic || !strictWrappers[words[0].lit] {
			return words
		}
		u, ok, err := unwrap(words[0].lit, words[1:])
		if !ok || err != nil || u.script != nil {
			return words
		}
		words = u.words
	}
	return words
}

// shellBuiltins are never programs a rule names.
var shellBuiltins = set("cd exit return shift : wait read")

// bashDenied are commands never allowed in subprocess mode, whatever the
// rules say, on top of those that reach outside (reachCommand).
var bashDenied = whyOf(map[string]string{
	"privilege change":              `sudo su doas pkexec runuser setpriv chroot unshare nsenter capsh`,
	"an environment dump or change": `env printenv set export declare typeset compgen unset local readonly shopt alias`,
	"it runs a command the policy cannot see": `source . xargs watch script stdbuf trap coproc parallel flock strace
		ltrace valgrind perf gdb chrt taskset busybox toybox unbuffer fakeroot caffeinate`,
	"it changes the system": `chown chgrp mount umount crontab at systemctl service reboot shutdown`,
})

// bashDeniedArgs are arguments that deny a command wherever they appear
// (with a trailing "*", by prefix: options with glued values): git's
// option-borne command execution and repositories elsewhere, npm's
// publishing and config, find's writes and link following.
var bashDeniedArgs = map[string][]string{
	"git": {"--ext-diff", "--textconv", "--config-env*", "--exec-path*", "--upload-pack*", "--receive-pack*", "-O*",
		"--open-files-in-pager*", "--output*", "--git-dir*", "--work-tree*"},
	"npm":   {"publish", "login", "logout", "adduser", "config", "token", "owner", "access", "exec", "x", "set", "env"},
	"go":    {"env", "-toolexec*", "-exec*"},
	"find":  {"-fprint*", "-fls*", "-delete*", "-L*", "-follow*", "-files0-from*"},
	"sort":  {"--compress-program*"},
	"cargo": {"--config*"},
}

// pureCommands open no file named by an argument, so their arguments are
// not path-checked and may be computed by a (quoted) command substitution;
// the directories a pattern lists are still checked, and so are test's file
// operands. date is not one: date -f FILE prints the lines of FILE.
var pureCommands = set("echo printf true false test [ pwd id whoami uname basename dirname seq sleep type")

// mutatingCommands change files named by their arguments: every argument must
// resolve inside the workspace (not a read dir) and may not be a glob, but
// chmod's (each match is checked).
var mutatingCommands = set("mkdir touch cp mv rm rmdir tee chmod")

// dangerousEnv are variables a command prefix may not set: they change what
// runs (PATH, LD_*, BASH_ENV, …) or where git looks.
func dangerousEnv(name string) bool {
	switch name {
	case "PATH", "ENV", "BASH_ENV", "IFS", "CDPATH", "HOME", "SHELL", "PS4", "SHELLOPTS", "BASHOPTS",
		"PROMPT_COMMAND", "GLOBIGNORE", "NODE_OPTIONS", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME",
		"PERL5OPT", "PERL5LIB", "RUBYOPT", "GCONV_PATH", "LESSOPEN", "PAGER", "EDITOR", "VISUAL", "BROWSER",
		"GOFLAGS", "CC", "CXX", "TMPDIR", "XDG_CONFIG_HOME", "NODE_PATH",
		// They change how the commands this check parses read their
		// arguments, or add options to them.
		"POSIXLY_CORRECT", "TAR_OPTIONS", "GREP_OPTIONS", "GZIP", "BZIP2", "XZ_OPT", "ZSTD_CLEVEL", "AWKPATH", "AWKLIBPATH",
		"JQ_LIBRARY_PATH", "SIMPLE_BACKUP_SUFFIX", "VERSION_CONTROL", "TAPE", "MAKEFLAGS", "MFLAGS", "GOENV", "GOTOOLCHAIN",
		// zsh's arrays tied to PATH, CDPATH … (Claude Code runs its Bash
		// tool with zsh when SHELL names no bash and zsh is there)
		"path", "cdpath", "fpath", "manpath", "module_path", "mailpath", "fignore", "psvar", "watch":
		return true
	}
	return hasPrefix(name, "LD_", "DYLD_", "GIT_", "BASH_FUNC_", "NPM_CONFIG_", "npm_config_", "CLAUDE", "ANTHROPIC", "ZERG")
}

// shellVariable reports whether the shell gives a meaning to the variable
// name: bash's own (CDPATH says where cd goes, IFS how words split, PATH
// where programs are found) and zsh's (Claude Code runs its Bash tool with
// zsh when it finds one and SHELL names no bash; path and cdpath are PATH
// and CDPATH there), and those dangerousEnv names. A for loop over one, or
// printf -v into one, would change how the rest of the line runs in ways
// this check does not follow.
func shellVariable(name string) bool {
	return dangerousEnv(name) || shellVariables[name] || hasPrefix(name, "LC_", "BASH", "HIST", "COMP", "ZSH", "READLINE")
}

var shellVariables = set(`OLDPWD PWD FIGNORE EXECIGNORE LANG LANGUAGE TIMEFORMAT FUNCNEST OPTIND OPTARG REPLY MAIL MAILPATH
	MAILCHECK TMOUT PS0 PS1 PS2 PS3 INPUTRC ZDOTDIR NULLCMD READNULLCMD WORDCHARS`)

// pathListEnv are variables that only add directories to a search path
// (imports of the worker's own code): allowed when every directory is one
// the worker may read.
var pathListEnv = set("PYTHONPATH NODE_PATH")

// stdBinDirs are where an absolute command name may point.
var stdBinDirs = []string{"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"}

// specialPaths may be named by any command although they are outside the
// workspace. They are compared before symlinks are resolved (/dev/stdout
// is a link into /proc).
var specialPaths = []string{"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/zero", "/dev/urandom", "/dev/random"}

const maxBashCommand = 64 << 10

// Decision is the verdict on one command line: allowed or not, and why
// (internal/policy turns it into the hook's decision).
type Decision struct {
	Allow  bool
	Reason string
}

func deny(format string, a ...any) Decision {
	return Decision{Reason: "denied: " + textx.OneLine(fmt.Sprintf(format, a...))}
}

// Decide judges the command line cmd the Bash tool would run in the
// directory cwd. scope gives the directories it is judged against; it is
// asked for only once the line is neither unrestricted, nor the task's own
// command, nor refused on its face.
func (p *Policy) Decide(cwd, cmd string, scope func() (Scope, error)) Decision {
	if strings.TrimSpace(cmd) == "" {
		return deny("Bash: no command in tool_input")
	}
	show := "`" + textx.Clip(textx.OneLine(cmd), 200) + "`"
	if p.Unrestricted {
		return Decision{Allow: true, Reason: "Bash " + show + ": unrestricted"}
	}
	if slices.ContainsFunc(p.Commands, func(c string) bool { return strings.TrimSpace(c) == strings.TrimSpace(cmd) }) {
		return Decision{Allow: true, Reason: "Bash " + show + ": the task's own command"}
	}
	if len(cmd) > maxBashCommand {
		return deny("Bash: command longer than %d bytes", maxBashCommand)
	}
	if anyInterfaceRE.MatchString(cmd) {
		return deny("Bash %s: it binds to every network interface (0.0.0.0 or ::); bind to 127.0.0.1", show)
	}
	sc, err := scope()
	if err != nil {
		return deny("Bash %s: %v", show, err)
	}
	if cwd == "" || !filepath.IsAbs(cwd) {
		return deny("Bash %s: no absolute cwd", show)
	}
	if p.Sandboxed {
		return p.decideBashSandboxed(sc, cwd, cmd, show)
	}
	shellCwd := cwd
	cwd, err = resolve.Path(filepath.Clean(cwd))
	if err != nil || !(within(cwd, sc.Workspace) || sc.ownDir(cwd) || (sc.SharedTmp != "" && cwd == sc.SharedTmp)) {
		return deny("Bash %s: the shell's directory %s is outside the workspace", show, shellCwd)
	}
	cmds, err := parseBash(cmd, 0)
	if err != nil {
		return deny("Bash %s: cannot be checked (%v); use simple commands without variables", show, err)
	}
	ck := &bashChecker{p: p, sc: sc, shellDirs: shellDirs{cwds: []string{cwd}}, makesLinks: makesLinks(cmds, 0)}
	if err := ck.walk(ck, cmds); err != nil {
		return deny("Bash %s: %v", show, err)
	}
	return Decision{Allow: true, Reason: "Bash " + show + ": allowed"}
}

// shellDirs are the directories the shell may be in as the commands of a
// line run in order, in either mode. A cd adds its target: it may or may
// not take effect, depending on subshells and pipelines, so relative paths
// must be fine from all of them. After `cd DIR &&` the commands of the &&
// chain run in DIR only (had the cd failed, they would not run); once the
// chain ends the shell may be in any directory the chain went through.
// lenient (sandbox mode): a cd somewhere computed, or too many, lose track
// (lost) instead of refusing the line; relative paths are then not judged.
type shellDirs struct {
	cwds    []string
	chain   []string // the directories before the current && chain's cd's
	lost    bool
	lenient bool
}

// dirJudge is what a mode checks: one command, and the directories a cd
// (or a -C option, named what in a refusal) to dir may lead to from every
// directory in cwds.
type dirJudge interface {
	command(c *bashCmd, depth int) error
	dirsOf(what, dir string) ([]string, error)
}

const maxCwds = 16

// walk checks a line's commands in order, following its cd's.
func (d *shellDirs) walk(j dirJudge, cmds []*bashCmd) error {
	for _, c := range cmds {
		if c.andNext && len(c.words) > 0 && !c.words[0].dynamic && c.words[0].lit == "cd" && len(c.assigns) == 0 && len(c.redirs) == 0 {
			next, err := d.cdTargets(j, c.words[1:])
			if err != nil {
				return err
			}
			if next != nil {
				d.chain = union(d.chain, d.cwds)
				d.cwds = next
			}
			continue
		}
		if err := j.command(c, 0); err != nil {
			return err
		}
		if !c.andNext && d.chain != nil {
			next := d.cwds
			d.cwds, d.chain = d.chain, nil
			if err := d.add(next); err != nil {
				return err
			}
		}
	}
	return nil
}

func union(a, b []string) []string {
	for _, x := range b {
		if !slices.Contains(a, x) {
			a = append(a, x)
		}
	}
	return a
}

// add adds directories the shell may be in.
func (d *shellDirs) add(next []string) error {
	d.cwds = union(d.cwds, next)
	if len(d.cwds) > maxCwds {
		if !d.lenient {
			return errors.New("too many cd")
		}
		d.lost, d.cwds = true, d.cwds[:1]
	}
	return nil
}

// cd follows a cd (or pushd) that is no && chain's.
func (d *shellDirs) cd(j dirJudge, args []bashWord) error {
	next, err := d.cdTargets(j, args)
	if err != nil || next == nil {
		return err
	}
	return d.add(next)
}

// cdTargets resolves where cd goes from every directory the shell may be
// in; nil (and lost set) when that is computed, in lenient mode.
func (d *shellDirs) cdTargets(j dirJudge, args []bashWord) ([]string, error) {
	for len(args) > 0 && (args[0].lit == "-P" || args[0].lit == "-L" || args[0].lit == "--" || args[0].lit == "-e") {
		args = args[1:]
	}
	var a bashWord
	if len(args) > 0 {
		a = args[0]
	}
	switch {
	case a.tilde:
		return nil, fmt.Errorf("cd %s: a home directory", a.lit)
	case d.lenient && (len(args) == 0 || a.dynamic || a.lit == "-"):
		d.lost = true
		return nil, nil
	case d.lenient:
	case len(args) != 1 || a.lit == "-":
		return nil, errors.New("cd needs exactly one directory inside the workspace")
	case a.dynamic || a.glob >= 0 || a.lit == "":
		return nil, fmt.Errorf("cd to a computed directory %q", a.lit)
	}
	return j.dirsOf("cd "+a.lit, a.lit)
}

// bashChecker checks parsed commands in order (subprocess mode), from
// every directory the shell may be in (shellDirs). makesLinks says the command line makes symbolic
// links: a path that goes through a component which does not exist yet may
// then go through a new link, so it is refused.
type bashChecker struct {
	p  *Policy
	sc Scope
	shellDirs
	makesLinks  bool
	globMatches int
}

func (ck *bashChecker) command(c *bashCmd, depth int) error {
	if depth > maxBashDepth {
		return errors.New("nested too deeply")
	}
	for _, a := range c.assigns {
		if err := ck.assignment(a); err != nil {
			return err
		}
	}
	for _, r := range c.redirs {
		if err := ck.redirect(r); err != nil {
			return err
		}
	}
	if len(c.words) == 0 {
		return nil
	}
	w0 := c.words[0]
	if w0.dynamic || w0.glob >= 0 || w0.tilde || w0.lit == "" {
		return fmt.Errorf("the command name %q is computed at run time", w0.lit)
	}
	name := w0.lit
	script := false
	if strings.Contains(name, "/") {
		switch {
		case filepath.IsAbs(name) && slices.Contains(stdBinDirs, filepath.Dir(filepath.Clean(name))):
			name = filepath.Base(name)
		default:
			if err := ck.script(w0); err != nil {
				if filepath.IsAbs(name) {
					return fmt.Errorf("%s is outside the workspace", name)
				}
				return err
			}
			script = true
		}
	}
	args := c.words[1:]
	if !script {
		if err := ck.p.deniedProgram(name); err != nil {
			return err
		}
		if err := reachCommand(name, args); err != nil {
			return err
		}
		if u, ok, err := unwrap(name, args); ok {
			return ck.wrapper(name, c, u, err, depth)
		}
		if why, ok := bashDenied[name]; ok {
			return fmt.Errorf("%s is not allowed (%s)", name, why)
		}
		if err := deniedArgs(name, args); err != nil {
			return err
		}
	}
	if name == "cd" && !script {
		return ck.cd(ck, args)
	}
	if ck.inTmpRoot() && (script || !tmpRootCommands[name]) {
		return fmt.Errorf("%s in %s itself: only commands that name their files run there (mkdir, rm, cp, cat …); cd into a directory of your own first", name, ck.sc.SharedTmp)
	}
	if !ck.allowed(name, script, c.words) {
		return fmt.Errorf("%s is not an allowed command", describe(c.words))
	}
	if !script && !defaultPrograms[name] && ck.inSharedTmp() {
		return fmt.Errorf("%s in a directory of the shared %s: run it in the workspace", name, ck.sc.SharedTmp)
	}
	if !script {
		if u, ok, err := runner(name, args); ok {
			return ck.runner(name, c, u, err, depth)
		}
	}
	if name == "printf" && !script && len(args) > 0 && (args[0].dynamic || strings.HasPrefix(args[0].lit, "-v")) {
		// printf -v NAME sets a variable (CDPATH, IFS …) the rest of the
		// line would run under
		return fmt.Errorf("printf %s is not allowed (printf -v sets a shell variable); print to standard output", args[0].raw)
	}
	if pureCommands[name] && !script {
		return ck.pureArgs(name, args)
	}
	mutating := mutatingCommands[name] && !script
	expanded, err := ck.expandArgs(args, mutating && name != "chmod", name == "git" && !script)
	if err != nil {
		return err
	}
	if !script {
		// A pattern may have expanded to a word the deny lists know.
		if err := deniedArgs(name, expanded); err != nil {
			return err
		}
	}
	switch {
	case script:
		return ck.rawArgs(expanded, false)
	case cmdSpecs[name] != nil:
		return ck.specArgs(name, expanded, mutating)
	case cmdChecks[name] != nil:
		return cmdChecks[name](ck, expanded)
	}
	return ck.rawArgs(expanded, mutating)
}

// assignment checks a NAME=value prefix: no variable that changes what
// runs, and a value that names no file the worker may not read.
func (ck *bashChecker) assignment(a bashWord) error {
	name := a.raw[:strings.IndexByte(a.raw, '=')]
	name = strings.TrimSuffix(name, "+")
	val := a.lit[strings.IndexByte(a.lit, '=')+1:]
	if a.tilde {
		return fmt.Errorf("%s names a home directory", a.lit)
	}
	if pathListEnv[name] && !a.dynamic && val != "" {
		for _, d := range strings.Split(val, ":") {
			if d == "" {
				return fmt.Errorf("setting %s with an empty entry (the current directory) is not allowed", name)
			}
			if err := ck.checkPath(d, false); err != nil {
				return fmt.Errorf("setting %s: %v", name, err)
			}
		}
		return nil
	}
	if dangerousEnv(name) {
		return fmt.Errorf("setting %s is not allowed", name)
	}
	if !a.dynamic && val != "" {
		return ck.plainWord(val, false)
	}
	return nil
}

// wrapper checks a command a wrapper runs (time, env, nice …, sh -c,
// eval). Subprocess mode looks through the wrappers that only change how a
// command runs (strictWrappers) and shells given a command line; the others
// are refused, after their command is judged for what it reaches (so
// `xargs curl` says why).
func (ck *bashChecker) wrapper(name string, c *bashCmd, u unwrapped, err error, depth int) error {
	if err != nil {
		return err
	}
	if !strictWrappers[name] && !shells[name] {
		if err := ck.reachOnly(u, depth); err != nil {
			return err
		}
		why := bashDenied[name]
		if why == "" {
			why = "it runs a command the policy cannot see"
		}
		return fmt.Errorf("%s is not allowed (%s)", name, why)
	}
	if u.script != nil {
		if u.script.dynamic {
			return fmt.Errorf("%s with a computed command", name)
		}
		inner, err := parseBash(u.script.lit, depth+1)
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		makes := ck.makesLinks
		ck.makesLinks = ck.makesLinks || makesLinks(inner, depth+1)
		defer func() { ck.makesLinks = makes }()
		for _, ic := range inner {
			if err := ck.command(ic, depth+1); err != nil {
				return err
			}
		}
		if shells[name] {
			// sh -c 'line' NAME ARGS: the positional parameters.
			for i, a := range c.words {
				if a.raw == u.script.raw && i+1 < len(c.words) {
					return ck.rawArgs(c.words[i+1:], false)
				}
			}
		}
		return nil
	}
	if len(u.dirs) > 0 {
		return fmt.Errorf("%s with a directory to run in is not allowed; cd first", name)
	}
	if err := ck.checkAll(u.reads, false); err != nil {
		return err
	}
	if err := ck.checkAll(u.writes, true); err != nil {
		return err
	}
	if u.lookup {
		return nil
	}
	if len(u.words) == 0 {
		if name == "exec" || name == "time" {
			return nil // exec 3<file: redirections only
		}
		return fmt.Errorf("%s without a command", name)
	}
	inner := &bashCmd{assigns: append(slices.Clone(c.assigns), u.assigns...), words: u.words}
	return ck.command(inner, depth+1)
}

// runner checks what a package tool runs: a program from PATH or the
// project's environment (uv run, poetry run, mise exec …) as a command of
// its own; a package fetched and run (npx, uvx …) for what it reaches, its
// arguments as paths.
func (ck *bashChecker) runner(name string, c *bashCmd, u unwrapped, err error, depth int) error {
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	args := c.words[1:]
	if u.script != nil {
		if err := ck.reachOnly(u, depth); err != nil {
			return err
		}
		return fmt.Errorf("%s with a command line to run is not allowed; run the command itself", name)
	}
	own := args[:len(args)-len(u.words)]
	if err := ck.rawArgs(own, false); err != nil {
		return err
	}
	if err := ck.checkAll(u.reads, false); err != nil {
		return err
	}
	if len(u.words) == 0 {
		return nil
	}
	if u.pkg {
		if err := ck.reachOnly(u, depth); err != nil {
			return err
		}
		return ck.rawArgs(u.words, false)
	}
	ck2, err := ck.inDirs(name+" ", u.dirs)
	if err != nil {
		return err
	}
	words := u.words
	if !words[0].dynamic && (strings.HasSuffix(words[0].lit, ".py") || strings.HasSuffix(words[0].lit, ".pyw")) && name == "uv" {
		// uv run script.py runs python on it
		words = append([]bashWord{{raw: "python", lit: "python", glob: -1}}, words...)
	}
	return ck2.command(&bashCmd{assigns: c.assigns, words: words}, depth+1)
}

// reachOnly judges what a wrapper or runner runs only for what it reaches,
// looking through wrappers, runners and shell strings as sandbox mode does:
// the check of a command subprocess mode refuses anyway, for a better
// reason. The judge knows no directory the shell is in, so it judges no
// path.
func (ck *bashChecker) reachOnly(u unwrapped, depth int) error {
	rc := &reachChecker{p: ck.p, sc: ck.sc, shellDirs: shellDirs{lenient: true}}
	return rc.unwrapped(u, depth)
}

func deniedArgs(name string, args []bashWord) error {
	for _, a := range args {
		for _, d := range bashDeniedArgs[name] {
			if pre, ok := strings.CutSuffix(d, "*"); a.lit == d || ok && strings.HasPrefix(a.lit, pre) {
				return fmt.Errorf("%s %s is not allowed", name, a.lit)
			}
		}
	}
	return nil
}

func describe(words []bashWord) string {
	s := words[0].lit
	if len(words) > 1 && !strings.HasPrefix(words[1].lit, "-") && !words[1].dynamic {
		s += " " + words[1].lit
	}
	return textx.OneLine(s)
}

// defaultPrograms are the default commands (DefaultAllow): they open
// only the files they name. Other programs (a toolchain, an interpreter)
// also read configuration they find in their directory and its parents.
var defaultPrograms = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range DefaultAllow() {
		w := strings.Fields(r)[0]
		if w == `\[` {
			w = "["
		}
		if !strings.HasPrefix(w, "{") && w != "sh" && w != "bash" {
			m[w] = true
		}
	}
	return m
}()

// allowed matches the command against the rules. git's global options
// (-C DIR, --no-pager …) before its subcommand are skipped first.
func (ck *bashChecker) allowed(name string, script bool, words []bashWord) bool {
	if name == "git" && !script {
		words = gitRuleWords(words)
	}
	for _, r := range ck.p.Allow {
		rw := strings.Fields(r)
		if len(rw) > len(words) {
			continue
		}
		ok := true
		for i, pat := range rw {
			w := words[i]
			switch {
			case i == 0 && pat == "{script}":
				ok = script
			case i == 0:
				m, _ := path.Match(pat, name)
				ok = !script && m
			case pat == "{script}":
				ok = ck.script(w) == nil
			case pat == "*":
				ok = true
			default:
				m, _ := path.Match(pat, w.lit)
				ok = !w.dynamic && m
			}
			if !ok {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

var gitPlainGlobals = set(`--no-pager -P --no-optional-locks --literal-pathspecs --glob-pathspecs --noglob-pathspecs
	--icase-pathspecs --no-replace-objects`)

// gitRuleWords drops git's harmless global options, so "git -C sub
// status" matches the rule "git status".
func gitRuleWords(words []bashWord) []bashWord {
	out := []bashWord{words[0]}
	i := 1
	for i < len(words) {
		switch a := words[i].lit; {
		case a == "-C" && i+1 < len(words):
			i += 2
		case gitPlainGlobals[a]:
			i++
		default:
			return append(out, words[i:]...)
		}
	}
	return out
}

// pureArgs checks the arguments of a command that opens no file named by
// them. A command substitution must be quoted: unquoted, its output is split
// and expanded as a pattern, which lists directories. A pattern is expanded
// to check the directories the shell lists; test's file operands are paths.
func (ck *bashChecker) pureArgs(name string, args []bashWord) error {
	for _, a := range args {
		if a.split {
			return fmt.Errorf("the unquoted command substitution in %s is split and expanded as a pattern at run time; quote it", a.raw)
		}
		if a.glob >= 0 {
			if _, err := ck.expandWord(a); err != nil {
				return err
			}
		}
	}
	if name == "test" || name == "[" {
		return ck.testArgs(name, args)
	}
	return nil
}

var testStringOps = set("-n -z = == != < > -eq -ne -lt -le -gt -ge ! ( ) -o -a")

// testArgs checks test's and ['s file operands: every static word that is
// not an operator is checked as a path (a string compared is harmless
// there), and a computed word may not stand where a file operand or an
// operator naming files could.
func (ck *bashChecker) testArgs(name string, args []bashWord) error {
	if name == "[" && len(args) > 0 && args[len(args)-1].lit == "]" && !args[len(args)-1].dynamic {
		args = args[:len(args)-1]
	}
	fileOp := func(s string) bool {
		return len(s) == 2 && s[0] == '-' && strings.IndexByte("abcdefghkprsuwxGLNOS", s[1]) >= 0
	}
	binFileOp := func(s string) bool { return s == "-nt" || s == "-ot" || s == "-ef" }
	for i, a := range args {
		if a.dynamic {
			prevDyn := i > 0 && args[i-1].dynamic
			afterFile := i > 0 && !args[i-1].dynamic && (fileOp(args[i-1].lit) || binFileOp(args[i-1].lit))
			beforeBin := i+1 < len(args) && !args[i+1].dynamic && binFileOp(args[i+1].lit)
			if prevDyn || afterFile || beforeBin {
				return fmt.Errorf("%s with a file operand computed at run time", name)
			}
			continue
		}
		if fileOp(a.lit) || binFileOp(a.lit) || testStringOps[a.lit] || a.lit == "-t" {
			continue
		}
		if a.glob >= 0 {
			m, err := ck.expandWord(a)
			if err != nil {
				return err
			}
			for _, s := range m {
				if err := ck.checkPath(s, false); err != nil {
					return err
				}
			}
			continue
		}
		if err := ck.plainWord(a.lit, false); err != nil {
			return err
		}
	}
	return nil
}

// expandArgs returns the arguments as the command gets them: each pattern
// replaced by its matches (see expandWord). A computed argument is refused,
// and so is a pattern as a file to change.
func (ck *bashChecker) expandArgs(args []bashWord, mutating, keepComputed bool) ([]bashWord, error) {
	var out []bashWord
	for _, a := range args {
		switch {
		case a.dynamic && keepComputed:
			// the command's own check knows where a computed word is text
			out = append(out, a)
		case a.dynamic:
			return nil, fmt.Errorf("the argument %q is computed at run time", a.lit)
		case a.tilde:
			return nil, fmt.Errorf("%s names a home directory", a.lit)
		case a.glob >= 0 && mutating:
			return nil, fmt.Errorf("a pattern (%s) as a file to change", a.lit)
		case a.glob >= 0:
			m, err := ck.expandWord(a)
			if err != nil {
				return nil, err
			}
			for _, s := range m {
				out = append(out, bashWord{raw: a.raw, lit: s, glob: 0})
			}
		default:
			out = append(out, a)
		}
	}
	return out, nil
}

// rawArgs checks the arguments of a command whose options this check does
// not know: every word is a path (see rawWord), those after "--" plainly.
func (ck *bashChecker) rawArgs(args []bashWord, mutating bool) error {
	opts := true
	for _, a := range args {
		if a.dynamic {
			return fmt.Errorf("the argument %q is computed at run time", a.lit)
		}
		if a.tilde {
			return fmt.Errorf("%s names a home directory", a.lit)
		}
		if opts && a.lit == "--" {
			opts = false
			continue
		}
		var err error
		if opts {
			err = ck.rawWord(a.lit, mutating, true)
		} else {
			err = ck.plainWord(a.lit, mutating)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// maxClusterWord bounds a short-option word whose every suffix is checked.
const maxClusterWord = 1024

// rawWord checks every reading of a word as a path when the command's
// options are unknown: a short-option cluster may end in a glued value
// anywhere (-rfFILE), so every suffix after the dash and first letter is a
// path; a long option's value after "=" is one; a plain word is one, and so
// is what follows each "=", ":" or "," in it (NAME=/x, -I a:/x, x,/y).
// Words that are not meant as paths are harmless here: they resolve inside
// the workspace. With cluster false (find, go), a single-dash word is a name
// like a long option.
func (ck *bashChecker) rawWord(lit string, write, cluster bool) error {
	switch {
	case lit == "" || lit == "-" || lit == "--":
		return nil
	case strings.HasPrefix(lit, "--"):
		return ck.checkAll(afterSeps(lit[2:]), write)
	case strings.HasPrefix(lit, "-") && !cluster:
		return ck.checkAll(afterSeps(lit[1:]), write)
	case strings.HasPrefix(lit, "-"):
		if len(lit) > maxClusterWord {
			return fmt.Errorf("an option word longer than %d bytes", maxClusterWord)
		}
		var cands []string
		for k := 2; k < len(lit); k++ {
			cands = append(cands, lit[k:])
		}
		return ck.checkAll(cands, write)
	}
	return ck.plainWord(lit, write)
}

// plainWord checks a word that is not an option: itself, and what follows
// each "=", ":" or "," in it.
func (ck *bashChecker) plainWord(lit string, write bool) error {
	if lit == "" || lit == "-" {
		return nil
	}
	return ck.checkAll(append([]string{lit}, afterSeps(lit)...), write)
}

func afterSeps(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] == '=' || s[i] == ':' || s[i] == ',' {
			out = append(out, s[i+1:])
		}
	}
	return out
}

// checkAll checks each non-empty path (checkPath).
func (ck *bashChecker) checkAll(cands []string, write bool) error {
	for _, c := range cands {
		if c == "" {
			continue
		}
		if err := ck.checkPath(c, write); err != nil {
			return err
		}
	}
	return nil
}

// checkPath resolves p from every possible cwd: it must be a special device,
// or inside the workspace (or, when only read, a read dir), and never a
// protected path. A file written may not have a name starting with "-": a
// later pattern would hand it to a command as an option.
func (ck *bashChecker) checkPath(p string, write bool) error {
	return ck.checkPathFrom(ck.cwds, p, write)
}

func (ck *bashChecker) checkPathFrom(cwds []string, p string, write bool) error {
	if strings.HasPrefix(p, "~") {
		return fmt.Errorf("%s names a home directory", p)
	}
	if filepath.IsAbs(p) && slices.Contains(specialPaths, filepath.Clean(p)) {
		return nil
	}
	if write {
		for _, seg := range strings.Split(p, "/") {
			if strings.HasPrefix(seg, "-") && seg != "-" {
				return fmt.Errorf("%s: a file name starting with - would be read as an option", p)
			}
		}
	}
	for _, cwd := range cwds {
		all, assumed, err := resolve.From(cwd, p)
		if err != nil {
			return fmt.Errorf("%s: %v", p, err)
		}
		if assumed && ck.makesLinks {
			return fmt.Errorf("%s does not exist yet and this command line makes symbolic links; run the commands one at a time", p)
		}
		for _, resolved := range all {
			if ck.sc.InScratch(resolved) || ck.sc.sharedTmpOK(resolved) || (!write && ck.sc.claudeTaskOutput(resolved)) {
				continue
			}
			if ck.sc.IsProtected(resolved) {
				return fmt.Errorf("%s is a protected file", p)
			}
			if rel, ok := ck.sc.Rel(resolved); ok {
				why := ck.sc.NeverWritten(rel)
				if write {
					why = ck.sc.WriteProtected(rel)
				}
				if why != "" {
					return fmt.Errorf("%s is %s", p, why)
				}
				continue
			}
			if resolved == ck.sc.Workspace || (!write && ck.sc.Readable(resolved)) {
				continue
			}
			return fmt.Errorf("%s is outside the workspace", p)
		}
	}
	return nil
}

func (ck *bashChecker) redirect(r bashRedir) error {
	switch r.op {
	case "<<", "<<-", "<<<":
		return nil // text for stdin, not a file
	case ">&", "<&":
		if isFD(r.target.lit) && !r.target.dynamic {
			return nil
		}
		if r.op == "<&" {
			return fmt.Errorf("redirection %s%s", r.op, r.target.lit)
		}
	}
	t := r.target
	if strings.HasPrefix(t.raw, "!") {
		// zsh reads >! and >>! as redirections that overwrite: the file
		// is what follows, where bash writes a file named !…
		return fmt.Errorf("redirection %s%s: zsh reads %s! as a redirection of its own; drop the !", r.op, t.raw, r.op)
	}
	if t.dynamic || t.glob >= 0 || t.tilde {
		return fmt.Errorf("redirection to a computed file %q", t.lit)
	}
	write := r.op != "<"
	if err := ck.checkPath(t.lit, write); err != nil {
		return fmt.Errorf("redirection: %v", err)
	}
	return nil
}

// isFD reports whether s names a file descriptor (or "-", closing one).
func isFD(s string) bool { return s == "-" || s != "" && strings.Trim(s, "0123456789") == "" }

// dirsOf resolves dir from every cwd as a directory the shell or a command
// works in: inside the workspace (or a scratch directory of the worker's
// own), not protected. Both readings of a ".." after a symlink are kept
// (bash's cd is logical, cd -P physical).
func (ck *bashChecker) dirsOf(what, dir string) ([]string, error) {
	var next []string
	for _, cwd := range ck.cwds {
		all, assumed, err := resolve.From(cwd, dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", what, err)
		}
		if assumed && ck.makesLinks {
			return nil, fmt.Errorf("%s: %s does not exist yet and this command line makes symbolic links", what, dir)
		}
		for _, resolved := range all {
			if !within(resolved, ck.sc.Workspace) && !ck.sc.ownDir(resolved) && (resolved != ck.sc.SharedTmp || ck.sc.SharedTmp == "") {
				return nil, fmt.Errorf("%s leaves the workspace", what)
			}
			if rel, ok := ck.sc.Rel(resolved); ok && ck.sc.NeverWritten(rel) != "" {
				return nil, fmt.Errorf("%s: %s", what, ck.sc.NeverWritten(rel))
			}
			if _, err := os.Lstat(resolved); err != nil && ck.makesLinks {
				return nil, fmt.Errorf("%s: %s does not exist yet and this command line makes symbolic links", what, dir)
			}
			next = append(next, resolved)
		}
	}
	return next, nil
}

// script checks that a word names a regular file inside the workspace (from
// every possible cwd, both readings), outside protected paths.
func (ck *bashChecker) script(w bashWord) error {
	if w.dynamic || w.glob >= 0 || w.tilde || w.lit == "" || strings.HasPrefix(w.lit, "-") {
		return fmt.Errorf("%q is not a script in the workspace", w.lit)
	}
	for _, cwd := range ck.cwds {
		all, _, err := resolve.From(cwd, w.lit)
		if err != nil {
			return fmt.Errorf("%s is not a script in the workspace", w.lit)
		}
		for _, resolved := range all {
			if ck.sc.InScratch(resolved) || ck.sc.sharedTmpOK(resolved) {
				// A program the worker built or wrote in its scratch
				// space, maybe earlier in this line.
				st, err := os.Lstat(resolved)
				switch {
				case err == nil && st.Mode().IsRegular():
					continue
				case errors.Is(err, os.ErrNotExist) && !ck.makesLinks:
					continue
				}
				return fmt.Errorf("%s is not a program in the worker's scratch space", w.lit)
			}
			rel, ok := ck.sc.Rel(resolved)
			if !ok || ck.sc.NeverWritten(rel) != "" {
				return fmt.Errorf("%s is not a script in the workspace", w.lit)
			}
			if st, err := os.Stat(resolved); err != nil || !st.Mode().IsRegular() {
				return fmt.Errorf("%s is not a script in the workspace", w.lit)
			}
		}
	}
	return nil
}

// makesLinks reports whether a command line makes symbolic (or hard) links:
// ln anywhere in it, sh -c lines included.
func makesLinks(cmds []*bashCmd, depth int) bool {
	for _, c := range cmds {
		if len(c.words) == 0 || c.words[0].dynamic {
			continue
		}
		name := filepath.Base(c.words[0].lit)
		if name == "ln" {
			return true
		}
		if name == "git" {
			if sub, _ := gitSubcommand(c.words[1:]); gitWritesTree[sub] {
				return true
			}
		}
		if (name == "sh" || name == "bash") && len(c.words) >= 3 && c.words[1].lit == "-c" && depth < maxBashDepth {
			if inner, err := parseBash(c.words[2].lit, 0); err == nil && makesLinks(inner, depth+1) {
				return true
			}
		}
	}
	return false
}
