package security

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// BashPolicy says which commands the Bash tool may run. The check works on
// the command string, before it runs: it is a guard against mistakes and
// casual escapes, not a boundary (see docs/security.md). A script or test the
// worker may run can do anything its uid can; the unprivileged worker user
// and the sandbox are what bound that.
type BashPolicy struct {
	// Allow lists command rules. A rule is space-separated words matched
	// against the first words of one simple command: each word is a
	// path.Match glob over one argument, "*" matches any one argument and
	// "{script}" matches a regular file inside the workspace (a repository
	// script). Further arguments are free but still checked: as paths, and
	// for the commands the check knows (cmdSpecs) option by option, with
	// their scripts (sed, awk, jq) read too. Note that "*", or a rule for an
	// interpreter, lets the worker run any code its uid can.
	// Examples: "ls", "git status", "go test", "sh {script}".
	Allow []string `json:"allow"`
	// Commands are whole command lines allowed exactly as written (after
	// trimming), such as the task's verification command: zerg runs it
	// itself anyway.
	Commands []string `json:"commands,omitempty"`
	// Unrestricted skips the Bash check (tests of the driver only).
	Unrestricted bool `json:"unrestricted,omitempty"`
}

func (b BashPolicy) validate() error {
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
	return nil
}

// DefaultBashAllow is the command set every worker gets: reading and
// comparing files (sed too: its scripts are checked), simple file management
// inside the workspace, read-only git, and running a repository script with
// sh or bash (or directly).
func DefaultBashAllow() []string {
	return []string{
		"ls", "cat", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "diff", "cmp", "comm", "sed",
		"grep", "egrep", "fgrep", "find", "file", "stat", "du", "nl", "tac", "rev", "md5sum", "sha256sum",
		"echo", "printf", "true", "false", "test", `\[`, "pwd", "date", "id", "whoami", "uname",
		"basename", "dirname", "realpath", "readlink", "seq", "sleep", "which",
		"mkdir", "touch", "cp", "mv", "rm", "rmdir", "tee", "chmod",
		"git status", "git diff", "git log", "git show", "git ls-files", "git rev-parse", "git blame", "git grep",
		"sh {script}", "bash {script}", "{script}",
	}
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
	cmds, err := parseBash(commandLine)
	if err != nil {
		return nil
	}
	var out []string
	for _, c := range cmds {
		if len(c.words) == 0 {
			continue
		}
		name := filepath.Base(c.words[0].lit)
		for _, tc := range toolchainRules {
			if slices.Contains(tc.names, name) {
				for _, r := range tc.rules {
					if !slices.Contains(out, r) {
						out = append(out, r)
					}
				}
			}
		}
	}
	return out
}

// bashDenied are commands never allowed, whatever the rules say.
var bashDenied = map[string]string{}

func init() {
	for why, names := range map[string][]string{
		"network access":                {"curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ftp", "sftp", "scp", "ssh", "rsync", "ssh-add", "ssh-agent", "ssh-keyscan"},
		"privilege change":              {"sudo", "su", "doas", "pkexec", "runuser", "setpriv", "chroot", "unshare", "nsenter", "capsh"},
		"an environment dump or change": {"env", "printenv", "set", "export", "declare", "typeset", "compgen", "unset", "local", "readonly", "shopt", "alias"},
		"it runs a command the policy cannot see": {"eval", "exec", "source", ".", "command", "builtin", "xargs", "nohup", "setsid",
			"timeout", "nice", "ionice", "time", "watch", "script", "stdbuf", "trap", "coproc", "parallel"},
		"it changes the system": {"chown", "chgrp", "mount", "umount", "crontab", "at", "systemctl", "service", "kill", "pkill", "killall", "reboot", "shutdown"},
	} {
		for _, n := range names {
			bashDenied[n] = why
		}
	}
}

// bashDeniedArgs are arguments that deny a command wherever they appear:
// git's remote, config and credential commands and its option-borne command
// execution, npm's publishing and config.
var bashDeniedArgs = map[string][]string{
	"git": {"push", "remote", "config", "credential", "fetch", "pull", "clone", "submodule", "daemon", "send-email",
		"request-pull", "ls-remote", "archive", "bundle", "filter-branch", "hook", "-c", "--ext-diff", "--textconv"},
	"npm": {"publish", "login", "logout", "adduser", "config", "token", "owner", "access", "exec", "x", "set", "env"},
	"go":  {"env", "-toolexec", "-exec"},
}

