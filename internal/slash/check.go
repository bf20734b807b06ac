package slash

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Invocation is one `zerg ...` command line found in a file.
type Invocation struct {
	Line int    // 1-based line in the text it was found in
	Text string // "zerg rush FEATURE --resume"
}

var codeSpan = regexp.MustCompile("`([^`\n]+)`")

// Invocations returns every zerg command line in markdown text: inline code
// spans and lines of fenced blocks that start with "zerg ". The templates
// write every command Claude may run that way, which is what makes them
// checkable.
func Invocations(text string) []Invocation {
	var out []Invocation
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			cmd := strings.TrimPrefix(trimmed, "$ ")
			if strings.HasPrefix(cmd, "zerg ") {
				out = append(out, Invocation{Line: i + 1, Text: cmd})
			}
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			s := strings.TrimSpace(m[1])
			if strings.HasPrefix(s, "zerg ") {
				out = append(out, Invocation{Line: i + 1, Text: s})
			}
		}
	}
	return out
}

// splitFrontmatter returns the YAML between the leading "---" lines and the
// body after it.
func splitFrontmatter(s string) (front, body string) {
	if !strings.HasPrefix(s, "---\n") {
		return "", s
	}
	rest := s[len("---\n"):]
	i := strings.Index(rest, "\n---\n")
	if i < 0 {
		return "", s
	}
	return rest[:i], rest[i+len("\n---\n"):]
}

// shellStop ends a command line: what follows is another command.
var shellStop = map[string]bool{"|": true, "||": true, "&&": true, ";": true, "&": true, ">": true, ">>": true, "2>&1": true, "<": true}

// tokens splits a command line into words up to the first shell operator.
func tokens(line string) []string {
	var out []string
	for _, f := range strings.Fields(line) {
		if shellStop[f] {
			break
		}
		out = append(out, f)
	}
	return out
}

// placeholder reports whether a positional word stands for something the
// user supplies (FEATURE, TASK..., $ARGUMENTS, [FEATURE], <file>) rather than
// a literal word.
func placeholder(w string) bool {
	if strings.HasPrefix(w, "$") || strings.HasPrefix(w, "[") || strings.HasPrefix(w, "<") || strings.HasSuffix(w, "...") {
		return true
	}
	hasLetter := false
	for _, r := range w {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsLetter(r) {
			hasLetter = true
		}
	}
	return hasLetter
}

// open reports whether a word can stand for any number of words, so the
// number of arguments cannot be checked.
func open(w string) bool {
	return strings.Contains(w, "$ARGUMENTS") || strings.HasPrefix(w, "[") || strings.HasSuffix(w, "...") || strings.HasSuffix(w, "...]")
}

