package security

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ProtectedPaths matches the paths no worker may add, change or delete,
// whatever its task owns: the commit check of sandbox mode and the change
// check of subprocess mode use the same one.
type ProtectedPaths struct {
	pats []string // lower-cased doublestar globs
}

// NewProtectedPaths compiles doublestar globs of slash paths from the top
// of the tree, matched case-insensitively. nil means DefaultProtected(); an
// empty non-nil slice protects nothing. A pattern that is not a relative
// glob is an error.
func NewProtectedPaths(pats []string) (*ProtectedPaths, error) {
	if pats == nil {
		pats = DefaultProtected()
	}
	p := &ProtectedPaths{}
	for _, pat := range pats {
		lp := strings.ToLower(strings.TrimPrefix(pat, "./"))
		if lp == "" || strings.HasPrefix(lp, "/") || !doublestar.ValidatePattern(lp) {
			return nil, fmt.Errorf("protected path pattern %q is not a valid relative glob", pat)
		}
		p.pats = append(p.pats, lp)
	}
	return p, nil
}

// Match reports the pattern that protects path: path matches it, or path
// stands for a directory the pattern reaches into (".github" for
// ".github/workflows/**"), where a symlink or a file would take the place
// of what is protected.
func (p *ProtectedPaths) Match(path string) (string, bool) {
	if pat, ok := p.Covers(path); ok {
		return pat, true
	}
	comps := strings.Split(strings.ToLower(path), "/")
	for _, pat := range p.pats {
		if reachesInto(strings.Split(pat, "/"), comps) {
			return pat, true
		}
	}
	return "", false
}

// Covers reports the pattern path itself matches: a directory that only
// holds protected paths (".github") is not covered.
func (p *ProtectedPaths) Covers(path string) (string, bool) {
	lp := strings.ToLower(path)
	for _, pat := range p.pats {
		if ok, _ := doublestar.Match(pat, lp); ok {
			return pat, true
		}
	}
	return "", false
}

// reachesInto reports whether the pattern's components pat can match the
// path components p followed by more components, with p's last component
// matched by a name of the pattern, not absorbed by "**": a directory
// anywhere could hold a protected name, but only one the pattern names
// can be replaced by a link to unprotected content.
func reachesInto(pat, p []string) bool {
	if len(pat) == 0 || len(p) == 0 {
		return false
	}
	if pat[0] == "**" {
		return reachesInto(pat[1:], p) || len(p) > 1 && reachesInto(pat, p[1:])
	}
	if ok, _ := doublestar.Match(pat[0], p[0]); !ok {
		return false
	}
	if len(p) == 1 {
		return len(pat) > 1
	}
	return reachesInto(pat[1:], p[1:])
}

// neverOpened are the protected paths no configuration may open: git's own
// files (a hook, a filter or a nested repository runs commands as whoever
// uses git next), zerg's (its config and rules) and Claude Code's (settings
// with hooks, MCP servers).
var neverOpened = []string{"**/.git", "**/.git/**", "**/.gitattributes", ".gitmodules", ".lfsconfig",
	".zerg", ".zerg/**", "**/.claude", "**/.claude/**", "**/.mcp.json"}

// NeverOpened reports a path security.allow_protected can never open.
func NeverOpened(path string) bool {
	lp := strings.ToLower(strings.TrimPrefix(path, "./"))
	for _, pat := range neverOpened {
		if ok, _ := doublestar.Match(pat, lp); ok {
			return true
		}
	}
	return false
}

// Opening is security.allow_protected: protected paths a task may change
// when it names them (not through a glob), which zerg review and zerg
// merge then put before a person. nil opens nothing.
type Opening struct {
	pats []string // lower-cased doublestar globs
}

// neverOpenedExamples are paths a pattern of allow_protected must not
// match (it would reach what NeverOpened keeps shut).
var neverOpenedExamples = []string{".git", ".git/config", ".git/hooks/pre-commit", ".gitattributes", ".gitmodules", ".lfsconfig",
	".zerg", ".zerg/config.yaml", ".claude", ".claude/settings.json", ".claude/settings.local.json", ".mcp.json"}