// bashDeniedPrefixes deny an argument by prefix (options with glued values).
var bashDeniedPrefixes = map[string][]string{
	"git":   {"--config-env", "--exec-path", "--upload-pack", "--receive-pack", "-O", "--open-files-in-pager", "--output", "--git-dir", "--work-tree"},
	"find":  {"-exec", "-ok", "-fprint", "-fls", "-delete", "-L", "-follow", "-files0-from"},
	"sort":  {"--compress-program"},
	"go":    {"-toolexec", "-exec"},
	"cargo": {"--config"},
}

// pureCommands open no file named by an argument, so their arguments are
// not path-checked and may be computed by a (quoted) command substitution;
// the directories a pattern lists are still checked, and so are test's file
// operands. date is not one: date -f FILE prints the lines of FILE.
var pureCommands = map[string]bool{
	"echo": true, "printf": true, "true": true, "false": true, "test": true, "[": true, "pwd": true,
	"id": true, "whoami": true, "uname": true, "basename": true, "dirname": true,
	"seq": true, "sleep": true,
}

// mutatingCommands change files named by their arguments: every argument must
// resolve inside the workspace (not a read dir) and may not be a glob.
var mutatingCommands = map[string]bool{
	"mkdir": true, "touch": true, "cp": true, "mv": true, "rm": true, "rmdir": true, "tee": true, "chmod": true,
}

