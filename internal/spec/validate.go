package spec

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/textx"
)

// Options tune validation.
type Options struct {
	// RepoRoot, when set, enables the symlink check: a path whose existing
	// prefix resolves outside the repository is rejected.
	RepoRoot string
	// Protected, when set, says which paths no worker may add, change or
	// delete: a task that creates or modifies one could never pass, so it
	// is an error; a task owning a directory that holds some is warned.
	Protected ProtectedPaths
}

// ProtectedPaths is security.ProtectedPaths as validation uses it.
type ProtectedPaths interface {
	// Match: the path is protected, or a file there would take the place
	// of a directory holding protected paths.
	Match(path string) (pattern string, ok bool)
	// Covers: the path itself is protected.
	Covers(path string) (pattern string, ok bool)
}

// Report is the outcome of validating one graph.
type Report struct {
	Graph    *Graph  `json:"-"`
	Errors   []Issue `json:"errors"`
	Warnings []Issue `json:"warnings"`
}

// Valid reports whether the graph can run.
func (r *Report) Valid() bool { return len(r.Errors) == 0 }

// Err returns nil for a valid graph, otherwise an error listing every problem
// one per line.
func (r *Report) Err() error {
	if r.Valid() {
		return nil
	}
	lines := make([]string, len(r.Errors))
	for i, e := range r.Errors {
		lines[i] = e.String()
	}
	return errors.New(strings.Join(lines, "\n"))
}

// Check parses and validates a task-graph document.
func Check(data []byte, opts Options) *Report {
	g, issues := Parse(data)
	r := &Report{Graph: g}
	r.add(issues)
	if g != nil {
		r.add(validate(g, opts))
	}
	return r
}

// Load reads, parses and validates a task-graph file.
func Load(file string, opts Options) (*Report, error) {
	data, err := ReadFile(file)
	if err != nil {
		return nil, err
	}
	return Check(data, opts), nil
}

func (r *Report) add(issues []Issue) {
	for _, i := range issues {
		if i.Severity == Warning {
			r.Warnings = append(r.Warnings, i)
		} else {
			r.Errors = append(r.Errors, i)
		}
	}
}

