package bash

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// The command line of a Bash call is parsed by mvdan.cc/sh's bash parser;
// one walker then lowers its syntax tree to the simple commands the policy
// judges (bashCmd), in execution order, for both modes.
//
// In strict mode (subprocess mode, where this check is the boundary) the
// walker refuses everything whose effect depends on run time state:
// variable and parameter expansion ($X, ${…}), which could also print the
// credentials in the worker's environment, arithmetic, $'…' and $"…"
// quoting, process substitution, brace ranges, bracket patterns with quotes
// inside, extended patterns, case, [[ … ]], functions, coproc, arrays, and a
// for loop over computed words or a pattern. The loop variable of a for
// loop over listed words is bound to each word in turn, and the body is
// walked once per word; the special parameters $? $$ $! $# $- are numbers
// or flags, computed but harmless. Refusing is always safe: the worker gets
// a reason and can write a simpler command.
//
// In lenient mode (sandbox mode, where the sandbox is the boundary and the
// check only spots what reaches outside) it accepts all of that, keeps the
// words it cannot know as computed, still finds the commands of every
// substitution, loop, branch and function body, and records the variables
// the line expands.

// bashWord is one word after quote removal.
type bashWord struct {
	raw     string // the source text
	lit     string // the value after quote removal, without substitutions
	dynamic bool   // contains a command substitution or an expansion: the value is unknown
	split   bool   // an expansion outside double quotes: its output is split and globbed
	glob    int    // index in lit of the first unquoted * ? or bracket expression, or -1
	pat     string // when glob >= 0: the word as a path.Match pattern, quoted characters escaped
	tilde   bool   // an unquoted ~ at the start (or after = or :), or (lenient) $HOME at the start
	quoted  bool   // some part was quoted or escaped
}

type bashRedir struct {
	op     string // > >> >| < <> &> &>> >& <& << <<- <<<
	target bashWord
}

// bashCmd is one simple command. Commands of substitutions come before the
// command that uses them, in execution order.
type bashCmd struct {
	assigns []bashWord
	words   []bashWord
	redirs  []bashRedir
	// andNext: the command is a pipeline of its own followed by &&: the
	// next command of the list runs only if this one succeeded (a cd
	// there has taken effect).
	andNext bool
}

const (
	maxBashDepth = 8
	// maxLoopWords bounds the words of one for loop: its body is checked
	// once per word.
	maxLoopWords = 16
	// maxLoopCmds bounds the commands the loops of a line unroll to.
	maxLoopCmds = 4096
	// maxBraceWords bounds the words one brace expansion makes.
	maxBraceWords = 64
)

// shellWalker lowers a syntax tree to simple commands.
type shellWalker struct {
	src     string
	lenient bool
	depth   int
	cmds    []*bashCmd
	// vars are for-loop variables bound to the word of the current pass
	// (strict mode).
	vars map[string]string
	// refs are the names of the variables the line expands (lenient).
	refs []string
	// err is the first thing only lenient mode accepts (strict).
	err error
}

// parseBash parses a command line nested depth deep (an sh -c string: 1 or
// more) into its simple commands, strictly.
func parseBash(src string, depth int) ([]*bashCmd, error) {
	w := &shellWalker{src: src, depth: depth}
	err := w.parse()
	return w.cmds, err
}

// parseBashLenient parses a command line in lenient mode and also returns
// the names of the variables it expands.
func parseBashLenient(src string) ([]*bashCmd, []string, error) {
	w := &shellWalker{src: src, lenient: true}
	err := w.parse()
	return w.cmds, w.refs, err
}

