package bash

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Pathname expansion, done when the command is judged: the shell lists
// directories to expand a pattern and the command then gets the matches, so
// every directory listed and (for a command that opens its arguments) every
// match is checked, not only the part of the pattern before its first
// wildcard.

// maxGlobMatches bounds the matches of one command line's patterns.
const maxGlobMatches = 5000

// hasMeta reports whether a pattern component has an unescaped wildcard.
func hasMeta(comp string) bool {
	for i := 0; i < len(comp); i++ {
		switch comp[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// unescapePat turns a pattern component without wildcards back into a name.
func unescapePat(comp string) string {
	var b strings.Builder
	for i := 0; i < len(comp); i++ {
		if comp[i] == '\\' && i+1 < len(comp) {
			i++
		}
		b.WriteByte(comp[i])
	}
	return b.String()
}

// expandWord returns what the glob word w becomes from every possible cwd:
// the matches, or the word itself where nothing matches (bash leaves it as
// it is). Every directory the shell lists on the way must be readable.
func (ck *bashChecker) expandWord(w bashWord) ([]string, error) {
	if w.dynamic {
		return nil, fmt.Errorf("a pattern computed at run time (%s)", w.raw)
	}
	if w.tilde {
		return nil, fmt.Errorf("%s names a home directory", w.lit)
	}
	if strings.Contains(w.pat, "**") {
		return nil, fmt.Errorf("a ** pattern (%s); name the directories", w.lit)
	}
	var out []string
	for _, cwd := range ck.cwds {
		if st, err := os.Stat(cwd); !strings.HasPrefix(w.pat, "/") && (err != nil || !st.IsDir()) {
			// A directory a cd in this line goes to, made earlier in
			// it: what the pattern matches there cannot be seen yet.
			return nil, fmt.Errorf("the pattern %s would be expanded in a directory that does not exist yet; run the commands one at a time", w.lit)
		}
		m, err := ck.expandFrom(cwd, w.pat)
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			m = []string{w.lit}
		}
		out = union(out, m)
	}
	return out, nil
}

// expandFrom expands pat from cwd the way bash does by default: "*", "?"
// and a bracket never match a leading "." unless the component starts with a
// literal one; "." and ".." are candidates then (older bash matches them
// with ".*"). A non-final component only matches directories (through
// symlinks, as the shell follows them).
func (ck *bashChecker) expandFrom(cwd, pat string) ([]string, error) {
	type cand struct{ shown, real string }
	cands := []cand{{"", cwd}}
	if strings.HasPrefix(pat, "/") {
		cands = []cand{{"/", "/"}}
	}
	comps := strings.Split(pat, "/")
	for i, comp := range comps {
		last := i == len(comps)-1
		if comp == "" {
			if last && i > 0 {
				// a trailing slash: directories only
				var dirs []cand
				for _, c := range cands {
					if st, err := os.Stat(c.real); err == nil && st.IsDir() {
						dirs = append(dirs, cand{c.shown + "/", c.real})
					}
				}
				cands = dirs
			}
			continue
		}
		join := func(c cand, name string) cand {
			shown := c.shown
			if shown != "" && !strings.HasSuffix(shown, "/") {
				shown += "/"
			}
			return cand{shown + name, c.real + string(filepath.Separator) + name}
		}
		if !hasMeta(comp) {
			name := unescapePat(comp)
			for k := range cands {
				cands[k] = join(cands[k], name)
			}
			continue
		}
		if _, err := filepath.Match(comp, ""); err != nil {
			return nil, fmt.Errorf("a pattern bash and this check could read differently (%s)", pat)
		}
		dotOK := strings.HasPrefix(comp, ".") || strings.HasPrefix(comp, `\.`)
		var next []cand
		for _, c := range cands {
			shown := c.shown
			if shown == "" {
				shown = "."
			}
			// The shell lists this directory.
			if err := ck.checkPathFrom([]string{cwd}, shown, false); err != nil {
				return nil, fmt.Errorf("the pattern %s lists a directory: %w", pat, err)
			}
			entries, err := os.ReadDir(c.real)
			if err != nil {
				continue
			}
			names := make([]string, 0, len(entries)+2)
			if dotOK {
				names = append(names, ".", "..")
			}
			for _, e := range entries {
				names = append(names, e.Name())
			}
			for _, name := range names {
				if strings.HasPrefix(name, ".") && !dotOK && !strings.HasPrefix(comp, "[") {
					continue
				}
				// A shell in the C locale matches bytes, not characters:
				// a non-ASCII name is taken as a match, to be checked.
				if ok, _ := filepath.Match(comp, name); !ok && !strings.ContainsFunc(name, func(r rune) bool { return r >= utf8.RuneSelf }) {
					continue
				}
				nc := join(c, name)
				if !last {
					if st, err := os.Stat(nc.real); err != nil || !st.IsDir() {
						continue
					}
				}
				ck.globMatches++
				if ck.globMatches > maxGlobMatches {
					return nil, errors.New("patterns matching too many files to check; name them")
				}
				next = append(next, nc)
			}
		}
		cands = next
		if len(cands) == 0 {
			return nil, nil
		}
	}
	out := make([]string, len(cands))
	for k, c := range cands {
		out[k] = c.shown
	}
	return out, nil
}
