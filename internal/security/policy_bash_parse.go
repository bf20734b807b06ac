package security

import (
	"errors"
	"fmt"
	"strings"
)

// A small, conservative parser for the shell command lines the Bash tool
// runs. It understands lists (; & && || newlines), pipelines (| |&),
// subshells ( … ), quoting, backslashes, comments, redirections, here-documents,
// command substitution ($( … ) and backticks, whose commands are checked like
// any other) and NAME=value prefixes. Everything whose effect depends on run
// time state is refused: variable and parameter expansion ($X, ${…}), which
// could also print the credentials in the worker's environment, arithmetic,
// $'…' quoting, process substitution, brace expansion, bracket patterns with
// quotes or classes inside, and the compound
// commands (if, for, while, case, functions, { …; }), which simply fail to
// match any rule. Refusing is always safe: the worker gets a reason and can
// write a simpler command.

// bashWord is one word after quote removal.
type bashWord struct {
	raw     string // the source text
	lit     string // the value after quote removal, without substitutions
	dynamic bool   // contains a command substitution: the value is unknown
	split   bool   // a command substitution outside double quotes: its output is split and globbed
	glob    int    // index in lit of the first unquoted * ? or bracket expression, or -1
	pat     string // when glob >= 0: the word as a path.Match pattern, quoted characters escaped
	tilde   bool   // an unquoted ~ at the start (or after = or :)
	quoted  bool   // some part was quoted or escaped
}

// patLit appends the literal byte c to a pattern, escaped when Match would
// read it as a metacharacter.
func patLit(pb *strings.Builder, c byte) {
	if strings.IndexByte(`*?[]\-^`, c) >= 0 {
		pb.WriteByte('\\')
	}
	pb.WriteByte(c)
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
}

type heredoc struct {
	delim  string
	quoted bool
	strip  bool
}

type bashParser struct {
	src      string
	pos      int
	depth    int
	cmds     []*bashCmd
	heredocs []heredoc
}

const maxBashDepth = 8

var errEmptyCommand = errors.New("empty command")

// parseBash parses a command line into its simple commands.
func parseBash(src string) ([]*bashCmd, error) {
	return parseBashDepth(src, 0)
}

func parseBashDepth(src string, depth int) ([]*bashCmd, error) {
	if depth > maxBashDepth {
		return nil, errors.New("nested too deeply")
	}
	p := &bashParser{src: src, depth: depth}
	if err := p.parseList(0); err != nil {
		return nil, err
	}
	if !p.eof() {
		return nil, fmt.Errorf("unexpected %q", p.src[p.pos])
	}
	if len(p.heredocs) > 0 {
		return nil, fmt.Errorf("here-document %q has no body", p.heredocs[0].delim)
	}
	return p.cmds, nil
}

func (p *bashParser) eof() bool { return p.pos >= len(p.src) }

func (p *bashParser) peek() byte { return p.at(0) }

func (p *bashParser) at(i int) byte {
	if p.pos+i < len(p.src) {
		return p.src[p.pos+i]
	}
	return 0
}

// skipBlanks skips spaces, tabs and line continuations.
func (p *bashParser) skipBlanks() {
	for !p.eof() {
		switch {
		case p.peek() == ' ' || p.peek() == '\t':
			p.pos++
		case p.peek() == '\\' && p.at(1) == '\n':
			p.pos += 2
		default:
			return
		}
	}
}

// skipSpace also skips newlines (reading pending here-documents) and comments.
func (p *bashParser) skipSpace() error {
	for {
		p.skipBlanks()
		switch p.peek() {
		case '\n':
			p.pos++
			if err := p.readHeredocs(); err != nil {
				return err
			}
		case '#':
			p.skipComment()
		default:
			return nil
		}
	}
}

func (p *bashParser) skipComment() {
	for !p.eof() && p.peek() != '\n' {
		p.pos++
	}
}

