// Package slash renders the Claude Code slash commands that zerg init
// installs in a repository, and checks that they call real zerg commands.
//
// Layout (paths relative to the repository root):
//
//	.claude/commands/zerg/NAME.md  /zerg:NAME, one per user-facing zerg command
//	.claude/commands/z/NAME.md     /z:NAME, the same command, shorter; also /z:st (Aliases)
//	.claude/zerg/NAME.md           the details a command reads only when needed
//
// Claude Code turns every .md file under .claude/commands, at any depth, into
// a command (subdirectories become the part before the colon), so the details
// live outside it. Every file is generated from the cobra command tree (Use,
// Short, Long, flags, subcommands) through the embedded templates, so the
// files stay true as commands change. Install (install.go) writes them
// without ever overwriting a user's edits.
package slash

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/template"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Where the files go, relative to the repository root (slash-separated).
const (
	CommandsDir  = ".claude/commands/zerg"
	AliasDir     = ".claude/commands/z"
	DetailsDir   = ".claude/zerg"
	ManifestPath = ".zerg/slash-commands.json"
)

// Alias is one /z: shortcut: /z:Name does what /zerg:Command does.
type Alias struct{ Name, Command string }

// Aliases are the /z: shortcuts besides /z:NAME, which every /zerg:NAME
// has (AliasesOf). An alias is installed only while its command exists in
// the tree.
var Aliases = []Alias{
	{"st", "status"},
}

// AliasesOf returns every /z: shortcut installed for the tree under root:
// /z:NAME for each command of Commands, then Aliases whose command exists
// and whose name no command takes.
func AliasesOf(root *cobra.Command) []Alias {
	var out []Alias
	has := map[string]bool{}
	for _, c := range Commands(root) {
		out = append(out, Alias{c.Name(), c.Name()})
		has[c.Name()] = true
	}
	for _, a := range Aliases {
		if has[a.Command] && !has[a.Name] {
			out = append(out, a)
		}
	}
	return out
}

// excluded are commands of the tree that get no slash command: cobra's own
// help and shell completion, which mean nothing inside a Claude Code session.
var excluded = map[string]bool{"help": true, "completion": true}

// ExitCodes are zerg's exit codes, passed in by the CLI so the details quote
// its constants rather than copies of them.
type ExitCodes struct{ OK, Failed, Usage, Interrupted, Locked int }

// Options tune Render.
type Options struct {
	Exit ExitCodes
	// Templates replaces embedded templates by name ("command.md.tmpl",
	// "details.md.tmpl", "notes.md.tmpl"); for tests only.
	Templates map[string]string
}

// File is one file to install.
type File struct {
	Path    string // relative to the repository root, slash-separated
	Content []byte
	Command string // the zerg command it is for ("rush")
}

//go:embed templates/*.tmpl
var templateFS embed.FS

