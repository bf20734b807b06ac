package policy

import (
	"path/filepath"
	"strings"
)

// decideRead allows Read/NotebookRead only inside the workspace or a read
// dir, judged after symlinks are resolved (both ways, see resolveFrom), so a
// link in the workspace that points at ~/.ssh/id_rsa is refused.
func (p *Policy) decideRead(in *HookInput, input map[string]any, field string) Decision {
	raw, _ := input[field].(string)
	if raw == "" {
		return deny("", "%s: no %s in tool_input", in.ToolName, field)
	}
	resolved, where, d := p.readTarget(in, raw)
	if d != nil {
		return *d
	}
	return Decision{Allow: true, Path: resolved, Reason: in.ToolName + " " + resolved + ": " + where}
}

// readTarget resolves the path a read tool names, and says where it is;
// or denies it when either reading of it is outside the workspace, the read
// dirs and the worker's scratch directory (its TMPDIR, where its commands
// put their output and Claude Code the output of its background tasks,
// which it tells the model to read there).
func (p *Policy) readTarget(in *HookInput, raw string) (string, string, *Decision) {
	fail := func(d Decision) (string, string, *Decision) { return "", "", &d }
	all, err := target(in.Cwd, raw)
	if err != nil {
		return fail(deny(raw, "%s %s: %v", in.ToolName, raw, err))
	}
	sc, err := p.scope()
	if err != nil {
		return fail(deny(all[0], "%s %s: %v", in.ToolName, raw, err))
	}
	where := "inside the workspace"
	for _, r := range all {
		if sc.InScratch(r) {
			where = "in the worker's scratch directory"
			continue
		}
		if !sc.Readable(r) || sc.IsProtected(r) {
			return fail(deny(r, "%s %s: outside the workspace %s", in.ToolName, r, sc.Workspace))
		}
	}
	return all[0], where, nil
}

// decideSearch allows Glob/Grep/LS only under a directory inside the
// workspace (the "path" input, default the cwd), with patterns that cannot
// leave it: no absolute pattern, no "~", no "..".
func (p *Policy) decideSearch(in *HookInput, input map[string]any) Decision {
	dir := in.Cwd
	if v, ok := input["path"]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			return deny("", "%s: path is not a string", in.ToolName)
		}
		if s != "" {
			dir = s
		}
	}
	if dir == "" {
		return deny("", "%s: no path and no cwd", in.ToolName)
	}
	resolved, where, d := p.readTarget(in, dir)
	if d != nil {
		return *d
	}
	for _, f := range []string{"pattern", "glob", "ignore"} {
		v, ok := input[f]
		if !ok || v == nil || (f == "pattern" && in.ToolName != "Glob") {
			continue // Grep's pattern is a regexp over contents, not a path
		}
		var pats []string
		switch x := v.(type) {
		case string:
			pats = []string{x}
		case []any:
			for _, e := range x {
				s, ok := e.(string)
				if !ok {
					return deny(resolved, "%s: %s is not a list of strings", in.ToolName, f)
				}
				pats = append(pats, s)
			}
		default:
			return deny(resolved, "%s: %s is not a string", in.ToolName, f)
		}
		for _, pat := range pats {
			if why := escapingPattern(pat); why != "" {
				return deny(resolved, "%s %s %q: %s", in.ToolName, f, pat, why)
			}
		}
	}
	return Decision{Allow: true, Path: resolved, Reason: in.ToolName + " under " + resolved + ": " + where}
}

// escapingPattern says why a glob could match outside its base directory.
// ".." anywhere is refused, even inside a brace alternative or a name, to
// stay on the safe side of the tool's own glob dialect.
func escapingPattern(pat string) string {
	switch {
	case filepath.IsAbs(pat) || strings.HasPrefix(pat, "/"):
		return "absolute pattern"
	case strings.HasPrefix(pat, "~"):
		return "pattern in a home directory"
	case strings.Contains(pat, ".."):
		return `".." in a pattern`
	case strings.Contains(pat, "{/") || strings.Contains(pat, ",/"):
		return "absolute alternative in a pattern"
	}
	return ""
}