func (w *shellWalker) parse() error {
	if w.depth > maxBashDepth {
		return errors.New("nested too deeply")
	}
	// The parser skips NUL bytes and reads a carriage return as a blank
	// (\r\n as a newline), bash as a character of the word; a trailing
	// backslash bash drops, but a line joined to another by whatever runs
	// it would go on there. Strict mode refuses them rather than judge
	// another line; lenient mode judges the words as parsed.
	if strings.ContainsAny(w.src, "\x00\r") {
		w.strict("a NUL byte or a carriage return in the command")
	}
	if n := len(w.src) - len(strings.TrimRight(w.src, `\`)); n%2 == 1 {
		w.strict("trailing backslash")
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(w.src), "")
	if err == nil {
		err = w.stmts(f.Stmts)
	}
	if w.err != nil {
		return w.err // it came first: the walk stops at any other error
	}
	return err
}

// strict refuses what only lenient mode accepts: in strict mode the first
// such thing is the line's error, which parse returns; the walk goes on as
// in lenient mode until then.
func (w *shellWalker) strict(format string, a ...any) {
	if !w.lenient && w.err == nil {
		w.err = fmt.Errorf(format, a...)
	}
}

func (w *shellWalker) text(n syntax.Node) string {
	return w.src[n.Pos().Offset():n.End().Offset()]
}

func (w *shellWalker) stmts(list []*syntax.Stmt) error {
	for _, s := range list {
		if err := w.stmt(s, false); err != nil {
			return err
		}
	}
	return nil
}

// nested walks a list one level deeper: a subshell, a substitution.
func (w *shellWalker) nested(list []*syntax.Stmt) error {
	w.depth++
	defer func() { w.depth-- }()
	if w.depth > maxBashDepth {
		return errors.New("nested too deeply")
	}
	return w.stmts(list)
}

// stmt walks one statement; andNext says a && follows it.
func (w *shellWalker) stmt(s *syntax.Stmt, andNext bool) error {
	if s.Coprocess || s.Disown {
		return errors.New("unsupported operator")
	}
	andNext = andNext && !s.Negated
	cmd := &bashCmd{andNext: andNext}
	var err error
	switch x := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		err = w.call(cmd, x)
	case *syntax.DeclClause:
		// declare, export, local …: a command whose arguments may be
		// assignments.
		cmd.words = []bashWord{{raw: x.Variant.Value, lit: x.Variant.Value, glob: -1}}
		for _, a := range x.Args {
			var bw bashWord
			if bw, err = w.assign(a); err != nil {
				break
			}
			cmd.words = append(cmd.words, bw)
		}
	default:
		// The redirections of a compound command are a command of their
		// own, checked like any other redirection.
		cmd.andNext = false
		if err = w.compound(x, andNext); err == nil && len(s.Redirs) == 0 {
			return nil
		}
	}
	if err != nil {
		return err
	}
	if err := w.redirs(cmd, s.Redirs); err != nil {
		return err
	}
	w.cmds = append(w.cmds, cmd)
	return nil
}

func (w *shellWalker) compound(c syntax.Command, andNext bool) error {
	switch x := c.(type) {
	case *syntax.BinaryCmd:
		pipe := x.Op == syntax.Pipe || x.Op == syntax.PipeAll
		if !pipe && x.Op != syntax.AndStmt && x.Op != syntax.OrStmt {
			return fmt.Errorf("unsupported operator %s", x.Op)
		}
		// X runs first: a cd there is a chain's only before &&; in a
		// pipeline neither side's cd reaches what follows.
		if err := w.stmt(x.X, x.Op == syntax.AndStmt); err != nil {
			return err
		}
		return w.stmt(x.Y, andNext && !pipe)
	case *syntax.Subshell:
		return w.nested(x.Stmts)
	case *syntax.Block:
		return w.stmts(x.Stmts)
	case *syntax.IfClause:
		for ; x != nil; x = x.Else {
			if err := w.stmts(x.Cond); err != nil {
				return err
			}
			if err := w.stmts(x.Then); err != nil {
				return err
			}
		}
		return nil
	case *syntax.WhileClause:
		if err := w.stmts(x.Cond); err != nil {
			return err
		}
		return w.stmts(x.Do)
	case *syntax.ForClause:
		return w.forClause(x)
	case *syntax.TimeClause:
		if x.Stmt == nil {
			return nil // a bare time: times nothing
		}
		return w.stmt(x.Stmt, andNext)
	case *syntax.CaseClause:
		w.strict("case is not allowed; use if")
		if _, err := w.word(x.Word); err != nil {
			return err
		}
		for _, it := range x.Items {
			for _, p := range it.Patterns {
				if _, err := w.word(p); err != nil {
					return err
				}
			}
			if err := w.stmts(it.Stmts); err != nil {
				return err
			}
		}
		return nil
	case *syntax.TestClause:
		w.strict("[[ … ]] is not allowed; use test or [")
		return w.scan(x.X)
	case *syntax.ArithmCmd:
		w.strict("arithmetic (( )) is not allowed")
		return w.scan(x.X)
	case *syntax.LetClause:
		w.strict("let is not allowed (arithmetic)")
		return w.scan(x)
	case *syntax.FuncDecl:
		// Its body's commands are checked where it is defined.
		w.strict("functions are not allowed")
		return w.stmt(x.Body, false)
	case *syntax.CoprocClause:
		w.strict("coproc is not allowed")
		return w.stmt(x.Stmt, false)
	}
	return fmt.Errorf("unsupported command %T", c)
}

// forClause walks a for (or select) loop. In strict mode the words must
// be plain literals; the body is walked once per word with the loop
// variable bound to it, so every command the loop can run is checked as it
// will run. In lenient mode the body is walked once.
func (w *shellWalker) forClause(x *syntax.ForClause) error {
	var name string
	var values []string
	switch l := x.Loop.(type) {
	case *syntax.CStyleLoop:
		w.strict("arithmetic for (( )) is not allowed")
		if err := w.scan(l); err != nil {
			return err
		}
	case *syntax.WordIter:
		name = l.Name.Value
		if !syntax.ValidName(name) {
			return fmt.Errorf("for %s: not a variable name", name)
		}
		if shellVariable(name) {
			w.strict("for %s: the loop would set %s, which changes how the shell runs what follows; use another name", name, name)
		}
		if !l.InPos.IsValid() {
			w.strict("for %s without a list of words is not allowed", name)
		}
		var words []bashWord
		for _, it := range l.Items {
			ws, err := w.word(it)
			if err != nil {
				return err
			}
			words = append(words, ws...)
		}
		if w.lenient {
			break
		}
		if len(words) == 0 {
			return fmt.Errorf("for %s over no words", name)
		}
		if len(words) > maxLoopWords {
			return fmt.Errorf("for %s over more than %d words", name, maxLoopWords)
		}
		for _, bw := range words {
			if bw.dynamic || bw.glob >= 0 || bw.tilde {
				return fmt.Errorf("for %s over %s, a word computed at run time or a pattern; list the words", name, bw.raw)
			}
			values = append(values, bw.lit)
		}
	default:
		return fmt.Errorf("unsupported loop %T", x.Loop)
	}
	if values == nil {
		return w.stmts(x.Do)
	}
	outer := w.vars
	defer func() { w.vars = outer }()
	for _, v := range values {
		if len(w.cmds) > maxLoopCmds {
			return errors.New("loops too long to check; list fewer words")
		}
		w.vars = map[string]string{}
		maps.Copy(w.vars, outer)
		w.vars[name] = v
		before := w.err
		err := w.stmts(x.Do)
		if before == nil && w.err != nil {
			w.err = fmt.Errorf("for %s: %v", name, w.err)
		}
		if err != nil {
			return fmt.Errorf("for %s: %v", name, err)
		}
	}
	return nil
}

// isAssignment reports whether a word is NAME=… or NAME+=… (env's
// arguments).
func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	return ok && syntax.ValidName(strings.TrimSuffix(name, "+"))
}

// call lowers a simple command's assignments and words.
func (w *shellWalker) call(cmd *bashCmd, x *syntax.CallExpr) error {
	for _, a := range x.Assigns {
		bw, err := w.assign(a)
		if err != nil {
			return err
		}
		cmd.assigns = append(cmd.assigns, bw)
	}
	for _, a := range x.Args {
		ws, err := w.word(a)
		if err != nil {
			return err
		}
		cmd.words = append(cmd.words, ws...)
	}
	return nil
}

// assign lowers NAME=value (or a declare argument) to one word, "NAME=" and
// the value after quote removal.
func (w *shellWalker) assign(a *syntax.Assign) (bashWord, error) {
	if a.Index != nil || a.Array != nil {
		w.strict("arrays are not allowed")
		// The index, the value of x[i]=v and the array's elements.
		if err := w.scan(a); err != nil {
			return bashWord{}, err
		}
		return bashWord{raw: w.text(a), lit: w.text(a), glob: -1, dynamic: true}, nil
	}
	if a.Naked && a.Name == nil {
		return w.single(a.Value, false) // declare's option or computed word
	}
	prefix := a.Name.Value
	if !a.Naked {
		prefix += "="
		if a.Append {
			prefix = a.Name.Value + "+="
		}
	}
	bw := bashWord{raw: prefix, lit: prefix, glob: -1}
	if a.Value != nil {
		v, err := w.convert(a.Value, true)
		if err != nil {
			return bw, err
		}
		bw = v
		bw.raw, bw.lit = prefix+v.raw, prefix+v.lit
		if v.glob >= 0 {
			bw.glob = v.glob + len(prefix)
		}
	}
	return bw, nil
}

// redirs lowers a statement's redirections; the here-document bodies are
// walked for the commands they expand.
func (w *shellWalker) redirs(cmd *bashCmd, rs []*syntax.Redirect) error {
	for _, r := range rs {
		if r.N != nil && !isFD(r.N.Value) {
			w.strict("redirection %s%s is not allowed", r.N.Value, r.Op)
		}
		t, err := w.single(r.Word, true)
		if err != nil {
			return err
		}
		if r.Hdoc != nil {
			if t.dynamic {
				return errors.New("bad here-document delimiter")
			}
			// Like bash, an unquoted delimiter expands the body; a $ or `
			// in it is refused (strict) even where bash keeps it as text.
			if !t.quoted && strings.ContainsAny(w.text(r.Hdoc), "$`") {
				w.strict("expansion in a here-document; quote its delimiter (<<'EOF')")
				if err := w.scan(r.Hdoc); err != nil {
					return err
				}
			}
		}
		cmd.redirs = append(cmd.redirs, bashRedir{op: r.Op.String(), target: t})
	}
	return nil
}