// CheckInvocation checks one `zerg ...` line against the command tree: the
// command exists and is not hidden, every subcommand word names one, every
// flag is a flag of that command (its own or inherited) and has its value,
// required flags are there, and the number of arguments is one the command
// accepts (unless a placeholder like $ARGUMENTS stands for more words).
func CheckInvocation(root *cobra.Command, line string) error {
	words := tokens(line)
	if len(words) == 0 || words[0] != root.Name() {
		return fmt.Errorf("does not start with %q", root.Name())
	}
	args := make([]string, 0, len(words)-1)
	for _, w := range words[1:] {
		switch w {
		case "[flags]", "[command]":
			continue
		}
		// A usage line's "[--file F]": check the flag inside the brackets.
		if strings.HasPrefix(w, "[-") {
			w = w[1:]
		}
		if strings.HasSuffix(w, "]") && !strings.HasPrefix(w, "[") {
			w = strings.TrimSuffix(w, "]")
		}
		args = append(args, w)
	}
	cmd, rest, err := root.Find(args)
	if err != nil {
		return firstLine(err)
	}
	if cmd == root {
		return fmt.Errorf("names no %s command", root.Name())
	}
	if cmd.Hidden || cmd.Deprecated != "" {
		return fmt.Errorf("%s is not a user-facing command (hidden or deprecated)", cmd.CommandPath())
	}
	fs := pflag.NewFlagSet(cmd.CommandPath(), pflag.ContinueOnError)
	fs.AddFlagSet(cmd.LocalFlags())
	fs.AddFlagSet(cmd.InheritedFlags())
	fs.AddFlagSet(cmd.Flags())
	var pos []string
	seen := map[string]bool{}
	lookup := func(name string, short bool) (*pflag.Flag, error) {
		if name == "help" || short && name == "h" {
			seen["help"] = true
			return &pflag.Flag{Name: "help", NoOptDefVal: "true"}, nil
		}
		var f *pflag.Flag
		if short {
			f = fs.ShorthandLookup(name)
		} else {
			f = fs.Lookup(name)
		}
		dash := "--"
		if short {
			dash = "-"
		}
		if f == nil || f.Hidden {
			return nil, fmt.Errorf("%s has no flag %s%s", cmd.CommandPath(), dash, name)
		}
		if f.Deprecated != "" {
			return nil, fmt.Errorf("%s flag %s%s is deprecated: %s", cmd.CommandPath(), dash, name, f.Deprecated)
		}
		seen[f.Name] = true
		return f, nil
	}
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		switch {
		case w == "--":
			pos = append(pos, rest[i+1:]...)
			i = len(rest)
		case strings.HasPrefix(w, "--"):
			name, _, hasValue := strings.Cut(w[2:], "=")
			f, err := lookup(name, false)
			if err != nil {
				return err
			}
			if !hasValue && f.NoOptDefVal == "" {
				if i+1 >= len(rest) {
					return fmt.Errorf("%s flag --%s needs a value", cmd.CommandPath(), name)
				}
				i++
			}
		case strings.HasPrefix(w, "-") && len(w) > 1:
			for j := 1; j < len(w); j++ {
				f, err := lookup(w[j:j+1], true)
				if err != nil {
					return err
				}
				if f.NoOptDefVal == "" {
					if j+1 == len(w) {
						if i+1 >= len(rest) {
							return fmt.Errorf("%s flag -%s needs a value", cmd.CommandPath(), w[j:j+1])
						}
						i++
					}
					break
				}
			}
		default:
			pos = append(pos, w)
		}
	}
	if seen["help"] {
		return nil // --help takes no arguments
	}
	if len(pos) > 0 && hasSubs(cmd) && !placeholder(pos[0]) {
		return fmt.Errorf("%s has no subcommand %q", cmd.CommandPath(), pos[0])
	}
	if !cmd.Runnable() && len(pos) == 0 {
		return fmt.Errorf("%s does nothing by itself; name one of its subcommands", cmd.CommandPath())
	}
	for _, p := range pos {
		if open(p) {
			return nil // the user supplies the rest: arguments and flags
		}
	}
	if err := cmd.ValidateArgs(pos); err != nil {
		return fmt.Errorf("%s: %v", cmd.CommandPath(), err)
	}
	var missing []string
	fs.VisitAll(func(f *pflag.Flag) {
		if req := f.Annotations[cobra.BashCompOneRequiredFlag]; len(req) > 0 && req[0] == "true" && !seen[f.Name] {
			missing = append(missing, "--"+f.Name)
		}
	})
	if len(missing) > 0 {
		return fmt.Errorf("%s needs %s", cmd.CommandPath(), strings.Join(missing, ", "))
	}
	return nil
}

// Problem is one wrong reference in an installed file.
type Problem struct {
	Path string
	Line int
	Text string
	Err  string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: `%s`: %s", p.Path, p.Line, p.Text, p.Err)
}

var (
	bashRule   = regexp.MustCompile(`Bash\(([^)]*)\)`)
	slashRef   = regexp.MustCompile(`(?:^|[^\w./])/(zerg|z):([a-z][a-z0-9-]*)`)
	detailsRef = regexp.MustCompile(regexp.QuoteMeta(DetailsDir) + `/[a-z0-9-]+\.md`)
)

