package bash

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/policy/resolve"
)

// Sandbox mode: the sandbox is the boundary for commands (docs/sandbox.md),
// so a Bash command runs unless it reaches outside: what reachCommand
// refuses, a path outside the workspace and the sandbox's own scratch
// space (/tmp) other than the system's read-only directories, other
// processes (/proc), and the environment's credentials. This is a courtesy
// on top of the sandbox, which enforces the same with the kernel: the model
// learns at once why such a call cannot work instead of failing
// mysteriously. The line is parsed leniently (variables, loops, functions,
// case … are fine); what cannot be known (a computed word) is let through,
// the sandbox bounds it.

// sandboxReadDirs are the system directories commands may read (the
// sandbox mounts the host's / read-only).
var sandboxReadDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/snap", "/sys"}

// sandboxTmpDirs are private to the sandbox (a tmpfs each).
var sandboxTmpDirs = []string{"/tmp", "/var/tmp", "/dev/shm"}

func (p *Policy) decideBashSandboxed(sc Scope, cwd, cmd, show string) Decision {
	cmds, why, err := parseSandboxed(cmd)
	if why != nil {
		return deny("Bash %s: %v", show, why)
	}
	if err != nil {
		return Decision{Allow: true, Reason: "Bash " + show + ": not parsed (" + err.Error() + "); the sandbox bounds it"}
	}
	start := filepath.Clean(cwd)
	if r, err := resolve.Path(start); err == nil {
		start = r
	}
	rc := &reachChecker{p: p, sc: sc, shellDirs: shellDirs{cwds: []string{start}, lenient: true}}
	if err := rc.walk(rc, cmds); err != nil {
		return deny("Bash %s: %v", show, err)
	}
	return Decision{Allow: true, Reason: "Bash " + show + ": nothing in it reaches outside the sandbox"}
}

// parseSandboxed parses a command line leniently (sandbox mode); no
// commands when it does not parse (parseErr). why refuses it: it expands a
// variable that may hold a credential, or it does not parse and its text
// starts a program that reaches outside (rawReach).
func parseSandboxed(line string) (cmds []*bashCmd, why, parseErr error) {
	cmds, refs, err := parseBashLenient(line)
	for _, r := range refs {
		if secretVar(r) {
			return nil, fmt.Errorf("it expands $%s, which may hold a credential (%s)", r, whyEnv), err
		}
	}
	if err != nil {
		if w := rawReach(line); w != "" {
			return nil, errors.New(w), err
		}
		return nil, nil, err
	}
	return cmds, nil, nil
}

// reachChecker judges parsed commands for what they reach (sandbox mode),
// from every directory the shell may be in (shellDirs, lenient).
type reachChecker struct {
	p  *Policy
	sc Scope
	shellDirs
}

func (rc *reachChecker) command(c *bashCmd, depth int) error {
	if depth > maxBashDepth {
		return nil
	}
	for _, a := range c.assigns {
		if a.tilde {
			return fmt.Errorf("%s names a home directory", a.lit)
		}
		if val := a.lit[strings.IndexByte(a.lit, '=')+1:]; !a.dynamic && val != "" {
			for _, part := range strings.Split(val, ":") {
				if filepath.IsAbs(part) {
					if err := rc.path(part, false); err != nil {
						return err
					}
				}
			}
		}
	}
	for _, r := range c.redirs {
		switch r.op {
		case "<<", "<<-", "<<<":
			continue
		case ">&", "<&":
			if isFD(r.target.lit) {
				continue
			}
		}
		if r.target.tilde {
			return fmt.Errorf("redirection to %s, in a home directory", r.target.lit)
		}
		if r.target.dynamic {
			continue
		}
		if err := rc.path(r.target.lit, r.op != "<"); err != nil {
			return fmt.Errorf("redirection: %v", err)
		}
	}
	if len(c.words) == 0 {
		return nil
	}
	w0 := c.words[0]
	args := c.words[1:]
	if w0.tilde {
		return fmt.Errorf("%s is a program in a home directory", w0.lit)
	}
	if w0.dynamic || w0.lit == "" {
		return rc.args("", args)
	}
	name := w0.lit
	base := filepath.Base(name)
	if strings.Contains(name, "/") {
		if err := rc.path(name, false); err != nil {
			return err
		}
	}
	if err := rc.p.deniedProgram(base); err != nil {
		return err
	}
	if err := reachCommand(base, args); err != nil {
		return err
	}
	if base == "cd" || base == "pushd" {
		return rc.cd(rc, args)
	}
	u, ok, err := unwrap(base, args)
	if !ok {
		u, ok, err = runner(base, args)
	}
	if ok && err == nil {
		return rc.unwrapped(u, depth)
	}
	if base == "find" {
		return rc.find(args, depth)
	}
	return rc.args(base, args)
}