// validate runs the graph-wide checks on a parsed graph.
func validate(g *Graph, opts Options) []Issue {
	var issues []Issue
	add := func(i Issue) { issues = append(issues, i) }

	// Ids: unique. Later checks use only the first task of a duplicated id.
	first := make(map[string]*Task, len(g.Tasks))
	for _, t := range g.Tasks {
		if t.ID == "" {
			continue
		}
		if prev, dup := first[t.ID]; dup {
			add(Issue{Severity: Error, Code: CodeDuplicateID, Task: t.ID, Field: "id",
				Message: fmt.Sprintf("duplicate: tasks %d and %d both use it; ids must be unique", prev.Index+1, t.Index+1)})
			continue
		}
		first[t.ID] = t
	}
	g.byID = first
	ids := make([]string, 0, len(first))
	for _, t := range g.Tasks {
		if first[t.ID] == t {
			ids = append(ids, t.ID)
		}
	}

	for _, t := range g.Tasks {
		ref := taskRef(t.Index, t.ID)
		seen := make(map[string]bool, len(t.Dependencies))
		for i, d := range t.Dependencies {
			field := fmt.Sprintf("dependencies[%d]", i)
			if seen[d] {
				add(Issue{Severity: Warning, Code: CodeDuplicate, Task: ref, Field: field, Message: fmt.Sprintf("%s is listed twice", clip(d))})
				continue
			}
			seen[d] = true
			dep, ok := first[d]
			switch {
			case d == t.ID:
				add(Issue{Severity: Error, Code: CodeCycle, Task: ref, Field: field, Message: "the task depends on itself; remove it"})
			case !ok:
				hint := "name an existing task id"
				// A typo: a few edits, fewer for a short id.
				if near := textx.Closest(d, ids, min(4, 1+len(d)/3)); near != "" {
					hint = fmt.Sprintf("did you mean %q?", near)
				}
				add(Issue{Severity: Error, Code: CodeUnknownDep, Task: ref, Field: field,
					Message: fmt.Sprintf("unknown task %q; %s", clip(d), hint)})
			case t.Level > 0 && dep.Level > 0 && dep.Level >= t.Level:
				rel := "the same level"
				if dep.Level > t.Level {
					rel = "a higher level"
				}
				add(Issue{Severity: Error, Code: CodeDepLevel, Task: ref, Tasks: nil, Field: "dependencies",
					Message: fmt.Sprintf("%s (level %d) depends on %s (level %d), %s; a dependency must be in a strictly lower level (fix: zerg graph relevel)",
						ref, t.Level, d, dep.Level, rel)})
			}
		}
		if t.Verification == nil || strings.TrimSpace(t.Verification.Command) == "" {
			add(Issue{Severity: Warning, Code: CodeNoVerify, Task: ref, Field: "verification",
				Message: "no command; zerg cannot check this task's work before committing it"})
		} else if why := CannotFail(t.Verification.Command); why != "" && !t.NoChanges && len(t.Files.Create)+len(t.Files.Modify) > 0 {
			add(Issue{Severity: Warning, Code: CodeCannotFail, Task: ref, Field: "verification.command",
				Message: fmt.Sprintf("%q can never fail (%s), though the task %s: it checks nothing the task delivers; let it fail when the work is not done (zerg check also finds commands that pass on the base already)",
					strings.TrimSpace(t.Verification.Command), why, t.delivers())})
		}
		if t.Level > 1 && len(t.Dependencies) == 0 {
			add(Issue{Severity: Warning, Code: CodeUnreachable, Task: ref, Field: "dependencies",
				Message: fmt.Sprintf("level %d task with no dependencies: nothing from level 1 leads to it; it could start at level 1", t.Level)})
		}
		if len(t.Consumers) > 0 && strings.TrimSpace(t.IntegrationTest) == "" {
			add(Issue{Severity: Warning, Code: CodeNoIntegTest, Task: ref, Field: "integration_test",
				Message: fmt.Sprintf("the task has %d consumer(s) but no integration_test", len(t.Consumers))})
		}
		for i, c := range t.Consumers {
			if _, ok := first[c]; !ok {
				add(Issue{Severity: Warning, Code: CodeUnknownRef, Task: ref, Field: fmt.Sprintf("consumers[%d]", i),
					Message: fmt.Sprintf("unknown task %q", clip(c))})
			}
		}
		issues = append(issues, checkPaths(t, ref, opts)...)
	}

	if cycle := findCycle(g, first); len(cycle) > 0 {
		add(Issue{Severity: Error, Code: CodeCycle, Task: cycle[0], Tasks: cycle, Field: "dependencies",
			Message: fmt.Sprintf("dependency cycle %s → %s (→ = depends on); remove one of these dependencies", strings.Join(cycle, " → "), cycle[0])})
	}
	issues = append(issues, ownershipConflicts(g, first)...)
	return issues
}

// checkPaths rejects paths that could reach outside the repository.
func checkPaths(t *Task, ref string, opts Options) []Issue {
	var issues []Issue
	lists := []struct {
		field string
		paths []string
	}{{"files.create", t.Files.Create}, {"files.modify", t.Files.Modify}, {"files.read", t.Files.Read}}
	inCreate := make(map[string]bool, len(t.Files.Create))
	for _, p := range t.Files.Create {
		inCreate[cleanPath(p)] = true
	}
	for _, l := range lists {
		for i, p := range l.paths {
			field := fmt.Sprintf("%s[%d]", l.field, i)
			if why := unsafePath(p); why != "" {
				issues = append(issues, Issue{Severity: Error, Code: CodeUnsafePath, Task: ref, Field: field, Path: p,
					Message: fmt.Sprintf("%q %s; use a path relative to the repository root", clip(p), why)})
				continue
			}
			if opts.RepoRoot != "" {
				if esc := escapesViaSymlink(opts.RepoRoot, p); esc != "" {
					issues = append(issues, Issue{Severity: Error, Code: CodeUnsafePath, Task: ref, Field: field, Path: p,
						Message: fmt.Sprintf("%q leaves the repository through the symlink %s; use a path inside the repository", clip(p), esc)})
				}
			}
			if opts.Protected != nil && l.field != "files.read" {
				if is, ok := protectedIssue(opts.Protected, p); ok {
					is.Task, is.Field, is.Path = ref, field, p
					issues = append(issues, is)
				}
			}
			if l.field == "files.modify" && inCreate[cleanPath(p)] {
				issues = append(issues, Issue{Severity: Warning, Code: CodeSelfConflict, Task: ref, Field: field, Path: p,
					Message: fmt.Sprintf("%q is in both create and modify; keep it in one", clip(p))})
			}
		}
	}
	return issues
}