// parseList parses pipelines separated by ; & && || and newlines, up to EOF
// or, when stop is ')', the closing parenthesis (not consumed).
func (p *bashParser) parseList(stop byte) error {
	for {
		if err := p.skipSpace(); err != nil {
			return err
		}
		if p.eof() {
			if stop != 0 {
				return errors.New("missing )")
			}
			return nil
		}
		switch c := p.peek(); {
		case c == ')':
			if stop == ')' {
				return nil
			}
			return errors.New("unexpected )")
		case c == ';' || c == '&' || c == '|':
			return errEmptyCommand
		}
		if err := p.parsePipeline(); err != nil {
			return err
		}
		p.skipBlanks()
		switch c := p.peek(); {
		case p.eof(), c == '\n', c == ')', c == '#':
			// the loop handles them
		case c == ';':
			if p.at(1) == ';' || p.at(1) == '&' {
				return errors.New("case syntax")
			}
			p.pos++
		case c == '&' && p.at(1) == '&', c == '|' && p.at(1) == '|':
			p.pos += 2
			if err := p.needCommand(); err != nil {
				return err
			}
		case c == '&':
			p.pos++
		default:
			return fmt.Errorf("unexpected %q", c)
		}
	}
}

// needCommand checks that a command follows && || or |.
func (p *bashParser) needCommand() error {
	if err := p.skipSpace(); err != nil {
		return err
	}
	if c := p.peek(); p.eof() || c == ')' || c == ';' || c == '&' || c == '|' {
		return errEmptyCommand
	}
	return nil
}

func (p *bashParser) parsePipeline() error {
	p.skipBlanks()
	if p.peek() == '!' && (p.at(1) == ' ' || p.at(1) == '\t') {
		p.pos++
	}
	for {
		if err := p.parseCommand(); err != nil {
			return err
		}
		p.skipBlanks()
		if p.peek() == '|' && p.at(1) != '|' {
			p.pos++
			if p.peek() == '&' {
				p.pos++
			}
			if err := p.needCommand(); err != nil {
				return err
			}
			continue
		}
		return nil
	}
}

func (p *bashParser) redirAhead() bool {
	c := p.peek()
	return c == '<' || c == '>' || (c == '&' && p.at(1) == '>')
}

func (p *bashParser) parseCommand() error {
	p.skipBlanks()
	if p.peek() == '(' {
		if p.at(1) == '(' {
			return errors.New("arithmetic (( )) is not allowed")
		}
		p.pos++
		p.depth++
		if p.depth > maxBashDepth {
			return errors.New("nested too deeply")
		}
		if err := p.parseList(')'); err != nil {
			return err
		}
		p.pos++ // ')'
		p.depth--
		cmd := &bashCmd{}
		for {
			p.skipBlanks()
			if !p.redirAhead() {
				break
			}
			if err := p.parseRedir(cmd); err != nil {
				return err
			}
		}
		if len(cmd.redirs) > 0 {
			p.cmds = append(p.cmds, cmd)
		}
		return nil
	}
	cmd := &bashCmd{}
	for {
		p.skipBlanks()
		if p.eof() {
			break
		}
		c := p.peek()
		if c == '\n' || c == ';' || c == '|' || c == ')' || (c == '&' && p.at(1) != '>') {
			break
		}
		if c == '#' {
			p.skipComment()
			break
		}
		if c == '(' {
			return errors.New("unexpected (")
		}
		if p.redirAhead() {
			if err := p.parseRedir(cmd); err != nil {
				return err
			}
			continue
		}
		w, err := p.readWord()
		if err != nil {
			return err
		}
		if !w.quoted && !w.dynamic && isFD(w.lit) && w.lit != "-" && (p.peek() == '<' || p.peek() == '>') {
			// 2>file: the digits are the redirected descriptor.
			if err := p.parseRedir(cmd); err != nil {
				return err
			}
			continue
		}
		if len(cmd.words) == 0 && isAssignment(w.raw) {
			cmd.assigns = append(cmd.assigns, w)
			continue
		}
		cmd.words = append(cmd.words, w)
	}
	if len(cmd.words) == 0 && len(cmd.assigns) == 0 && len(cmd.redirs) == 0 {
		return errEmptyCommand
	}
	p.cmds = append(p.cmds, cmd)
	return nil
}