// CheckFile checks everything one installed file tells Claude to use: every
// `zerg ...` line (CheckInvocation), every Bash(zerg ...) rule of
// allowed-tools (a real command), the allowed-tools against what the
// instructions use (CheckAllowedTools), and every /zerg:, /z: and
// .claude/zerg/ reference (a file that is installed: installed holds their
// paths).
func CheckFile(root *cobra.Command, path string, content []byte, installed map[string]bool) []Problem {
	var out []Problem
	text := string(content)
	front, body := splitFrontmatter(text)
	offset := 0
	if front != "" {
		offset = strings.Count(text[:len(text)-len(body)], "\n")
		for i, line := range strings.Split(front, "\n") {
			for _, m := range bashRule.FindAllStringSubmatch(line, -1) {
				rule := strings.TrimSuffix(strings.TrimSuffix(m[1], ":*"), " *")
				if err := checkRule(root, rule); err != nil {
					out = append(out, Problem{path, i + 2, m[0], err.Error()})
				}
			}
		}
	}
	out = append(out, CheckAllowedTools(path, text)...)
	for _, inv := range Invocations(body) {
		if err := CheckInvocation(root, inv.Text); err != nil {
			out = append(out, Problem{path, inv.Line + offset, inv.Text, err.Error()})
		}
	}
	for i, line := range strings.Split(text, "\n") {
		for _, m := range slashRef.FindAllStringSubmatch(line, -1) {
			dir := CommandsDir
			if m[1] == "z" {
				dir = AliasDir
			}
			if p := dir + "/" + m[2] + ".md"; !installed[p] {
				out = append(out, Problem{path, i + 1, "/" + m[1] + ":" + m[2], "no such slash command is installed (" + p + ")"})
			}
		}
		for _, m := range detailsRef.FindAllString(line, -1) {
			if !installed[m] {
				out = append(out, Problem{path, i + 1, m, "no such file is installed"})
			}
		}
	}
	return out
}

// checkRule checks that an allowed-tools prefix names exactly a command.
func checkRule(root *cobra.Command, rule string) error {
	words := strings.Fields(rule)
	if len(words) < 2 || words[0] != root.Name() {
		return fmt.Errorf("is not a %s command", root.Name())
	}
	cmd, rest, err := root.Find(words[1:])
	if err != nil {
		return firstLine(err)
	}
	if len(rest) > 0 || cmd == root {
		return fmt.Errorf("%s has no subcommand %q", cmd.CommandPath(), strings.Join(rest, " "))
	}
	if cmd.Hidden {
		return fmt.Errorf("%s is hidden", cmd.CommandPath())
	}
	return nil
}

// firstLine drops cobra's "Did you mean this?" suggestions.
func firstLine(err error) error {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return errors.New(msg)
}

// ToolUse is one thing a command file's instructions tell Claude to do with
// a tool: run a zerg command line (Bash), write a file (Write) or read one
// (Read).
type ToolUse struct {
	Line      int    // 1-based line in the text it was found in
	Tool, Arg string // "Bash", "zerg rush $ARGUMENTS"; "Write", ".zerg/specs/FEATURE/idea.md"
}

var readRef = regexp.MustCompile("\\bRead `([^`\n]+)`")

// ToolUses returns what markdown instructions tell Claude to use, the way the
// templates write it: every `zerg ...` line (Invocations) is a Bash use; on a
// line that says "the Write tool", every code span holding a path is a file
// written; "Read `PATH`" is a file read; a line that says "the Agent tool"
// starts subagents.
func ToolUses(text string) []ToolUse {
	var out []ToolUse
	for _, inv := range Invocations(text) {
		out = append(out, ToolUse{inv.Line, "Bash", inv.Text})
	}
	for i, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "the Write tool") {
			for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
				s := strings.TrimSpace(m[1])
				if strings.Contains(s, "/") && !strings.ContainsAny(s, " \t") {
					out = append(out, ToolUse{i + 1, "Write", s})
				}
			}
		}
		if strings.Contains(line, "the Agent tool") {
			out = append(out, ToolUse{i + 1, "Agent", ""})
		}
		for _, m := range readRef.FindAllStringSubmatch(line, -1) {
			out = append(out, ToolUse{i + 1, "Read", strings.TrimSpace(m[1])})
		}
	}
	return out
}

