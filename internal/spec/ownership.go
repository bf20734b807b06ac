package spec

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Ownership has one meaning everywhere zerg asks who may change a path: the
// graph's validation (two tasks of a level owning the same files), the
// worker's hook (which files its tools may write) and the check of a
// result (which changes its task owned). An entry of files.create or
// files.modify is one of:
//
//   - a path: it owns that path;
//   - a directory, written "dir/": it owns dir and everything below it;
//   - a doublestar glob ("gen/*.pb.go", "docs/**"): it owns what it matches.
//
// Paths are slash-separated and relative to the top of the repository.

// OwnEntry is an ownership entry in the form every matcher takes: cleaned,
// without "./", with the trailing "/" of a directory kept.
func OwnEntry(e string) string {
	dir := strings.HasSuffix(e, "/")
	c := cleanPath(e)
	if dir && c != "." {
		c += "/"
	}
	return c
}

// EntryOwns reports whether the ownership entry e owns the path p.
func EntryOwns(e, p string) bool {
	e = OwnEntry(e)
	if dir, ok := strings.CutSuffix(e, "/"); ok {
		return p == dir || strings.HasPrefix(p, e)
	}
	if p == e {
		return true
	}
	ok, err := doublestar.Match(e, p)
	return err == nil && ok
}

// Owns reports whether the task may change p.
func (t *Task) Owns(p string) bool {
	for _, e := range t.Files.Owned() {
		if EntryOwns(e, p) {
			return true
		}
	}
	return false
}

// OwnEntries are the task's ownership entries as every matcher takes them
// (OwnEntry), for the worker's hook.
func (t *Task) OwnEntries() []string {
	var out []string
	for _, e := range t.Files.Owned() {
		out = append(out, OwnEntry(e))
	}
	return out
}

// EntriesMayOverlap reports whether two ownership entries may own a common
// path: one owns the other, or (globs, directories) their literal
// prefixes do not diverge. Conservative: it may say yes for globs that
// never meet.
func EntriesMayOverlap(a, b string) bool {
	a, b = OwnEntry(a), OwnEntry(b)
	if EntryOwns(a, strings.TrimSuffix(b, "/")) || EntryOwns(b, strings.TrimSuffix(a, "/")) {
		return true
	}
	if !isGlob(a) && !isGlob(b) && !strings.HasSuffix(a, "/") && !strings.HasSuffix(b, "/") {
		return false
	}
	pa, pb := literalPrefix(a), literalPrefix(b)
	return strings.HasPrefix(pa, pb) || strings.HasPrefix(pb, pa)
}

// literalPrefix is the part of an entry before its first glob character,
// a directory's with its "/".
func literalPrefix(e string) string {
	if i := strings.IndexAny(e, "*?[{"); i >= 0 {
		return e[:i]
	}
	if strings.HasSuffix(e, "/") {
		return e
	}
	return e + "/"
}

// NamesPath reports whether an entry of the task that is not a glob (a
// path, or a "dir/") owns p: the task names it, which is what
// security.allow_protected asks of a task that changes a protected path.
func (t *Task) NamesPath(p string) bool {
	for _, e := range t.Files.Owned() {
		if !isGlob(e) && EntryOwns(e, p) {
			return true
		}
	}
	return false
}

// MayOverlap reports whether two tasks may own a common path: some entry of
// one may overlap some entry of the other (EntriesMayOverlap, the test the
// graph's validation makes of a level's patterns). The DAG schedule never
// runs two such tasks at once.
func (t *Task) MayOverlap(o *Task) bool {
	for _, a := range t.Files.Owned() {
		for _, b := range o.Files.Owned() {
			if EntriesMayOverlap(a, b) {
				return true
			}
		}
	}
	return false
}