// unwrapped judges what a wrapper or runner runs, and the files it opens.
func (rc *reachChecker) unwrapped(u unwrapped, depth int) error {
	for _, f := range append(slices.Clone(u.reads), u.dirs...) {
		if err := rc.path(f, false); err != nil {
			return err
		}
	}
	for _, f := range u.writes {
		if err := rc.path(f, true); err != nil {
			return err
		}
	}
	if u.script != nil && !u.script.dynamic {
		cmds, why, _ := parseSandboxed(u.script.lit)
		if why != nil {
			return why
		}
		for _, ic := range cmds {
			if err := rc.command(ic, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if len(u.words) == 0 {
		return nil
	}
	return rc.command(&bashCmd{assigns: u.assigns, words: u.words}, depth+1)
}

// dirsOf: cd may go wherever commands may read.
func (rc *reachChecker) dirsOf(what, dir string) ([]string, error) {
	var next []string
	for _, cwd := range rc.cwds {
		t := dir
		if !filepath.IsAbs(t) {
			t = filepath.Join(cwd, t)
		}
		t = filepath.Clean(t)
		if r, err := resolve.Path(t); err == nil {
			t = r
		}
		if why := rc.outside(t, false); why != "" {
			return nil, fmt.Errorf("%s: %s", what, why)
		}
		next = append(next, t)
	}
	return next, nil
}

// args judges a command's arguments as paths, except those the command
// takes as text (a pattern, a script, a message) when it is one this
// check knows.
func (rc *reachChecker) args(name string, args []bashWord) error {
	if pureCommands[name] {
		return nil
	}
	write := mutatingCommands[name]
	text := map[int]bool{}
	switch name {
	case "grep", "egrep", "fgrep", "rg", "ag", "ack":
		text[rc.firstOperand(args, []string{"-e", "-f", "--regexp", "--file"}, []string{"-A", "-B", "-C", "-m", "-d", "-D", "--include", "--exclude", "--exclude-dir", "-t", "-T", "-g", "--glob", "--type"})] = true
	case "sed":
		text[rc.firstOperand(args, []string{"-e", "-f", "--expression", "--file"}, []string{"-l"})] = true
		write = slices.ContainsFunc(args, func(a bashWord) bool { return hasPrefix(a.lit, "-i", "--in-place") })
	case "awk", "gawk", "mawk", "nawk":
		text[rc.firstOperand(args, []string{"-f", "--file"}, []string{"-F", "-v"})] = true
	case "jq":
		text[rc.firstOperand(args, []string{"-f", "--from-file"}, []string{"--arg", "--argjson", "--indent"})] = true
	case "git":
		return rc.gitArgs(args)
	}
	for i, a := range args {
		if text[i] {
			continue
		}
		if a.tilde {
			return fmt.Errorf("%s names a home directory", a.raw)
		}
		if a.dynamic {
			continue
		}
		p := a.lit
		switch {
		case strings.HasPrefix(p, "--") && strings.Contains(p, "="):
			p = p[strings.IndexByte(p, '=')+1:]
			if strings.HasPrefix(p, "~") {
				return fmt.Errorf("%s names a home directory", a.lit)
			}
		case strings.HasPrefix(p, "-"):
			continue
		}
		if p == "" || strings.ContainsAny(p, "\n") || (!filepath.IsAbs(p) && rc.lost) {
			continue
		}
		if a.glob >= 0 {
			p = filepath.Dir(p[:a.glob] + "x")
		}
		if err := rc.path(p, write); err != nil {
			return err
		}
	}
	return nil
}

// firstOperand returns the index of a command's first operand (its
// pattern or program), or -1 when one of given (-e, -f) supplies it;
// takes are options whose value is the next word.
func (rc *reachChecker) firstOperand(args []bashWord, given, takes []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i].lit
		name, _, _ := strings.Cut(a, "=")
		switch {
		case slices.Contains(given, name) || slices.Contains(given, a[:min(2, len(a))]):
			return -1
		case a == "--":
			if i+1 < len(args) {
				return i + 1
			}
			return -1
		case slices.Contains(takes, a):
			i++
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			return i
		}
	}
	return -1
}

// gitArgs: git's text options (a commit message, a log pattern) are not
// paths; -C and everything else is.
func (rc *reachChecker) gitArgs(args []bashWord) error {
	sub, rest := gitSubcommand(args)
	texts := gitTextOptions[sub]
	var check []bashWord
	for i := 0; i < len(args); i++ {
		if args[i].lit == "-C" && i+1 < len(args) {
			check = append(check, args[i+1])
			i++
		}
	}
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		name, _, eq := strings.Cut(a.lit, "=")
		if slices.Contains(texts, name) {
			if !eq {
				i++
			}
			continue
		}
		if !strings.HasPrefix(a.lit, "-") {
			if before, after, ok := strings.Cut(a.lit, ":"); ok && !strings.Contains(before, "/") {
				a.lit = after // REV:path
			}
			check = append(check, a)
		}
	}
	return rc.args("git-operands", check)
}