// single lowers a word that is not brace-expanded (an assignment's value,
// a declare argument) or may not be (a redirection's target: more than
// one word is an error for bash).
func (w *shellWalker) single(x *syntax.Word, redirect bool) (bashWord, error) {
	if redirect && !w.lenient {
		if _, ok := splitBraces(x); ok {
			return bashWord{}, errors.New("a brace list as a redirection target")
		}
	}
	return w.convert(x, false)
}

// word lowers a word to the words its brace lists expand to.
func (w *shellWalker) word(x *syntax.Word) ([]bashWord, error) {
	cp, ok := splitBraces(x)
	if !ok {
		bw, err := w.convert(x, false)
		return []bashWord{bw}, err
	}
	if braceRange(cp) {
		w.strict("a brace range is not allowed; list the words")
		bw, err := w.convert(x, false) // lenient: the braces as they are
		return []bashWord{bw}, err
	}
	// Lazily: lists side by side multiply ({a,b} twenty times is a
	// million words), so the count stops the expansion, not the memory.
	var out []bashWord
	for a, err := range expand.BracesSeq(nil, cp) {
		if err != nil || len(out) == maxBraceWords {
			return nil, fmt.Errorf("a brace list of more than %d words", maxBraceWords)
		}
		bw, err := w.convert(a, false)
		if err != nil {
			return nil, err
		}
		bw.raw = w.text(x)
		out = append(out, bw)
	}
	return out, nil
}