// dangerousEnv are variables a command prefix may not set: they change what
// runs (PATH, LD_*, BASH_ENV, …) or where git looks.
func dangerousEnv(name string) bool {
	switch name {
	case "PATH", "ENV", "BASH_ENV", "IFS", "CDPATH", "HOME", "SHELL", "PS4", "SHELLOPTS", "BASHOPTS",
		"PROMPT_COMMAND", "GLOBIGNORE", "NODE_OPTIONS", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME",
		"PERL5OPT", "PERL5LIB", "RUBYOPT", "GCONV_PATH", "LESSOPEN", "PAGER", "EDITOR", "VISUAL", "BROWSER",
		"GOFLAGS", "CC", "CXX", "TMPDIR", "XDG_CONFIG_HOME",
		// They change how the commands this check parses read their
		// arguments, or add options to them.
		"POSIXLY_CORRECT", "TAR_OPTIONS", "GREP_OPTIONS", "GZIP", "BZIP2", "XZ_OPT", "ZSTD_CLEVEL", "AWKPATH", "AWKLIBPATH",
		"JQ_LIBRARY_PATH", "SIMPLE_BACKUP_SUFFIX", "VERSION_CONTROL", "TAPE", "MAKEFLAGS", "MFLAGS", "GOENV", "GOTOOLCHAIN":
		return true
	}
	for _, p := range []string{"LD_", "DYLD_", "GIT_", "BASH_FUNC_", "NPM_CONFIG_", "npm_config_", "CLAUDE", "ANTHROPIC", "ZERG"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// stdBinDirs are where an absolute command name may point.
var stdBinDirs = []string{"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"}

// specialPaths may be named by any command although they are outside the
// workspace. They are compared before symlinks are resolved (/dev/stdout
// is a link into /proc).
var specialPaths = []string{"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/zero", "/dev/urandom", "/dev/random"}

const maxBashCommand = 64 << 10

func (p *Policy) decideBash(in *HookInput, input map[string]any) Decision {
	cmd, _ := input["command"].(string)
	if strings.TrimSpace(cmd) == "" {
		return deny("", "Bash: no command in tool_input")
	}
	show := clipCommand(cmd)
	if p.Bash.Unrestricted {
		return Decision{Allow: true, Reason: "Bash " + show + ": unrestricted"}
	}
	if slices.ContainsFunc(p.Bash.Commands, func(c string) bool { return strings.TrimSpace(c) == strings.TrimSpace(cmd) }) {
		return Decision{Allow: true, Reason: "Bash " + show + ": the task's own command"}
	}
	if len(cmd) > maxBashCommand {
		return deny("", "Bash: command longer than %d bytes", maxBashCommand)
	}
	sc, err := p.scope()
	if err != nil {
		return deny("", "Bash %s: %v", show, err)
	}
	if in.Cwd == "" || !filepath.IsAbs(in.Cwd) {
		return deny("", "Bash %s: no absolute cwd", show)
	}
	cwd, err := resolvePath(filepath.Clean(in.Cwd))
	if err != nil || !sc.readable(cwd) || (cwd != sc.ws && !within(sc.ws, cwd)) {
		return deny("", "Bash %s: the shell's directory %s is outside the workspace", show, in.Cwd)
	}
	cmds, err := parseBash(cmd)
	if err != nil {
		return deny("", "Bash %s: cannot be checked (%v); use simple commands without variables", show, err)
	}
	ck := &bashChecker{p: p, sc: sc, cwds: []string{cwd}, makesLinks: makesLinks(cmds, 0)}
	for _, c := range cmds {
		if err := ck.command(c, 0); err != nil {
			return deny("", "Bash %s: %v", show, err)
		}
	}
	return Decision{Allow: true, Reason: "Bash " + show + ": allowed"}
}

func clipCommand(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return "`" + s + "`"
}

// bashChecker checks parsed commands in order. cwds are every directory the
// shell may be in at this point: a cd adds its target (it may or may not take
// effect, depending on subshells and pipelines), and relative paths must be
// fine from all of them. makesLinks says the command line makes symbolic
// links: a path that goes through a component which does not exist yet may
// then go through a new link, so it is refused.
type bashChecker struct {
	p           *Policy
	sc          scope
	cwds        []string
	makesLinks  bool
	globMatches int
}

const maxCwds = 16

func (ck *bashChecker) command(c *bashCmd, depth int) error {
	for _, a := range c.assigns {
		name := a.raw[:strings.IndexByte(a.raw, '=')]
		name = strings.TrimSuffix(name, "+")
		if dangerousEnv(name) {
			return fmt.Errorf("setting %s is not allowed", name)
		}
		val := a.lit[strings.IndexByte(a.lit, '=')+1:]
		if a.tilde {
			return fmt.Errorf("%s names a home directory", a.lit)
		}
		if !a.dynamic && val != "" {
			if err := ck.plainWord(val, false); err != nil {
				return err
			}
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
		if filepath.IsAbs(name) {
			if !slices.Contains(stdBinDirs, filepath.Dir(filepath.Clean(name))) {
				return fmt.Errorf("%s is outside the workspace", name)
			}
			name = filepath.Base(name)
		} else {
			if err := ck.script(w0); err != nil {
				return err
			}
			script = true
		}
	}
	args := c.words[1:]
	if !script {
		if why, ok := bashDenied[name]; ok {
			return fmt.Errorf("%s is not allowed (%s)", name, why)
		}
		if err := deniedArgs(name, args); err != nil {
			return err
		}
	}
	switch {
	case name == "cd" && !script:
		return ck.cd(args)
	case (name == "sh" || name == "bash") && len(args) >= 2 && args[0].lit == "-c" && !args[0].dynamic:
		// sh -c 'line': check the line itself.
		if args[1].dynamic || depth >= maxBashDepth {
			return fmt.Errorf("%s -c with a computed command", name)
		}
		inner, err := parseBash(args[1].lit)
		if err != nil {
			return fmt.Errorf("%s -c: %v", name, err)
		}
		for _, ic := range inner {
			if err := ck.command(ic, depth+1); err != nil {
				return err
			}
		}
		return ck.rawArgs(args[2:], false)
	}
	if !ck.allowed(name, script, c.words) {
		return fmt.Errorf("%s is not an allowed command", describe(c.words))
	}
	if pureCommands[name] && !script {
		return ck.pureArgs(name, args)
	}
	mutating := mutatingCommands[name] && !script
	expanded, err := ck.expandArgs(args, mutating)
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

// deniedArgs applies bashDeniedArgs and bashDeniedPrefixes.
func deniedArgs(name string, args []bashWord) error {
	for _, a := range args {
		if slices.Contains(bashDeniedArgs[name], a.lit) {
			return fmt.Errorf("%s %s is not allowed", name, a.lit)
		}
		for _, pre := range bashDeniedPrefixes[name] {
			if strings.HasPrefix(a.lit, pre) {
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
	return strings.Join(strings.Fields(s), " ")
}

// allowed matches the command against the rules.
func (ck *bashChecker) allowed(name string, script bool, words []bashWord) bool {
	for _, r := range ck.p.Bash.Allow {
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
	stringOp := func(s string) bool {
		switch s {
		case "-n", "-z", "=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "!", "(", ")", "-o", "-a":
			return true
		}
		return false
	}
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
		if fileOp(a.lit) || binFileOp(a.lit) || stringOp(a.lit) || a.lit == "-t" {
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
func (ck *bashChecker) expandArgs(args []bashWord, mutating bool) ([]bashWord, error) {
	var out []bashWord
	for _, a := range args {
		switch {
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

// resolveFrom resolves p from cwd both ways (resolveBoth) and says whether
// either reading assumes something about components that do not exist yet.
func resolveFrom(cwd, p string) ([]string, bool, error) {
	t := p
	if !filepath.IsAbs(t) {
		t = cwd + string(filepath.Separator) + t
	}
	phys, a1, err := walkPath(t)
	if err != nil {
		return nil, false, err
	}
	lex, a2, err := walkPath(filepath.Clean(t))
	if err != nil {
		return nil, false, err
	}
	if lex == phys {
		return []string{phys}, a1 || a2, nil
	}
	return []string{phys, lex}, a1 || a2, nil
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
		all, assumed, err := resolveFrom(cwd, p)
		if err != nil {
			return fmt.Errorf("%s: %v", p, err)
		}
		if assumed && ck.makesLinks {
			return fmt.Errorf("%s does not exist yet and this command line makes symbolic links; run the commands one at a time", p)
		}
		for _, resolved := range all {
			if ck.sc.isProtected(resolved) {
				return fmt.Errorf("%s is a protected file", p)
			}
			if rel, ok := ck.sc.rel(resolved); ok {
				if why := protectedRel(rel); why != "" {
					return fmt.Errorf("%s is %s", p, why)
				}
				continue
			}
			if resolved == ck.sc.ws || (!write && ck.sc.readable(resolved)) {
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
	if t.dynamic || t.glob >= 0 || t.tilde {
		return fmt.Errorf("redirection to a computed file %q", t.lit)
	}
	write := r.op != "<"
	if err := ck.checkPath(t.lit, write); err != nil {
		return fmt.Errorf("redirection: %v", err)
	}
	return nil
}

func isFD(s string) bool {
	if s == "-" {
		return true
	}
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// cd adds its target to the possible directories; it must stay inside the
// workspace. Both readings of a ".." after a symlink are kept (bash's cd is
// logical, cd -P physical).
func (ck *bashChecker) cd(args []bashWord) error {
	for len(args) > 0 && (args[0].lit == "-P" || args[0].lit == "-L" || args[0].lit == "--") {
		args = args[1:]
	}
	if len(args) != 1 || args[0].lit == "-" {
		return errors.New("cd needs exactly one directory inside the workspace")
	}
	a := args[0]
	if a.dynamic || a.glob >= 0 || a.tilde || a.lit == "" {
		return fmt.Errorf("cd to a computed directory %q", a.lit)
	}
	next, err := ck.dirsOf("cd "+a.lit, a.lit)
	if err != nil {
		return err
	}
	return ck.addCwds(next)
}

// dirsOf resolves dir from every cwd as a directory the shell or a command
// works in: inside the workspace, not protected.
func (ck *bashChecker) dirsOf(what, dir string) ([]string, error) {
	var next []string
	for _, cwd := range ck.cwds {
		all, assumed, err := resolveFrom(cwd, dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", what, err)
		}
		if assumed && ck.makesLinks {
			return nil, fmt.Errorf("%s: %s does not exist yet and this command line makes symbolic links", what, dir)
		}
		for _, resolved := range all {
			if resolved != ck.sc.ws && !within(ck.sc.ws, resolved) {
				return nil, fmt.Errorf("%s leaves the workspace", what)
			}
			if rel, ok := ck.sc.rel(resolved); ok && protectedRel(rel) != "" {
				return nil, fmt.Errorf("%s: %s", what, protectedRel(rel))
			}
			if _, err := os.Lstat(resolved); err != nil && ck.makesLinks {
				return nil, fmt.Errorf("%s: %s does not exist yet and this command line makes symbolic links", what, dir)
			}
			next = append(next, resolved)
		}
	}
	return next, nil
}

func (ck *bashChecker) addCwds(next []string) error {
	for _, n := range next {
		if !slices.Contains(ck.cwds, n) {
			ck.cwds = append(ck.cwds, n)
		}
	}
	if len(ck.cwds) > maxCwds {
		return errors.New("too many cd")
	}
	return nil
}

// script checks that a word names a regular file inside the workspace (from
// every possible cwd, both readings), outside protected paths.
func (ck *bashChecker) script(w bashWord) error {
	if w.dynamic || w.glob >= 0 || w.tilde || w.lit == "" || strings.HasPrefix(w.lit, "-") {
		return fmt.Errorf("%q is not a script in the workspace", w.lit)
	}
	for _, cwd := range ck.cwds {
		all, _, err := resolveFrom(cwd, w.lit)
		if err != nil {
			return fmt.Errorf("%s is not a script in the workspace", w.lit)
		}
		for _, resolved := range all {
			rel, ok := ck.sc.rel(resolved)
			if !ok || protectedRel(rel) != "" {
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
		if (name == "sh" || name == "bash") && len(c.words) >= 3 && c.words[1].lit == "-c" && depth < maxBashDepth {
			if inner, err := parseBash(c.words[2].lit); err == nil && makesLinks(inner, depth+1) {
				return true
			}
		}
	}
	return false
}