// find: the start paths and the files tests name are paths, the patterns
// are text, -exec runs a command.
func (rc *reachChecker) find(args []bashWord, depth int) error {
	var check []bashWord
	i := 0
	for ; i < len(args) && !(strings.HasPrefix(args[i].lit, "-") && len(args[i].lit) > 1) && args[i].lit != "(" && args[i].lit != "!"; i++ {
		check = append(check, args[i])
	}
	for ; i < len(args); i++ {
		a := args[i].lit
		switch {
		case findTextTests[a]:
			i++
		case findPathTests[a] || (strings.HasPrefix(a, "-newer") && a != "-newermt"):
			if i+1 < len(args) {
				check = append(check, args[i+1])
				i++
			}
		case a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir":
			j := i + 1
			for j < len(args) && args[j].lit != ";" && args[j].lit != "+" {
				j++
			}
			if err := rc.command(&bashCmd{words: args[i+1 : j]}, depth+1); err != nil {
				return err
			}
			i = j
		case a == "-fprint" || a == "-fprint0" || a == "-fprintf" || a == "-fls":
			if i+1 < len(args) {
				if err := rc.path(args[i+1].lit, true); err != nil {
					return err
				}
				i++
			}
		}
	}
	return rc.args("find-operands", check)
}

// path judges a path a command names, from every directory the shell may
// be in, as written and with symbolic links resolved.
func (rc *reachChecker) path(p string, write bool) error {
	if strings.HasPrefix(p, "~") {
		return fmt.Errorf("%s names a home directory", p)
	}
	if filepath.IsAbs(p) && slices.Contains(specialPaths, filepath.Clean(p)) {
		return nil
	}
	if filepath.IsAbs(p) && !pathRoot(p) {
		return nil // not a path here: an HTTP route, a pattern, text
	}
	for _, cwd := range rc.cwds {
		t := p
		if !filepath.IsAbs(t) {
			if rc.lost {
				return nil
			}
			t = filepath.Join(cwd, t)
		}
		cands := []string{filepath.Clean(t)}
		if all, _, err := resolve.From("", t); err == nil {
			cands = append(cands, all...)
		}
		for _, c := range cands {
			if why := rc.outside(c, write); why != "" {
				return fmt.Errorf("%s %s", p, why)
			}
		}
	}
	return nil
}

// sandboxProcInfo are the files of /proc a sandboxed command may read: they
// describe the machine, not a process.
var sandboxProcInfo = []string{"/proc/cpuinfo", "/proc/meminfo", "/proc/loadavg", "/proc/version", "/proc/uptime", "/proc/stat"}