// splitBraces returns a copy of x with its brace lists split out, and
// whether it has any.
func splitBraces(x *syntax.Word) (*syntax.Word, bool) {
	cp := &syntax.Word{Parts: slices.Clone(x.Parts)}
	syntax.SplitBraces(cp)
	return cp, slices.ContainsFunc(cp.Parts, func(p syntax.WordPart) bool { _, ok := p.(*syntax.BraceExp); return ok })
}

// braceRange reports whether a brace-split word holds a range ({1..9}).
func braceRange(x *syntax.Word) bool {
	return slices.ContainsFunc(x.Parts, func(p syntax.WordPart) bool {
		b, ok := p.(*syntax.BraceExp)
		return ok && (b.Sequence || slices.ContainsFunc(b.Elems, braceRange))
	})
}

// wordState accumulates a word's value (b) and the same as a path.Match
// pattern (pb) while its parts are lowered.
type wordState struct {
	bw    bashWord
	b, pb strings.Builder
	// prev is the previous unquoted source byte, for a ~ after = or :.
	prev byte
}

// convert lowers one word (no brace lists left in it). assignValue: the
// value of NAME=…, where a ~ at the start is expanded.
func (w *shellWalker) convert(x *syntax.Word, assignValue bool) (bashWord, error) {
	st := &wordState{bw: bashWord{glob: -1}}
	if s, e := x.Pos(), x.End(); s.IsValid() && e.IsValid() && s.Offset() <= e.Offset() && int(e.Offset()) <= len(w.src) {
		st.bw.raw = w.text(x)
	}
	if assignValue {
		st.prev = '='
	}
	parts := mergeLits(x.Parts)
	for i, p := range parts {
		var err error
		switch p := p.(type) {
		case *syntax.Lit:
			w.lit(st, p.Value, i == 0, i == len(parts)-1)
			continue
		case *syntax.SglQuoted:
			v := p.Value
			if p.Dollar {
				w.strict("$'…' quoting is not allowed")
				v, _, _ = expand.Format(&expand.Config{}, v, nil)
				v, _, _ = strings.Cut(v, "\x00")
			}
			st.quotedText(v)
		case *syntax.DblQuoted:
			if p.Dollar {
				w.strict(`$"…" quoting is not allowed`)
			}
			st.bw.quoted = true
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					st.quotedText(unescapeDouble(l.Value))
				} else if err = w.expansion(st, q, true); err != nil {
					break
				}
			}
		default:
			err = w.expansion(st, p, false)
		}
		if err != nil {
			return st.bw, err
		}
		st.prev = 0
	}
	st.bw.lit = st.b.String()
	if st.bw.glob >= 0 {
		st.bw.pat = st.pb.String()
	}
	return st.bw, nil
}

