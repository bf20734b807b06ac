package spec

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A verification that exits 0 whatever the workspace holds checks nothing:
// `pytest || true`, `go test ./...; true`, `make test; exit 0`, `npm test |
// tee log` (the status of a pipeline is its last command's). Read from the
// shell's own grammar (mvdan.cc/sh, as the hook policy reads commands), not
// from the text, so that `echo "|| true"` is not one and `(pytest || :)` is.
// zerg check runs the commands to find the others that pass on the base
// already.

// CannotFail says why a verification command exits 0 whatever the
// workspace holds ("" when it can fail, or when it cannot be parsed: the
// shell will say so when it runs).
func CannotFail(command string) string {
	command = strings.TrimSpace(command)
	if command == "" {
		return ""
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return ""
	}
	a := statusReader{src: command}
	return a.list(f.Stmts)
}

// statusReader reads statically whether a list of commands always exits 0.
type statusReader struct {
	src string
	// errexit and pipefail are set -e and set -o pipefail, seen so far.
	errexit, pipefail bool
}

// list: the status of a list is its last statement's, unless one before
// it exits the shell (exit 0 anywhere at the top stops there); with set -e
// a failing statement before the last ends the list with its status.
func (a *statusReader) list(stmts []*syntax.Stmt) string {
	for i, s := range stmts {
		if why := a.exitsZero(s); why != "" {
			if i == 0 {
				return "`exit 0` always exits 0"
			}
			return why
		}
		a.noteSet(s)
		if i == len(stmts)-1 {
			why := a.stmt(s)
			if _, simple := s.Cmd.(*syntax.CallExpr); why != "" && i > 0 && simple {
				why = fmt.Sprintf("it ends with `%s`, whose status 0 is the list's whatever `%s` did", a.text(s.Cmd), a.text(stmts[i-1].Cmd))
			}
			return why
		}
		if a.errexit && a.stmt(s) == "" {
			// This one may fail, and set -e ends the list with it.
			return ""
		}
	}
	return ""
}

// exitsZero: a statement that is `exit 0` (or `exit` after a status 0,
// which this reader does not track) ends the shell with 0.
func (a *statusReader) exitsZero(s *syntax.Stmt) string {
	if s.Negated || s.Background {
		return ""
	}
	if c, ok := s.Cmd.(*syntax.CallExpr); ok {
		if w := a.words(c); len(w) == 2 && w[0] == "exit" && w[1] == "0" {
			return "`exit 0` ends it with status 0 whatever ran before"
		}
	}
	return ""
}

// noteSet records set -e / set -o pipefail (and their long forms).
func (a *statusReader) noteSet(s *syntax.Stmt) {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok {
		return
	}
	w := a.words(c)
	if len(w) == 0 || w[0] != "set" {
		return
	}
	// Flags come in clusters (set -euo pipefail): e is errexit, o takes
	// the next word as an option's name.
	for i := 1; i < len(w); i++ {
		opt := w[i]
		on := strings.HasPrefix(opt, "-")
		if !on && !strings.HasPrefix(opt, "+") || opt == "--" {
			continue
		}
		if strings.Contains(opt, "e") {
			a.errexit = on
		}
		if strings.Contains(opt, "o") && i+1 < len(w) {
			i++
			switch w[i] {
			case "errexit":
				a.errexit = on
			case "pipefail":
				a.pipefail = on
			}
		}
	}
}

// stmt says why one statement always exits 0, "" when it may fail.
func (a *statusReader) stmt(s *syntax.Stmt) string {
	if s.Negated {
		return ""
	}
	if s.Background {
		return fmt.Sprintf("`%s &` runs in the background: the status is 0 whatever it does", a.text(s.Cmd))
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		return a.call(c)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.OrStmt:
			if why := a.stmt(c.Y); why != "" {
				return fmt.Sprintf("`|| %s` makes its status 0 whatever `%s` does", a.text(c.Y.Cmd), a.text(c.X.Cmd))
			}
			if why := a.stmt(c.X); why != "" {
				return why
			}
		case syntax.AndStmt:
			if a.stmt(c.X) != "" {
				return a.stmt(c.Y)
			}
		case syntax.Pipe, syntax.PipeAll:
			if a.pipefail {
				if a.stmt(c.X) != "" {
					return a.stmt(c.Y)
				}
				return ""
			}
			if why := a.stmt(c.Y); why != "" {
				return fmt.Sprintf("the status of `%s` is that of its last command, `%s`, which cannot fail: set -o pipefail first", a.text(c), a.text(c.Y.Cmd))
			}
		}
	case *syntax.Block:
		inner := *a
		return inner.list(c.Stmts)
	case *syntax.Subshell:
		inner := *a
		return inner.list(c.Stmts)
	}
	return ""
}

// alwaysZero are the commands whose status is 0 whatever the workspace
// holds.
var alwaysZero = map[string]bool{"true": true, ":": true, "/bin/true": true, "/usr/bin/true": true, "echo": true, "printf": true}

// call: `true`, `:`, `echo …`, `printf …`, `exit 0`, `tee …` (which only
// writes what it reads).
func (a *statusReader) call(c *syntax.CallExpr) string {
	w := a.words(c)
	if len(w) == 0 {
		return "" // an assignment: its status is a substitution's
	}
	switch {
	case alwaysZero[w[0]]:
		return fmt.Sprintf("`%s` always exits 0", a.text(c))
	case w[0] == "exit" && len(w) == 2 && w[1] == "0":
		return "`exit 0` always exits 0"
	case w[0] == "tee" || w[0] == "cat" && len(w) == 1:
		return fmt.Sprintf("`%s` always exits 0", a.text(c))
	}
	return ""
}

// words are a call's arguments as literal text ("" for a word that is not
// a literal: a substitution, a variable).
func (a *statusReader) words(c *syntax.CallExpr) []string {
	out := make([]string, 0, len(c.Args))
	for _, w := range c.Args {
		out = append(out, w.Lit())
	}
	return out
}

// text is the command's source text, one line.
func (a *statusReader) text(n syntax.Node) string {
	if n == nil {
		return ""
	}
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(a.src) || start >= end {
		return ""
	}
	return strings.Join(strings.Fields(a.src[start:end]), " ")
}