// protectedIssue judges an owned path against the protected ones. A file
// that is protected, or stands where a directory of protected paths is,
// could never be changed: an error. A directory ("dir/") or a glob is an
// error only when it is protected itself; a directory that holds protected
// paths is a warning, since the task may well leave them alone.
func protectedIssue(prot ProtectedPaths, p string) (Issue, bool) {
	c := cleanPath(p)
	dir := strings.HasSuffix(p, "/")
	pat, ok := prot.Covers(c)
	if !ok && !dir && !strings.ContainsAny(c, "*?[{") {
		pat, ok = prot.Match(c)
	}
	if ok {
		return Issue{Severity: Error, Code: CodeProtected,
			Message: fmt.Sprintf("%q is protected by %q (zerg's list of git, zerg, Claude Code, CI and hook files, plus security.protected_paths): no worker may add, change or delete it, whatever its task owns; leave it out of the task and make that change yourself", clip(p), pat)}, true
	}
	if pat, ok := prot.Match(c); ok && dir {
		return Issue{Severity: Warning, Code: CodeProtected,
			Message: fmt.Sprintf("%q holds paths protected by %q: a change to them will be refused at commit, whatever the task owns", clip(p), pat)}, true
	}
	return Issue{}, false
}

// unsafePath says why a path is not a plain repository-relative path, or "".
func unsafePath(p string) string {
	switch {
	case strings.TrimSpace(p) == "":
		return "is empty"
	case strings.ContainsRune(p, 0):
		return "contains a NUL byte"
	case hasControl(p):
		return "contains a control character (an escape, a newline, a bidi control)"
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`):
		return "is absolute"
	case len(p) >= 2 && p[1] == ':' && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z'):
		return "is absolute (a drive letter)"
	case strings.HasPrefix(p, "~"):
		return "starts with ~ (the home directory)"
	}
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return "contains '..'"
		}
	}
	if pathx.Within(".git", cleanPath(p)) {
		return "is inside .git"
	}
	return ""
}

func hasControl(s string) bool {
	_, at := term.FirstControl(s)
	return at >= 0
}

func cleanPath(p string) string {
	c := path.Clean(strings.ReplaceAll(p, `\`, "/"))
	return strings.TrimPrefix(c, "./")
}

// escapesViaSymlink resolves the longest existing prefix of p inside root and
// returns the symlink that leads outside, or "".
func escapesViaSymlink(root, p string) string {
	rootReal, err := filepath.EvalSymlinks(root)
	if err != nil {
		return ""
	}
	parts := strings.Split(cleanPath(p), "/")
	cur := root
	for _, part := range parts {
		if isGlob(part) {
			return ""
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return ""
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return ""
			}
			if !pathx.Within(rootReal, real) {
				r, _ := filepath.Rel(root, cur)
				return r
			}
		}
	}
	return ""
}

func isGlob(s string) bool { return strings.ContainsAny(s, "*?[{") }

// findCycle returns the ids of one dependency cycle (longer than one task), or nil.
// Iterative DFS: a 10,000-task chain must not need a deep stack.
func findCycle(g *Graph, byID map[string]*Task) []string {
	const (
		white = iota
		grey
		black
	)
	color := make(map[string]int, len(byID))
	type frame struct {
		id   string
		next int
	}
	for _, root := range g.Tasks {
		if root.ID == "" || byID[root.ID] != root || color[root.ID] != white {
			continue
		}
		stack := []frame{{id: root.ID}}
		color[root.ID] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			t := byID[top.id]
			if top.next >= len(t.Dependencies) {
				color[top.id] = black
				stack = stack[:len(stack)-1]
				continue
			}
			d := t.Dependencies[top.next]
			top.next++
			if d == top.id || byID[d] == nil {
				continue // self-dependency and unknown ids are reported elsewhere
			}
			switch color[d] {
			case grey:
				var cyc []string
				for i := len(stack) - 1; i >= 0; i-- {
					cyc = append(cyc, stack[i].id)
					if stack[i].id == d {
						break
					}
				}
				// The stack walks dependents → dependencies; print in dependency order.
				slices.Reverse(cyc)
				return rotateMin(cyc)
			case white:
				color[d] = grey
				stack = append(stack, frame{id: d})
			}
		}
	}
	return nil
}

// rotateMin starts the cycle at its smallest id so the message is stable.
func rotateMin(c []string) []string {
	m := 0
	for i := range c {
		if c[i] < c[m] {
			m = i
		}
	}
	return append(append([]string{}, c[m:]...), c[:m]...)
}

// ownershipConflicts finds paths owned (created or modified) by two tasks of the
// same level. Literal paths conflict when equal, or when one is a directory
// ("dir/") containing the other; a glob conflicts with the literal paths it
// matches; two globs that might overlap are a warning.
func ownershipConflicts(g *Graph, byID map[string]*Task) []Issue {
	type owner struct {
		task string
		raw  string
	}
	type levelIndex struct {
		literal map[string][]owner
		dirs    []owner // "dir/" entries, matched as dir/**
		globs   []owner
	}
	levels := map[int]*levelIndex{}
	for _, t := range g.Tasks {
		if t.Level < 1 || t.ID == "" || byID[t.ID] != t {
			continue
		}
		li := levels[t.Level]
		if li == nil {
			li = &levelIndex{literal: map[string][]owner{}}
			levels[t.Level] = li
		}
		seen := map[string]bool{}
		for _, p := range t.Files.Owned() {
			if unsafePath(p) != "" {
				continue
			}
			c := cleanPath(p)
			if seen[c] {
				continue
			}
			seen[c] = true
			switch {
			case isGlob(c):
				li.globs = append(li.globs, owner{t.ID, c})
			case strings.HasSuffix(p, "/"):
				li.dirs = append(li.dirs, owner{t.ID, c})
			default:
				li.literal[c] = append(li.literal[c], owner{t.ID, c})
			}
		}
	}
	var issues []Issue
	// conflict reports tasks of one level that own the same path p, or (no
	// path) may own the same files; what names it in the message.
	conflict := func(level int, p, what string, tasks []string, sev Severity, code, verb string) {
		slices.Sort(tasks)
		tasks = slices.Compact(tasks)
		if len(tasks) < 2 {
			return
		}
		issues = append(issues, Issue{Severity: sev, Code: code, Task: tasks[0], Tasks: tasks, Field: "files", Path: p,
			Message: fmt.Sprintf("%s %s at level %d; only one task of a level may create or modify a path (give it to one task, or move one to another level)", verb, what, level)})
	}
	levelNums := make([]int, 0, len(levels))
	for l := range levels {
		levelNums = append(levelNums, l)
	}
	slices.Sort(levelNums)
	for _, l := range levelNums {
		li := levels[l]
		paths := make([]string, 0, len(li.literal))
		for p := range li.literal {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		for _, p := range paths {
			if owners := li.literal[p]; len(owners) > 1 {
				ids := make([]string, len(owners))
				for i, o := range owners {
					ids[i] = o.task
				}
				conflict(l, p, p, ids, Error, CodeOwnership, "both own")
			}
		}
		patterns := append(append([]owner{}, li.dirs...), li.globs...)
		for i, pat := range patterns {
			entry := pat.raw
			if i < len(li.dirs) {
				entry += "/"
			}
			for _, p := range paths {
				if EntryOwns(entry, p) {
					for _, o := range li.literal[p] {
						if o.task != pat.task {
							conflict(l, p, p, []string{pat.task, o.task}, Error, CodeOwnership, "both own")
						}
					}
				}
			}
			for _, other := range patterns[i+1:] {
				if other.task != pat.task && EntriesMayOverlap(pat.raw, other.raw) {
					// Two patterns are not one path: the message names both.
					conflict(l, "", pat.raw+" and "+other.raw, []string{pat.task, other.task}, Warning, CodeGlobOverlap, "may both own files matching")
				}
			}
		}
	}
	return issues
}

// delivers says what the task writes: "creates a, b and modifies c".
func (t *Task) delivers() string {
	var parts []string
	if len(t.Files.Create) > 0 {
		parts = append(parts, "creates "+strings.Join(t.Files.Create, ", "))
	}
	if len(t.Files.Modify) > 0 {
		parts = append(parts, "modifies "+strings.Join(t.Files.Modify, ", "))
	}
	return strings.Join(parts, " and ")
}