// isAssignment reports whether the source text of a word is NAME=… or NAME+=….
func isAssignment(raw string) bool {
	i := strings.IndexByte(raw, '=')
	if i <= 0 {
		return false
	}
	name := strings.TrimSuffix(raw[:i], "+")
	if name == "" {
		return false
	}
	for j, c := range name {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || j > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

var redirOps = []string{"&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">>", ">&", ">|", "<", ">"}

func (p *bashParser) parseRedir(cmd *bashCmd) error {
	op := ""
	for _, o := range redirOps {
		if strings.HasPrefix(p.src[p.pos:], o) {
			op = o
			break
		}
	}
	if op == "" {
		return errors.New("bad redirection")
	}
	p.pos += len(op)
	p.skipBlanks()
	if c := p.peek(); p.eof() || strings.IndexByte(" \t\n;&|<>()", c) >= 0 {
		if c == '(' {
			return errors.New("process substitution is not allowed")
		}
		return fmt.Errorf("redirection %s without a target", op)
	}
	w, err := p.readWord()
	if err != nil {
		return err
	}
	if op == "<<" || op == "<<-" {
		if w.dynamic || strings.ContainsAny(w.lit, "\n") {
			return errors.New("bad here-document delimiter")
		}
		p.heredocs = append(p.heredocs, heredoc{delim: w.lit, quoted: w.quoted, strip: op == "<<-"})
	}
	cmd.redirs = append(cmd.redirs, bashRedir{op: op, target: w})
	return nil
}

// readHeredocs reads the bodies of the here-documents started on the line
// that just ended. An unquoted delimiter means the body is expanded: refused
// when it contains $ or a backtick.
func (p *bashParser) readHeredocs() error {
	for _, h := range p.heredocs {
		for {
			if p.eof() {
				return fmt.Errorf("here-document %q is not terminated", h.delim)
			}
			line := p.src[p.pos:]
			if i := strings.IndexByte(line, '\n'); i >= 0 {
				line = line[:i]
				p.pos += i + 1
			} else {
				p.pos = len(p.src)
			}
			cmp := line
			if h.strip {
				cmp = strings.TrimLeft(line, "\t")
			}
			if cmp == h.delim {
				break
			}
			if !h.quoted && strings.ContainsAny(line, "$`") {
				return errors.New("expansion in a here-document; quote its delimiter (<<'EOF')")
			}
		}
	}
	p.heredocs = nil
	return nil
}

// readWord reads one word at the current position.
func (p *bashParser) readWord() (bashWord, error) {
	w := bashWord{glob: -1}
	var b, pb strings.Builder // the literal value, and the same as a pattern
	start := p.pos
	prevRaw := byte(0) // the previous unquoted source byte, for ~ after = or :
loop:
	for !p.eof() {
		c := p.peek()
		switch c {
		case ' ', '\t', '\n', ';', '&', '|', '<', '>', ')':
			break loop
		case '(':
			return w, errors.New("unexpected ( in a word")
		case '\\':
			if p.pos+1 >= len(p.src) {
				return w, errors.New("trailing backslash")
			}
			n := p.src[p.pos+1]
			p.pos += 2
			if n != '\n' {
				b.WriteByte(n)
				patLit(&pb, n)
				w.quoted = true
			}
			prevRaw = 0
			continue
		case '\'':
			end := strings.IndexByte(p.src[p.pos+1:], '\'')
			if end < 0 {
				return w, errors.New("unterminated '")
			}
			q := p.src[p.pos+1 : p.pos+1+end]
			b.WriteString(q)
			for i := 0; i < len(q); i++ {
				patLit(&pb, q[i])
			}
			p.pos += end + 2
			w.quoted = true
		case '"':
			p.pos++
			w.quoted = true
			n := b.Len()
			if err := p.readDouble(&b, &w); err != nil {
				return w, err
			}
			q := b.String()[n:]
			for i := 0; i < len(q); i++ {
				patLit(&pb, q[i])
			}
		case '$':
			n := b.Len()
			if err := p.readDollar(&b, &w, false); err != nil {
				return w, err
			}
			q := b.String()[n:]
			for i := 0; i < len(q); i++ {
				patLit(&pb, q[i])
			}
		case '`':
			if err := p.readBacktick(&w, false); err != nil {
				return w, err
			}
		case '*', '?':
			if w.glob < 0 {
				w.glob = b.Len()
			}
			b.WriteByte(c)
			pb.WriteByte(c)
			p.pos++
		case '[':
			class, n, err := p.bracket()
			if err != nil {
				return w, err
			}
			if n == 0 {
				// no closing ]: bash keeps the [ as it is
				b.WriteByte(c)
				patLit(&pb, c)
				p.pos++
				break
			}
			if w.glob < 0 {
				w.glob = b.Len()
			}
			b.WriteString(p.src[p.pos : p.pos+n])
			pb.WriteString(class)
			p.pos += n
		case '{', '}':
			return w, errors.New("braces are not allowed")
		case '~':
			if p.pos == start || prevRaw == '=' || prevRaw == ':' {
				w.tilde = true
			}
			b.WriteByte(c)
			pb.WriteByte(c)
			p.pos++
		default:
			b.WriteByte(c)
			patLit(&pb, c)
			p.pos++
		}
		prevRaw = c
	}
	if p.pos == start {
		return w, errors.New("expected a word")
	}
	w.raw = p.src[start:p.pos]
	w.lit = b.String()
	if w.glob >= 0 {
		w.pat = pb.String()
	}
	return w, nil
}

// bracket reads the unquoted bracket expression at the current position
// ([abc], [!a-z], []x]) and returns it as a path.Match class and its length
// in the source. A [ without a closing ] in the same word is a literal
// character for bash: n is 0 then. Quotes, escapes, slashes, nested [ and
// POSIX classes inside are refused rather than interpreted.
func (p *bashParser) bracket() (class string, n int, err error) {
	j := p.pos + 1
	neg := false
	if j < len(p.src) && (p.src[j] == '!' || p.src[j] == '^') {
		neg = true
		j++
	}
	first := j
	if j < len(p.src) && p.src[j] == ']' {
		j++
	}
	for ; j < len(p.src) && p.src[j] != ']'; j++ {
		switch c := p.src[j]; {
		case strings.IndexByte(" \t\n;&|<>()", c) >= 0:
			return "", 0, nil
		case strings.IndexByte("'\"\\`${}[/", c) >= 0:
			return "", 0, fmt.Errorf("a bracket pattern with %q in it", c)
		}
	}
	if j >= len(p.src) {
		return "", 0, nil
	}
	body := p.src[first:j]
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
	return cb.String(), j + 1 - p.pos, nil
}

func (p *bashParser) readDouble(b *strings.Builder, w *bashWord) error {
	for {
		if p.eof() {
			return errors.New(`unterminated "`)
		}
		switch c := p.peek(); c {
		case '"':
			p.pos++
			return nil
		case '\\':
			n := p.at(1)
			switch n {
			case '$', '`', '"', '\\':
				b.WriteByte(n)
				p.pos += 2
			case '\n':
				p.pos += 2
			default:
				b.WriteByte('\\')
				p.pos++
			}
		case '$':
			if err := p.readDollar(b, w, true); err != nil {
				return err
			}
		case '`':
			if err := p.readBacktick(w, true); err != nil {
				return err
			}
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
}

func (p *bashParser) readDollar(b *strings.Builder, w *bashWord, inDouble bool) error {
	n := p.at(1)
	switch {
	case n == '(':
		if p.at(2) == '(' {
			return errors.New("arithmetic $(( )) is not allowed")
		}
		p.pos += 2
		p.depth++
		if p.depth > maxBashDepth {
			return errors.New("nested too deeply")
		}
		if err := p.parseList(')'); err != nil {
			return err
		}
		p.pos++ // ')'
		p.depth--
		w.dynamic = true
		w.split = w.split || !inDouble
	case n == '{':
		return errors.New("parameter expansion ${…} is not allowed")
	case n == '\'' && !inDouble:
		return errors.New("$'…' quoting is not allowed")
	case n == '"' && !inDouble:
		return errors.New(`$"…" quoting is not allowed`)
	case n == '_' || n >= 'A' && n <= 'Z' || n >= 'a' && n <= 'z' || n >= '0' && n <= '9' || strings.IndexByte("@*#?$!-", n) >= 0:
		return errors.New("variables ($NAME) are not allowed")
	default:
		b.WriteByte('$')
		p.pos++
	}
	return nil
}

func (p *bashParser) readBacktick(w *bashWord, inDouble bool) error {
	p.pos++
	var inner strings.Builder
	for {
		if p.eof() {
			return errors.New("unterminated `")
		}
		c := p.peek()
		if c == '\\' && (p.at(1) == '`' || p.at(1) == '\\' || p.at(1) == '$') {
			inner.WriteByte(p.at(1))
			p.pos += 2
			continue
		}
		p.pos++
		if c == '`' {
			break
		}
		inner.WriteByte(c)
	}
	cmds, err := parseBashDepth(inner.String(), p.depth+1)
	if err != nil {
		return err
	}
	p.cmds = append(p.cmds, cmds...)
	w.dynamic = true
	w.split = w.split || !inDouble
	return nil
}