// NewOpening compiles allow_protected. A pattern that is not a relative
// glob, starts with a wildcard (it would open every protected path), or
// reaches a path that can never be opened (.git*, .zerg/, .claude/,
// .mcp.json) is an error naming it.
func NewOpening(pats []string) (*Opening, error) {
	o := &Opening{}
	for _, pat := range pats {
		lp := strings.ToLower(strings.TrimPrefix(pat, "./"))
		if lp == "" || strings.HasPrefix(lp, "/") || !doublestar.ValidatePattern(lp) {
			return nil, fmt.Errorf("%q is not a valid relative glob", pat)
		}
		if strings.ContainsAny(lp[:1], "*?[{") {
			return nil, fmt.Errorf("%q starts with a wildcard and would open every protected path; name the paths (.github/workflows/**)", pat)
		}
		for _, ex := range neverOpenedExamples {
			if ok, _ := doublestar.Match(lp, ex); ok {
				return nil, fmt.Errorf("%q reaches %s, which can never be opened (git's, zerg's and Claude Code's own files)", pat, ex)
			}
		}
		o.pats = append(o.pats, lp)
	}
	return o, nil
}

// OpensEntry reports whether a task's ownership entry names an opened
// path: a path or a "dir/", not a glob (a task opens a protected path only
// by naming it), that Opens.
func (o *Opening) OpensEntry(entry string) bool {
	return !strings.ContainsAny(entry, "*?[{") && o.Opens(strings.TrimSuffix(entry, "/"))
}

// Opens reports whether path is opened: it matches a pattern and is not a
// path that can never be opened.
func (o *Opening) Opens(path string) bool {
	if o == nil || NeverOpened(path) {
		return false
	}
	lp := strings.ToLower(strings.TrimPrefix(path, "./"))
	for _, pat := range o.pats {
		if ok, _ := doublestar.Match(pat, lp); ok {
			return true
		}
	}
	return false
}

// instructionFiles are the files coding agents load as instructions when a
// person opens the repository: Claude Code's CLAUDE.md (its .claude/ is
// never opened at all, above), AGENTS.md (Codex, Cursor, Copilot, Amp,
// Zed, Roo Code and others), GEMINI.md, the rules of Cursor, Windsurf,
// Cline, Roo Code, Junie, Kiro, Amazon Q, Continue, Augment, Goose, Zed,
// Crush, Qwen Code and Warp, Copilot's instructions, prompts and agents,
// the Agent Skills directory, and the agent configurations that start MCP
// servers (.vscode/mcp.json, .cursor/, .gemini/, .codex/). Matched
// anywhere in the tree (nested ones load too) and case-insensitively.
//
// What a worker writes there is a prompt for the user's next session,
// which runs with the user's credentials and outside any sandbox. Inside
// a run they do nothing (zerg's sessions load no project instructions), so
// they are not refused at commit: real graphs change CLAUDE.md (5 of the
// 50 real graphs in internal/spec/testdata/corpus). They are put before a
// person instead: zerg review reports each change as blocking and zerg
// merge names them and asks, as for an opened protected path. A project
// that wants them refused outright lists them in security.protected_paths.
var instructionFiles = []string{
	"**/claude.md", "**/claude.local.md",
	"**/agents.md", "**/agents.override.md", "**/agents.local.md", "**/agent.md",
	"**/gemini.md", "**/.gemini/**", "**/qwen.md", "**/.qwen/**", "**/crush.md", "**/warp.md",
	"**/.cursorrules", "**/.cursor/**", "**/.windsurfrules", "**/.windsurf/**", "**/.devin/**",
	"**/.clinerules", "**/.clinerules/**", "**/.roorules", "**/.roomodes", "**/.roo/**",
	"**/.junie/**", "**/.kiro/**", "**/.amazonq/**", "**/.continuerules", "**/.continue/**",
	"**/.augment-guidelines", "**/.augment/**", "**/.goosehints", "**/.rules", "**/.codex/**", "**/.agents/**",
	"**/.aider.conf.yml", ".zed/**", ".vscode/mcp.json",
	".github/copilot-instructions.md", ".github/instructions/**", ".github/prompts/**", ".github/chatmodes/**", ".github/agents/**",
}

// InstructionFile reports the pattern of the coding agents' instruction
// files (instructionFiles) that path matches.
func InstructionFile(path string) (string, bool) {
	lp := strings.ToLower(strings.TrimPrefix(path, "./"))
	for _, pat := range instructionFiles {
		if ok, _ := doublestar.Match(pat, lp); ok {
			return pat, true
		}
	}
	return "", false
}