// Commands returns the top-level commands that get a slash command: every
// available (not hidden, not deprecated) command but help and completion,
// sorted by name.
func Commands(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, c := range root.Commands() {
		if excluded[c.Name()] || !c.IsAvailableCommand() {
			continue
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// flagDoc is one flag as the details show it.
type flagDoc struct {
	Name, Shorthand, Value, Usage, Default string
}

// cmdDoc is one command as the templates see it.
type cmdDoc struct {
	Name    string // path below zerg: "rush", "graph validate"
	Short   string
	Long    string
	Example string
	UseLine string // "zerg rush FEATURE [flags]"; empty when the command does nothing by itself
	Flags   []flagDoc
	Subs    []cmdDoc
}

// page is the data of one rendered file.
type page struct {
	cmdDoc
	Slash        string   // "/zerg:rush"
	Details      string   // ".claude/zerg/rush.md"
	Alias        string   // "st" when rendering /z:st
	Aliases      []string // "/z:st", for the details
	Description  string
	ArgHint      string
	AllowedTools string
	Exit         ExitCodes
}

func docOf(c *cobra.Command) cmdDoc {
	d := cmdDoc{
		Name:    strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" "),
		Short:   strings.TrimSpace(c.Short),
		Long:    strings.TrimSpace(c.Long),
		Example: strings.TrimRight(c.Example, " \n"),
		Flags:   flagsOf(c),
	}
	if c.Runnable() && !hasSubs(c) {
		d.UseLine = useLine(c)
	}
	for _, s := range c.Commands() {
		if excluded[s.Name()] || !s.IsAvailableCommand() {
			continue
		}
		d.Subs = append(d.Subs, docOf(s))
	}
	return d
}

func hasSubs(c *cobra.Command) bool {
	for _, s := range c.Commands() {
		if !excluded[s.Name()] && s.IsAvailableCommand() {
			return true
		}
	}
	return false
}

// useLine is cobra's UseLine without depending on whether the help flag was
// added yet (cobra adds it when a command runs): the same text whether
// rendered from zerg init or from a test's tree.
func useLine(c *cobra.Command) string {
	line := c.CommandPath()
	if _, args, ok := strings.Cut(c.Use, " "); ok {
		line += " " + args
	}
	if len(flagsOf(c)) > 0 && !strings.Contains(line, "[flags]") {
		line += " [flags]"
	}
	return line
}

// flagsOf lists a command's own and inherited flags, without help, hidden and
// deprecated ones, sorted by name.
func flagsOf(c *cobra.Command) []flagDoc {
	var out []flagDoc
	seen := map[string]bool{}
	add := func(f *pflag.Flag) {
		if seen[f.Name] || f.Hidden || f.Deprecated != "" || f.Name == "help" || f.Name == "version" {
			return
		}
		seen[f.Name] = true
		name, usage := pflag.UnquoteUsage(f)
		if f.Value.Type() == "bool" {
			name = ""
		}
		d := flagDoc{Name: f.Name, Shorthand: f.Shorthand, Value: name, Usage: usage}
		switch f.DefValue {
		case "", "false", "0", "[]", "0s":
		default:
			d.Default = f.DefValue
		}
		out = append(out, d)
	}
	c.LocalFlags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// argHint is the argument-hint shown after the command name: the arguments
// of its Use, its subcommands, [flags].
func argHint(c *cobra.Command, d cmdDoc) string {
	var parts []string
	if len(d.Subs) > 0 {
		names := make([]string, len(d.Subs))
		for i, s := range d.Subs {
			names[i] = s.Name[strings.LastIndexByte(s.Name, ' ')+1:]
		}
		parts = append(parts, strings.Join(names, "|")+" ...")
	} else if _, args, ok := strings.Cut(c.Use, " "); ok {
		parts = append(parts, args)
	}
	if len(d.Subs) == 0 && len(d.Flags) > 0 && !strings.Contains(strings.Join(parts, " "), "[flags]") {
		parts = append(parts, "[flags]")
	}
	return strings.Join(parts, " ")
}

type renderer struct {
	tmpl *template.Template
}

func newRenderer(opt Options) (*renderer, error) {
	r := &renderer{}
	t := template.New("slash").Option("missingkey=error")
	t.Funcs(template.FuncMap{
		"quote": func(s string) (string, error) {
			// A JSON string is a valid double-quoted YAML scalar: no
			// argument-hint like [FEATURE] is read as a YAML list.
			b, err := json.Marshal(s)
			return string(b), err
		},
		"last": func(s string) string { return s[strings.LastIndexByte(s, ' ')+1:] },
		"sentence": func(s string) string {
			if s == "" || strings.HasSuffix(s, ".") {
				return s
			}
			return s + "."
		},
		"cell": func(s string) string {
			return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
		},
		// note renders the per-command note NAME/KIND of notes.md.tmpl
		// with the page's data, or nothing when the command has none.
		"note": func(kind string, p page) (string, error) {
			nt := r.tmpl.Lookup(p.Name + "/" + kind)
			if nt == nil {
				return "", nil
			}
			var b bytes.Buffer
			if err := nt.Execute(&b, p); err != nil {
				return "", err
			}
			return strings.TrimSpace(b.String()), nil
		},
	})
	for _, name := range []string{"notes.md.tmpl", "command.md.tmpl", "details.md.tmpl"} {
		text, ok := opt.Templates[name]
		if !ok {
			b, err := templateFS.ReadFile("templates/" + name)
			if err != nil {
				return nil, err
			}
			text = string(b)
		}
		if _, err := t.New(name).Parse(text); err != nil {
			return nil, fmt.Errorf("template %s: %w", name, err)
		}
	}
	r.tmpl = t
	return r, nil
}

func (r *renderer) exec(name string, p page) ([]byte, error) {
	var b bytes.Buffer
	if err := r.tmpl.ExecuteTemplate(&b, name, p); err != nil {
		return nil, fmt.Errorf("render %s for %s: %w", name, p.Slash, err)
	}
	out := collapseBlankLines(b.Bytes())
	// Claude Code runs "!`cmd`" in a command file when it loads it.
	if bytes.Contains(out, []byte("!`")) {
		return nil, fmt.Errorf("render %s for %s: the text holds \"!`\", which Claude Code would run as a shell command", name, p.Slash)
	}
	return out, nil
}

// collapseBlankLines keeps templates readable: runs of blank lines become one,
// and the file ends with exactly one newline.
func collapseBlankLines(b []byte) []byte {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var out []string
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			if blank {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		out = append(out, l)
	}
	return []byte(strings.Join(out, "\n") + "\n")
}

// Render returns every file zerg init installs for the tree under root,
// sorted by path: for each command its /zerg: file and its details, and the
// /z: aliases whose command exists.
func Render(root *cobra.Command, opt Options) ([]File, error) {
	r, err := newRenderer(opt)
	if err != nil {
		return nil, err
	}
	aliases := AliasesOf(root)
	aliasesOf := map[string][]string{}
	for _, a := range aliases {
		aliasesOf[a.Command] = append(aliasesOf[a.Command], "/z:"+a.Name)
	}
	var files []File
	pages := map[string]page{}
	for _, c := range Commands(root) {
		d := docOf(c)
		p := page{
			cmdDoc:      d,
			Slash:       "/zerg:" + d.Name,
			Details:     DetailsDir + "/" + d.Name + ".md",
			Aliases:     aliasesOf[d.Name],
			Description: d.Short,
			ArgHint:     argHint(c, d),
			Exit:        opt.Exit,
		}
		if p.AllowedTools, err = r.allowedTools(p); err != nil {
			return nil, err
		}
		pages[d.Name] = p
		core, err := r.exec("command.md.tmpl", p)
		if err != nil {
			return nil, err
		}
		details, err := r.exec("details.md.tmpl", p)
		if err != nil {
			return nil, err
		}
		files = append(files,
			File{Path: CommandsDir + "/" + d.Name + ".md", Content: core, Command: d.Name},
			File{Path: p.Details, Content: details, Command: d.Name})
	}
	for _, a := range aliases {
		p, ok := pages[a.Command]
		if !ok {
			continue
		}
		p.Alias = a.Name
		p.Description = "Short for " + p.Slash + ": " + p.Short
		core, err := r.exec("command.md.tmpl", p)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: AliasDir + "/" + a.Name + ".md", Content: core, Command: a.Command})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// allowedTools pre-approves, while the command runs, exactly what its body
// tells Claude to use (ToolUses): the zerg commands it runs
// (Bash(zerg rush:*)), the files it writes (Edit(.zerg/specs/*/idea.md):
// Claude Code matches Write by Edit path rules, not by Write(...) ones), the
// files it reads (Read(.claude/zerg/rush.md)) and the Agent tool where it
// starts subagents (tasks mode). Anything else asks the user as usual.
func (r *renderer) allowedTools(p page) (string, error) {
	p.AllowedTools = "Bash(zerg " + p.Name + ":*)" // a placeholder for the first pass
	body, err := r.exec("command.md.tmpl", p)
	if err != nil {
		return "", err
	}
	_, text := splitFrontmatter(string(body))
	seen := map[string]bool{}
	var bash, files []string
	for _, u := range ToolUses(text) {
		var rule string
		switch u.Tool {
		case "Bash":
			f := strings.Fields(u.Arg)
			if len(f) < 2 {
				continue
			}
			rule = "Bash(zerg " + f[1] + ":*)"
		case "Write":
			rule = "Edit(" + pathGlob(u.Arg) + ")"
		case "Read":
			rule = "Read(" + pathGlob(u.Arg) + ")"
		case "Agent":
			rule = "Agent"
		}
		if seen[rule] {
			continue
		}
		seen[rule] = true
		if u.Tool == "Bash" {
			bash = append(bash, rule)
		} else {
			files = append(files, rule)
		}
	}
	if len(bash) == 0 {
		return "", fmt.Errorf("render %s: its body runs no zerg command", p.Slash)
	}
	return strings.Join(append(bash, files...), ", "), nil
}

// pathGlob turns a path the instructions name into the pattern of its
// permission rule: a placeholder segment (FEATURE) matches any one segment.
func pathGlob(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if placeholder(s) {
			segs[i] = "*"
		}
	}
	return strings.Join(segs, "/")
}

// TemplateText returns an embedded template's text ("command.md.tmpl",
// "details.md.tmpl", "notes.md.tmpl"), for tests that render a changed copy.
func TemplateText(name string) (string, error) {
	b, err := templateFS.ReadFile("templates/" + name)
	return string(b), err
}

// InstallTree renders the files for the command tree cmds belongs to
// (Render) and installs them in the repository at root (Install): what zerg
// init does, in one call. Without a tree (nil: an init run without its
// commands, as in tests) there is nothing to install.
func InstallTree(root string, cmds *cobra.Command, opt Options) ([]Result, error) {
	if cmds == nil {
		return nil, nil
	}
	files, err := Render(cmds.Root(), opt)
	if err != nil {
		return nil, err
	}
	return Install(root, files)
}
