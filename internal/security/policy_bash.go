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
	// script). Further arguments are free but still checked as paths.
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
// comparing files, simple file management inside the workspace, read-only
// git, and running a repository script with sh or bash (or directly).
func DefaultBashAllow() []string {
	return []string{
		"ls", "cat", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "diff", "cmp", "comm",
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
	"npm": {"publish", "login", "logout", "adduser", "config", "token", "owner", "access", "exec", "x", "set"},
	"go":  {"env", "-toolexec", "-exec"},
}

// bashDeniedPrefixes deny an argument by prefix (options with glued values).
var bashDeniedPrefixes = map[string][]string{
	"git":  {"--config-env", "--exec-path", "--upload-pack", "--receive-pack", "-O", "--open-files-in-pager", "--output", "--git-dir", "--work-tree"},
	"find": {"-exec", "-ok", "-fprint", "-fls", "-delete", "-L", "-follow"},
	"grep": {"-R", "--dereference-recursive"},
	"sort": {"--compress-program"},
	"go":   {"-toolexec", "-exec"},
}

// pureCommands read no file named by an argument, so their arguments are not
// path-checked and may be computed by a command substitution.
var pureCommands = map[string]bool{
	"echo": true, "printf": true, "true": true, "false": true, "test": true, "[": true, "pwd": true,
	"date": true, "id": true, "whoami": true, "uname": true, "basename": true, "dirname": true,
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
		"GOFLAGS", "CC", "CXX", "TMPDIR", "XDG_CONFIG_HOME":
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
	ck := &bashChecker{p: p, sc: sc, cwds: []string{cwd}}
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
// fine from all of them.
type bashChecker struct {
	p    *Policy
	sc   scope
	cwds []string
}

const maxCwds = 16

func (ck *bashChecker) command(c *bashCmd, depth int) error {
	for _, a := range c.assigns {
		name := a.raw[:strings.IndexByte(a.raw, '=')]
		name = strings.TrimSuffix(name, "+")
		if dangerousEnv(name) {
			return fmt.Errorf("setting %s is not allowed", name)
		}
		val := bashWord{lit: a.lit[strings.IndexByte(a.lit, '=')+1:], glob: -1, tilde: a.tilde}
		if !a.dynamic && val.lit != "" {
			if err := ck.pathArg(val, false); err != nil {
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
		return ck.pathArgs(args[2:], false)
	}
	if !ck.allowed(name, script, c.words) {
		return fmt.Errorf("%s is not an allowed command", describe(c.words))
	}
	if pureCommands[name] && !script {
		return nil
	}
	return ck.pathArgs(args, mutatingCommands[name] && !script)
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

func (ck *bashChecker) pathArgs(args []bashWord, mutating bool) error {
	for _, a := range args {
		if a.dynamic {
			return fmt.Errorf("the argument %q is computed at run time", a.lit)
		}
		if mutating && a.glob >= 0 {
			return fmt.Errorf("a pattern (%s) as a file to change", a.lit)
		}
		if err := ck.pathArg(a, mutating); err != nil {
			return err
		}
	}
	return nil
}

// pathArg checks every reading of an argument as a path: the word itself, an
// option's glued value (-o/x, --out=/x) and the value of NAME=value. Words
// that are not meant as paths are harmless here: they resolve inside the
// workspace.
func (ck *bashChecker) pathArg(w bashWord, mutating bool) error {
	if w.tilde {
		return fmt.Errorf("%s names a home directory", w.lit)
	}
	lit := w.lit
	if w.glob >= 0 {
		// The fixed part before the first wildcard decides where it looks.
		lit = lit[:w.glob]
		if i := strings.LastIndexByte(lit, '/'); i >= 0 {
			lit = lit[:i+1]
		} else {
			lit = ""
		}
	}
	var cands []string
	switch {
	case lit == "" || lit == "-" || lit == "--":
	case strings.HasPrefix(lit, "--"):
		if i := strings.IndexByte(lit, '='); i >= 0 {
			cands = append(cands, lit[i+1:])
		}
	case strings.HasPrefix(lit, "-"):
		cands = append(cands, lit[2:])
		if i := strings.IndexByte(lit, '='); i >= 0 {
			cands = append(cands, lit[i+1:])
		}
	default:
		cands = append(cands, lit)
		if i := strings.IndexByte(lit, '='); i >= 0 {
			cands = append(cands, lit[i+1:])
		}
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if err := ck.checkPath(c, mutating); err != nil {
			return err
		}
	}
	return nil
}

// checkPath resolves p from every possible cwd: it must be a special device,
// or inside the workspace (or, when only read, a read dir), and never a
// protected path.
func (ck *bashChecker) checkPath(p string, write bool) error {
	if strings.HasPrefix(p, "~") {
		return fmt.Errorf("%s names a home directory", p)
	}
	if filepath.IsAbs(p) && slices.Contains(specialPaths, filepath.Clean(p)) {
		return nil
	}
	for _, cwd := range ck.cwds {
		t := p
		if !filepath.IsAbs(t) {
			t = filepath.Join(cwd, t)
		}
		resolved, err := resolvePath(filepath.Clean(t))
		if err != nil {
			return fmt.Errorf("%s: %v", p, err)
		}
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
// workspace.
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
	var next []string
	for _, cwd := range ck.cwds {
		t := a.lit
		if !filepath.IsAbs(t) {
			t = filepath.Join(cwd, t)
		}
		resolved, err := resolvePath(filepath.Clean(t))
		if err != nil {
			return fmt.Errorf("cd %s: %v", a.lit, err)
		}
		if resolved != ck.sc.ws && !within(ck.sc.ws, resolved) {
			return fmt.Errorf("cd %s leaves the workspace", a.lit)
		}
		if rel, ok := ck.sc.rel(resolved); ok && protectedRel(rel) != "" {
			return fmt.Errorf("cd %s: %s", a.lit, protectedRel(rel))
		}
		next = append(next, resolved)
	}
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
// every possible cwd), outside protected paths.
func (ck *bashChecker) script(w bashWord) error {
	if w.dynamic || w.glob >= 0 || w.tilde || w.lit == "" || strings.HasPrefix(w.lit, "-") {
		return fmt.Errorf("%q is not a script in the workspace", w.lit)
	}
	for _, cwd := range ck.cwds {
		t := w.lit
		if !filepath.IsAbs(t) {
			t = filepath.Join(cwd, t)
		}
		resolved, err := filepath.EvalSymlinks(filepath.Clean(t))
		if err != nil {
			return fmt.Errorf("%s is not a script in the workspace", w.lit)
		}
		rel, ok := ck.sc.rel(resolved)
		if !ok || protectedRel(rel) != "" {
			return fmt.Errorf("%s is not a script in the workspace", w.lit)
		}
		if st, err := os.Stat(resolved); err != nil || !st.Mode().IsRegular() {
			return fmt.Errorf("%s is not a script in the workspace", w.lit)
		}
	}
	return nil
}