// mergeLits joins adjacent literal parts (brace expansion leaves them
// apart), so a pattern is read whole.
func mergeLits(parts []syntax.WordPart) []syntax.WordPart {
	var out []syntax.WordPart
	for _, p := range parts {
		if l, ok := p.(*syntax.Lit); ok && len(out) > 0 {
			if prev, ok := out[len(out)-1].(*syntax.Lit); ok {
				out[len(out)-1] = &syntax.Lit{Value: prev.Value + l.Value}
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// quotedText appends quoted text: literal, also in the pattern.
func (st *wordState) quotedText(s string) {
	st.bw.quoted = true
	st.b.WriteString(s)
	for i := 0; i < len(s); i++ {
		patLit(&st.pb, s[i])
	}
}

// unescapeDouble removes the backslashes double quotes give a meaning to.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// lit lowers unquoted literal text: backslash escapes, pattern characters,
// a leading ~.
func (w *shellWalker) lit(st *wordState, s string, first, last bool) {
	for j := 0; j < len(s); j++ {
		c := s[j]
		switch c {
		case '\\':
			if j+1 < len(s) {
				j++
				if s[j] != '\n' {
					st.b.WriteByte(s[j])
					patLit(&st.pb, s[j])
					st.bw.quoted = true
				}
			}
			st.prev = 0
			continue
		case '*', '?':
			if st.bw.glob < 0 {
				st.bw.glob = st.b.Len()
			}
			st.b.WriteByte(c)
			st.pb.WriteByte(c)
		case '[':
			class, n := w.bracket(s[j:], last)
			if n == 0 {
				// no closing ]: bash keeps the [ as it is
				st.b.WriteByte(c)
				patLit(&st.pb, c)
				break
			}
			if st.bw.glob < 0 {
				st.bw.glob = st.b.Len()
			}
			st.b.WriteString(s[j : j+n])
			st.pb.WriteString(class)
			j += n - 1
		case '=':
			if first && j == 0 && j+1 < len(s) && s[j+1] != '=' {
				// zsh's =cmd is the path of the program cmd
				w.strict("%s: zsh reads a word starting with = as the path of a program; quote it", s)
			}
			st.b.WriteByte(c)
			patLit(&st.pb, c)
		case '~':
			if (first && j == 0) || st.prev == '=' || st.prev == ':' {
				st.bw.tilde = true
			}
			st.b.WriteByte(c)
			st.pb.WriteByte(c)
		default:
			st.b.WriteByte(c)
			patLit(&st.pb, c)
		}
		st.prev = c
	}
}

// bracket reads the bracket expression at the start of s ([abc], [!a-z],
// []x]) and returns it as a path.Match class and its length. A [ without a
// closing ] in the same word is a literal character for bash: n is 0 then.
// Quotes, escapes, slashes, nested [ and POSIX classes inside are refused
// (strict) rather than interpreted; last says no quoted or expanded part
// follows s in the word, where the ] could be.
func (w *shellWalker) bracket(s string, last bool) (class string, n int) {
	j := 1
	neg := false
	if j < len(s) && (s[j] == '!' || s[j] == '^') {
		neg = true
		j++
	}
	first := j
	if j < len(s) && s[j] == ']' {
		j++
	}
	for ; j < len(s) && s[j] != ']'; j++ {
		if strings.IndexByte("\\{}[/$", s[j]) >= 0 {
			w.strict("a bracket pattern with %q in it", s[j])
			return "", 0
		}
	}
	if j >= len(s) {
		if !last {
			w.strict("a bracket pattern with a quote or an expansion in it")
			return "", 0
		}
		return "", 0
	}
	body := s[first:j]
	var cb strings.Builder
	cb.WriteByte('[')
	if neg {
		cb.WriteByte('^')
	}
	for k := 0; k < len(body); k++ {
		if k+2 < len(body) && body[k+1] == '-' {
			patLit(&cb, body[k])
			cb.WriteByte('-')
			patLit(&cb, body[k+2])
			k += 2
			continue
		}
		patLit(&cb, body[k])
	}
	cb.WriteByte(']')
	return cb.String(), j + 1
}

// patLit appends the literal byte c to a pattern, escaped when Match would
// read it as a metacharacter.
func patLit(pb *strings.Builder, c byte) {
	if strings.IndexByte(`*?[]\-^`, c) >= 0 {
		pb.WriteByte('\\')
	}
	pb.WriteByte(c)
}

// specialParams are $? $$ $! $# $-: numbers or option letters, harmless
// even unquoted.
const specialParams = "?$!#-"

// expansion lowers a part the shell computes: a parameter, a command or
// process substitution, arithmetic, an extended pattern.
func (w *shellWalker) expansion(st *wordState, p syntax.WordPart, inDouble bool) error {
	switch p := p.(type) {
	case *syntax.ParamExp:
		return w.param(st, p, inDouble)
	case *syntax.CmdSubst:
		if p.TempFile || p.ReplyVar {
			return errors.New("unsupported substitution")
		}
		if err := w.nested(p.Stmts); err != nil {
			return err
		}
		st.bw.dynamic = true
		st.bw.split = st.bw.split || !inDouble
		return nil
	case *syntax.ArithmExp:
		if v, ok := constArithm(p.X); ok && !p.Bracket && !p.Unsigned {
			// a number known before the line runs: the word holds it
			// as if it had been written
			for _, c := range []byte(strconv.FormatInt(v, 10)) {
				st.b.WriteByte(c)
				patLit(&st.pb, c)
			}
			return nil
		}
		w.strict("arithmetic $(( )) is not allowed but on numbers (+ - * / %% and parentheses)")
		st.bw.dynamic = true
		return w.scan(p.X)
	case *syntax.ProcSubst:
		w.strict("process substitution is not allowed")
		st.bw.dynamic = true
		return w.nested(p.Stmts)
	case *syntax.ExtGlob:
		w.strict("an extended pattern %s…) is not allowed", p.Op)
		if st.bw.glob < 0 {
			st.bw.glob = st.b.Len()
		}
		st.b.WriteString(p.Op.String() + p.Pattern.Value + ")")
		return nil
	}
	return fmt.Errorf("unsupported word part %T", p)
}

// param lowers $NAME or ${…}: a bound loop variable is its value; in
// strict mode any other is refused, but the special parameters.
func (w *shellWalker) param(st *wordState, p *syntax.ParamExp, inDouble bool) error {
	name := ""
	if p.Param != nil {
		name = p.Param.Value
	}
	plain := p.Param != nil && p.Flags == nil && !p.Excl && !p.Length && !p.Width && !p.IsSet && p.NestedParam == nil &&
		p.Index == nil && len(p.Modifiers) == 0 && p.Slice == nil && p.Repl == nil && p.Names == 0 && p.Exp == nil
	if v, ok := w.vars[name]; ok && plain {
		if !inDouble && strings.ContainsAny(v, " \t\n*?[") {
			return fmt.Errorf("the loop word %q is split or expanded unquoted; quote the variable", v)
		}
		st.quotedText(v)
		return nil
	}
	if plain && p.Short && len(name) == 1 && strings.Contains(specialParams, name) {
		st.bw.dynamic = true
		return nil
	}
	if !w.lenient {
		if p.Short {
			return errors.New("variables ($NAME) are not allowed")
		}
		return errors.New("parameter expansion ${…} is not allowed")
	}
	if name == "HOME" && plain && st.b.Len() == 0 {
		st.bw.tilde = true // $HOME/… is a path in a home directory
	}
	if name != "" {
		w.refs = append(w.refs, name)
	}
	st.bw.dynamic = true
	st.bw.split = st.bw.split || !inDouble
	return w.scan(p)
}

// scan walks a part of the tree that holds no commands of its own (an
// arithmetic expression, [[ … ]], a here-document, a parameter's
// operands) for the substitutions in it, and records the variables it
// expands. In strict mode a parameter is refused as in a word.
func (w *shellWalker) scan(n syntax.Node) error {
	var err error
	syntax.Walk(n, func(n syntax.Node) bool {
		if err != nil {
			return false
		}
		switch x := n.(type) {
		case *syntax.CmdSubst:
			err = w.nested(x.Stmts)
			return false
		case *syntax.ProcSubst:
			w.strict("process substitution is not allowed")
			err = w.nested(x.Stmts)
			return false
		case *syntax.ParamExp:
			if !w.lenient {
				err = w.param(&wordState{}, x, true)
				return false
			}
			if x.Param != nil {
				w.refs = append(w.refs, x.Param.Value)
			}
		}
		return true
	})
	return err
}

// constArithm evaluates an arithmetic expression made only of decimal
// numbers, + - * / % and parentheses, whose value is therefore known before
// the line runs, alike in bash and zsh. ok is false for anything else: a
// name is a variable (and its subscript may run a command), an assignment
// changes one, a leading 0 is octal in bash but not in zsh, and a division
// by zero or an overflow is an error or differs between shells.
func constArithm(x syntax.ArithmExpr) (v int64, ok bool) {
	switch x := x.(type) {
	case *syntax.ParenArithm:
		return constArithm(x.X)
	case *syntax.Word:
		if len(x.Parts) != 1 {
			return 0, false
		}
		l, isLit := x.Parts[0].(*syntax.Lit)
		if !isLit || l.Value == "" || len(l.Value) > 18 || strings.Trim(l.Value, "0123456789") != "" || len(l.Value) > 1 && l.Value[0] == '0' {
			return 0, false
		}
		n, err := strconv.ParseInt(l.Value, 10, 64)
		return n, err == nil
	case *syntax.UnaryArithm:
		n, ok := constArithm(x.X)
		switch {
		case !ok || x.Post:
		case x.Op == syntax.Plus:
			return n, true
		case x.Op == syntax.Minus && n != math.MinInt64:
			return -n, true
		}
	case *syntax.BinaryArithm:
		a, ok1 := constArithm(x.X)
		b, ok2 := constArithm(x.Y)
		if !ok1 || !ok2 {
			return 0, false
		}
		switch x.Op {
		case syntax.Add:
			if r := a + b; (r > a) == (b > 0) {
				return r, true
			}
		case syntax.Sub:
			if r := a - b; (r < a) == (b > 0) {
				return r, true
			}
		case syntax.Mul:
			if r := a * b; a == 0 || r/a == b && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64) {
				return r, true
			}
		case syntax.Quo, syntax.Rem:
			if b == 0 || a == math.MinInt64 && b == -1 {
				return 0, false
			}
			if x.Op == syntax.Quo {
				return a / b, true
			}
			return a % b, true
		}
	}
	return 0, false
}