// AllowedTools returns the rules of a frontmatter's allowed-tools line, as
// written ("Bash(zerg rush:*)"), split at the commas between rules.
func AllowedTools(front string) (rules []string, line int) {
	for i, l := range strings.Split(front, "\n") {
		v, ok := strings.CutPrefix(l, "allowed-tools:")
		if !ok {
			continue
		}
		depth, start := 0, 0
		v = strings.TrimSpace(v)
		for j, r := range v {
			switch r {
			case '(':
				depth++
			case ')':
				depth--
			case ',':
				if depth == 0 {
					rules = append(rules, strings.TrimSpace(v[start:j]))
					start = j + 1
				}
			}
		}
		if rest := strings.TrimSpace(v[start:]); rest != "" {
			rules = append(rules, rest)
		}
		return rules, i + 1
	}
	return nil, 0
}

// ruleCovers reports whether one allowed-tools rule lets Claude do u, by
// Claude Code's rules: Agent starting subagents; Bash(PREFIX:*) any command
// line starting with PREFIX;
// Edit(GLOB) writing and editing a path GLOB matches (relative to the
// session's directory; * one segment, ** any); Read(GLOB) reading one. A
// placeholder segment of u's path (FEATURE) stands for any name.
func ruleCovers(rule string, u ToolUse) bool {
	tool, spec, ok := strings.Cut(strings.TrimSuffix(rule, ")"), "(")
	if !ok {
		// A bare tool name grants the whole tool: the templates write one
		// only for the Agent tool, which takes no argument to narrow.
		return rule == "Agent" && u.Tool == "Agent"
	}
	switch {
	case tool == "Bash" && u.Tool == "Bash":
		prefix, ok := strings.CutSuffix(spec, ":*")
		if !ok {
			return spec == u.Arg
		}
		return u.Arg == prefix || strings.HasPrefix(u.Arg, prefix+" ")
	case tool == "Edit" && u.Tool == "Write", tool == "Read" && u.Tool == "Read":
		segs := strings.Split(u.Arg, "/")
		for i, s := range segs {
			if placeholder(s) {
				segs[i] = "any-name"
			}
		}
		return globRegexp(spec).MatchString(strings.Join(segs, "/"))
	}
	return false
}

func globRegexp(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		switch {
		case strings.HasPrefix(glob[i:], "**"):
			b.WriteString(".*")
			i++
		case glob[i] == '*':
			b.WriteString("[^/]*")
		case glob[i] == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// CheckAllowedTools checks a command file's allowed-tools against its
// instructions both ways: everything the body tells Claude to use
// (ToolUses) is allowed by a rule, and every rule allows something the body
// uses, so a command is pre-approved for what it needs and nothing more.
// Lines are the file's.
func CheckAllowedTools(path, text string) []Problem {
	front, body := splitFrontmatter(text)
	if front == "" {
		return nil
	}
	offset := strings.Count(text[:len(text)-len(body)], "\n")
	rules, line := AllowedTools(front)
	line++ // the "---" line
	uses := ToolUses(body)
	var out []Problem
	for _, u := range uses {
		ok := false
		for _, r := range rules {
			ok = ok || ruleCovers(r, u)
		}
		if !ok {
			what := "running it"
			switch u.Tool {
			case "Write":
				what = "writing it"
			case "Read":
				what = "reading it"
			}
			out = append(out, Problem{path, u.Line + offset, u.Arg, "the instructions ask for " + what + " but no allowed-tools rule allows it"})
		}
	}
	for _, r := range rules {
		used := false
		for _, u := range uses {
			used = used || ruleCovers(r, u)
		}
		if !used {
			out = append(out, Problem{path, line, r, "allowed-tools grants what the instructions never ask for"})
		}
	}
	return out
}