// procNetRE is /proc/net, as written or resolved (a link to /proc/self/net,
// then to a pid's): every process of a sandbox shares its network namespace.
var procNetRE = regexp.MustCompile(`^/proc/(?:(?:self|thread-self|[0-9]+)(?:/task/[0-9]+)?/)?net(?:/|$)`)

// outside says why the absolute, cleaned path c is out of reach, or "".
func (rc *reachChecker) outside(c string, write bool) string {
	switch {
	case within(c, rc.sc.Workspace), rc.sc.InScratch(c), rc.sc.sandboxTmp(c):
		return ""
	case within(c, "/dev/tcp", "/dev/udp"):
		return "opens a network connection (" + whyNetwork + ")"
	case !write && (slices.Contains(sandboxProcInfo, c) || procNetRE.MatchString(c)):
		// The sandbox's own: its CPUs and memory, its network namespace
		// (only lo). Nothing of another process or of an environment.
		return ""
	case within(c, "/proc"):
		return "is in /proc (" + whyProcs + ", or of its environment)"
	case within(c, "/dev"):
		if strings.HasPrefix(c, "/dev/fd/") || c == "/dev/tty" || strings.HasPrefix(c, "/dev/pts/") {
			return ""
		}
		return "is a device outside the sandbox's"
	case !write && (within(c, sandboxReadDirs...) || within(c, rc.sc.Reads...)):
		return ""
	case write && within(c, sandboxReadDirs...):
		return "is a system directory, read-only in the sandbox"
	}
	if strings.Contains(c, "/.claude") {
		return "is outside the workspace (the user's Claude settings)"
	}
	return "is outside the workspace"
}

// rawReachRE finds a program at the start of a command in text that did
// not parse: after a separator, an opening substitution or the start.
var rawReachRE = regexp.MustCompile("(?:^|[;&|(\\n`]|\\$\\()\\s*(?:(?:sudo|command|exec|time|env|nohup|builtin)\\s+)*([A-Za-z0-9_./-]+)(?:\\s+([A-Za-z0-9_.-]+))?")

// rawReach judges text that did not parse: a program that reaches outside
// at the start of a command, or git's remote subcommands.
func rawReach(text string) string {
	for _, m := range rawReachRE.FindAllStringSubmatch(text, -1) {
		name := filepath.Base(m[1])
		if why, ok := reachPrograms[name]; ok {
			return fmt.Sprintf("%s is not allowed (%s)", name, why)
		}
		if name == "git" && m[2] != "" {
			if why, ok := reachSubcommands["git"][m[2]]; ok {
				return fmt.Sprintf("git %s is not allowed (%s)", m[2], why)
			}
		}
	}
	return ""
}

// sandboxTmp reports whether c is in the sandbox's private scratch space
// (/tmp, /var/tmp, /dev/shm are a tmpfs each), not in an entry there
// holding the workspace or zerg's files (a workspace made under /tmp, as in
// tests and hook check: its neighbours are not the sandbox's).
func (sc Scope) sandboxTmp(c string) bool {
	for _, d := range sandboxTmpDirs {
		rel, ok := pathx.Rel(d, c)
		if !ok {
			continue
		}
		if rel == "." {
			return true
		}
		entry := filepath.Join(d, strings.Split(rel, string(filepath.Separator))[0])
		return !sc.holdsOwn(entry)
	}
	return false
}

// userRoots are the top directories of other users' and the machine's
// files, judged as paths even where they do not exist (a /Users path
// copied from a macOS session names a home directory all the same).
var userRoots = []string{"home", "Users", "root", "mnt", "media", "var", "srv", "run", "proc", "dev", "private", "Volumes"}

// pathRoot reports whether the absolute word p names a path: its first
// component exists, or is one of userRoots. /api/users, an HTTP route
// given to a test script, is text.
func pathRoot(p string) bool {
	first := strings.SplitN(strings.TrimLeft(filepath.Clean(p), "/"), "/", 2)[0]
	if first == "" || slices.Contains(userRoots, first) {
		return true
	}
	_, err := os.Lstat("/" + first)
	return err == nil
}
