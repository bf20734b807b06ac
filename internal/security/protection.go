package security

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Protection is what no worker may add, change or delete, built once from
// the config (config.Config.Protection) and read by everything that asks:
// the graph's validation (a task may not own a protected path), the
// worker's hook (it refuses the write), the commit check of an attempt's
// result, and tasks mode's hook. It is zerg's own list
// (DefaultProtected) with security.protected_paths, less what
// security.allow_protected opens to a task that names the path.
type Protection struct {
	patterns []string // as the hook's policy file carries them
	paths    *ProtectedPaths
	open     *Opening // nil opens nothing
}

// NewProtection is DefaultProtected with the extra patterns protected
// (security.protected_paths), opened by allow (security.allow_protected).
// A pattern that is not a valid relative glob, or an opening that
// NewOpening refuses, is an error.
func NewProtection(protected, allow []string) (*Protection, error) {
	p, err := ProtectionOf(append(DefaultProtected(), protected...))
	if err != nil {
		return nil, err
	}
	if len(allow) > 0 {
		if p.open, err = NewOpening(allow); err != nil {
			return nil, fmt.Errorf("security.allow_protected: %w", err)
		}
	}
	return p, nil
}

// ProtectionOf is the protection of exactly these patterns, as Patterns
// gave them (nil: DefaultProtected), with nothing opened: the worker's
// hook rebuilds the run's protection this way from its policy file, which
// carries the task's opened entries instead.
func ProtectionOf(patterns []string) (*Protection, error) {
	if patterns == nil {
		patterns = DefaultProtected()
	}
	paths, err := NewProtectedPaths(patterns)
	if err != nil {
		return nil, err
	}
	return &Protection{patterns: slices.Clone(patterns), paths: paths}, nil
}

// DefaultProtection is zerg's own list, nothing opened: what holds when
// the config's lists cannot be read (config.Validate refuses them first).
func DefaultProtection() *Protection {
	p, _ := ProtectionOf(nil)
	return p
}

// Patterns are the protected globs, zerg's and the config's, for the
// worker's policy file and the commit check.
func (p *Protection) Patterns() []string { return slices.Clone(p.patterns) }

// Opening is security.allow_protected; nil opens nothing.
func (p *Protection) Opening() *Opening { return p.open }

// Match reports the pattern protecting path (ProtectedPaths.Match),
// whatever is opened: zerg review and merge report such a change.
func (p *Protection) Match(path string) (string, bool) { return p.paths.Match(path) }

// OpenedEntries are those of a task's ownership entries that name a path
// allow_protected opens (Opening.OpensEntry): the hook lets the task
// write there, and the commit check lets the change through.
func (p *Protection) OpenedEntries(entries []string) []string {
	var out []string
	for _, e := range entries {
		if p.open.OpensEntry(e) {
			out = append(out, e)
		}
	}
	return out
}

// OpensFor reports whether a change to path is let through for a task
// that names it (named): allow_protected opens it (never git's, zerg's or
// Claude Code's own files).
func (p *Protection) OpensFor(path string, named func(string) bool) bool {
	return p.open.Opens(path) && named(path)
}

// ForEntries is the protection as the graph's validation reads a task's
// ownership entries (spec.Options.Protected): an entry that names an
// opened path (not a glob) is no longer protected for the task that owns
// it.
func (p *Protection) ForEntries() EntryProtection { return EntryProtection{p} }

// EntryProtection is Protection.ForEntries.
type EntryProtection struct{ p *Protection }

// Match is ProtectedPaths.Match of an entry that is not opened.
func (e EntryProtection) Match(entry string) (string, bool) {
	if e.p.open.OpensEntry(entry) {
		return "", false
	}
	return e.p.paths.Match(entry)
}

// Covers is ProtectedPaths.Covers of an entry that is not opened.
func (e EntryProtection) Covers(entry string) (string, bool) {
	if e.p.open.OpensEntry(entry) {
		return "", false
	}
	return e.p.paths.Covers(entry)
}

// RefusesWrite says why a write to the repository-relative path rel is
// refused, "" when protection allows it: a path that is never written
// (git's metadata, zerg's state, Claude Code's settings, whatever the
// lists say), or one a pattern protects that none of the writer's opened
// entries owns (owned: nil when it has none). The hooks refuse at once
// what the commit check would refuse later.
func (p *Protection) RefusesWrite(rel string, owned func(string) bool) string {
	if why := NeverWritten(rel); why != "" {
		return why
	}
	pat, ok := p.paths.Match(rel)
	if !ok || owned != nil && owned(rel) {
		return ""
	}
	return fmt.Sprintf("protected by %q (git, zerg, Claude Code, CI and hook files, security.protected_paths): no worker may write it", pat)
}

// NeverWritten says why a workspace-relative path may never be written,
// whatever the lists say: git metadata anywhere (a hook there runs on the
// next commit), zerg's own state, and Claude Code settings (a hook there
// runs in the next session opened on the merged repository). Empty when
// writable.
func NeverWritten(rel string) string {
	segs := strings.Split(rel, "/")
	for i, seg := range segs {
		switch seg {
		case ".git":
			return "inside .git"
		case ".zerg":
			return "inside .zerg"
		case ".claude":
			if i == len(segs)-2 {
				if ok, _ := path.Match("settings*.json", segs[i+1]); ok {
					return "a Claude Code settings file"
				}
			}
		}
	}
	return ""
}
