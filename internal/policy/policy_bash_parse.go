package policy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A small, conservative parser for the shell command lines the Bash tool
// runs. It understands lists (; & && || newlines), pipelines (| |&), the
// time and ! prefixes, subshells ( … ) and groups { …; }, if, while, until
// and for over listed words, quoting, backslashes, comments, redirections,
// here-documents, command substitution ($( … ) and backticks, whose commands
// are checked like any other), brace lists ({a,b}) and NAME=value prefixes.
//
// In strict mode (subprocess mode, where this check is the boundary) it
// refuses everything whose effect depends on run time state: variable and
// parameter expansion ($X, ${…}), which could also print the credentials in
// the worker's environment, arithmetic, $'…' quoting, process substitution,
// brace ranges, bracket patterns with quotes or classes inside, case,
// [[ … ]], functions, and a for loop over computed words or a pattern. The
// loop variable of a for loop over listed words is bound to each word in
// turn, and the body is checked once per word; the special parameters $? $$
// $! $# $- are numbers or flags, computed but harmless. Refusing is always
// safe: the worker gets a reason and can write a simpler command.
//
// In lenient mode (sandbox mode, where the sandbox is the boundary and the
// check only spots what reaches outside) it accepts all of that, keeps the
// words it cannot know as computed, still finds the commands of every
// substitution, loop, branch and function body, and records the variables
// the line expands.

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
	// lenient accepts what cannot be judged statically (sandbox mode).
	lenient bool
	// vars are for-loop variables bound to the word of the current pass
	// (strict mode); unknown are loop variables whose values are not
	// known (lenient mode).
	vars    map[string]string
	unknown map[string]bool
	// refs are the names of the variables the line expands (lenient).
	refs *[]string
	// inCase counts the case items being parsed (lenient): ";;" ends one.
	inCase int
	// last is the simple command parseCommand appended last, nil after
	// anything else.
	last *bashCmd
}

var errEmptyCommand = errors.New("empty command")

// legacyParser switches parseBash and its kin to this parser (the
// differential test of the two).
var legacyParser bool

func legacyParseBashDepth(src string, depth int) ([]*bashCmd, error) {
	p := &bashParser{src: src, depth: depth}
	return p.run()
}

// parseBashLenient parses a command line in lenient mode and also returns
// the names of the variables it expands.
func legacyParseBashLenient(src string) ([]*bashCmd, []string, error) {
	var refs []string
	p := &bashParser{src: src, lenient: true, refs: &refs}
	cmds, err := p.run()
	return cmds, refs, err
}

func (p *bashParser) run() ([]*bashCmd, error) {
	if p.depth > maxBashDepth {
		return nil, errors.New("nested too deeply")
	}
	if _, err := p.parseList(0); err != nil {
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

// child is a parser for nested source text (a backtick substitution, an
// sh -c string) with the same mode and bindings.
func (p *bashParser) child(src string) *bashParser {
	return &bashParser{src: src, depth: p.depth + 1, lenient: p.lenient, vars: p.vars, unknown: p.unknown, refs: p.refs}
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

// reservedWords are recognised at the start of a command only.
var reservedWords = map[string]bool{
	"if": true, "then": true, "elif": true, "else": true, "fi": true, "for": true, "select": true,
	"while": true, "until": true, "do": true, "done": true, "case": true, "esac": true, "in": true,
	"function": true, "time": true, "{": true, "}": true, "[[": true, "]]": true, "coproc": true,
}

// reserved returns the reserved word at the current position (after
// blanks), or "" when the next word is not one: an unquoted word made of
// exactly its letters, followed by a delimiter.
func (p *bashParser) reserved() string {
	p.skipBlanks()
	end := p.pos
	for end < len(p.src) && strings.IndexByte(" \t\n;&|()<>", p.src[end]) < 0 {
		end++
	}
	w := p.src[p.pos:end]
	if !reservedWords[w] {
		return ""
	}
	return w
}

// consumeWord skips the reserved word w (already seen by reserved).
func (p *bashParser) consumeWord(w string) {
	p.skipBlanks()
	p.pos += len(w)
}

// caseEnd reports the item terminator of a case (;; ;& ;;&) at the
// current position, inside a case (lenient mode).
func (p *bashParser) caseEnd() string {
	if p.inCase == 0 || p.peek() != ';' {
		return ""
	}
	switch {
	case p.at(1) == ';' && p.at(2) == '&':
		return ";;&"
	case p.at(1) == ';':
		return ";;"
	case p.at(1) == '&':
		return ";&"
	}
	return ""
}

// parseList parses pipelines separated by ; & && || and newlines, up to EOF,
// the closing parenthesis when closing is ')' (not consumed), a reserved
// word of ends at the start of a command (not consumed), or a case item's
// end. It returns what ended it: ")", the reserved word, the item's end,
// or "" at EOF.
func (p *bashParser) parseList(closing byte, ends ...string) (string, error) {
	for {
		if err := p.skipSpace(); err != nil {
			return "", err
		}
		if p.eof() {
			if closing != 0 {
				return "", errors.New("missing )")
			}
			if len(ends) > 0 {
				return "", fmt.Errorf("missing %s", ends[len(ends)-1])
			}
			return "", nil
		}
		if e := p.caseEnd(); e != "" {
			return e, nil
		}
		switch c := p.peek(); {
		case c == ')':
			if closing == ')' {
				return ")", nil
			}
			return "", errors.New("unexpected )")
		case c == ';' || c == '&' || c == '|':
			return "", errEmptyCommand
		}
		if kw := p.reserved(); kw != "" {
			for _, e := range ends {
				if kw == e {
					return kw, nil
				}
			}
		}
		single, err := p.parsePipeline()
		if err != nil {
			return "", err
		}
		p.skipBlanks()
		if e := p.caseEnd(); e != "" {
			return e, nil
		}
		switch c := p.peek(); {
		case p.eof(), c == '\n', c == ')', c == '#':
			// the loop handles them
		case c == ';':
			if p.at(1) == ';' || p.at(1) == '&' {
				return "", errors.New("case syntax")
			}
			p.pos++
		case c == '&' && p.at(1) == '&', c == '|' && p.at(1) == '|':
			if single != nil && c == '&' {
				single.andNext = true
			}
			p.pos += 2
			if err := p.needCommand(); err != nil {
				return "", err
			}
		case c == '&':
			p.pos++
		default:
			return "", fmt.Errorf("unexpected %q", c)
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

// parsePipeline parses one pipeline; single is its command when it is one
// simple command, not negated.
func (p *bashParser) parsePipeline() (single *bashCmd, err error) {
	p.skipBlanks()
	negated := false
	for {
		switch {
		case p.peek() == '!' && (p.at(1) == ' ' || p.at(1) == '\t'):
			p.pos++
			p.skipBlanks()
			negated = true
			continue
		case p.reserved() == "time":
			// The keyword times the whole pipeline; only -p is its own.
			p.consumeWord("time")
			p.skipBlanks()
			if strings.HasPrefix(p.src[p.pos:], "-p") && (p.pos+2 == len(p.src) || strings.IndexByte(" \t\n", p.src[p.pos+2]) >= 0) {
				p.pos += 2
			}
			p.skipBlanks()
			if c := p.peek(); p.eof() || c == '\n' || c == ';' || c == '&' || c == '|' || c == ')' {
				return nil, nil // a bare time: times nothing
			}
			continue
		}
		break
	}
	for n := 0; ; n++ {
		p.last = nil
		if err := p.parseCommand(); err != nil {
			return nil, err
		}
		p.skipBlanks()
		if p.peek() == '|' && p.at(1) != '|' {
			p.pos++
			if p.peek() == '&' {
				p.pos++
			}
			if err := p.needCommand(); err != nil {
				return nil, err
			}
			continue
		}
		if n == 0 && !negated {
			return p.last, nil
		}
		return nil, nil
	}
}

func (p *bashParser) redirAhead() bool {
	c := p.peek()
	return c == '<' || c == '>' || (c == '&' && p.at(1) == '>')
}

// trailingRedirs reads the redirections after a compound command; they
// become a command of their own, checked like any other redirection.
func (p *bashParser) trailingRedirs() error {
	p.last = nil // a compound command: a cd inside is not known to have run
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

func (p *bashParser) parseCommand() error {
	p.skipBlanks()
	if p.peek() == '(' {
		if p.at(1) == '(' {
			if !p.lenient {
				return errors.New("arithmetic (( )) is not allowed")
			}
			if err := p.skipArith(2); err != nil {
				return err
			}
			return p.trailingRedirs()
		}
		p.pos++
		p.depth++
		if p.depth > maxBashDepth {
			return errors.New("nested too deeply")
		}
		if _, err := p.parseList(')'); err != nil {
			return err
		}
		p.pos++ // ')'
		p.depth--
		return p.trailingRedirs()
	}
	if kw := p.reserved(); kw != "" {
		return p.parseCompound(kw)
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
			if p.lenient && len(cmd.words) == 1 && len(cmd.assigns) == 0 && p.at(1) == ')' {
				// name() body: a function definition; its body's
				// commands are checked where it is defined.
				p.pos += 2
				if err := p.skipSpace(); err != nil {
					return err
				}
				return p.parseCommand()
			}
			return errors.New("unexpected (")
		}
		if p.lenient && (c == '<' || c == '>') && p.at(1) == '(' {
			w, err := p.procSubst()
			if err != nil {
				return err
			}
			cmd.words = append(cmd.words, w)
			continue
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
		if w.alts != nil {
			for _, a := range w.alts {
				cmd.words = append(cmd.words, bashWord{raw: w.raw, lit: a, glob: -1, quoted: w.quoted})
			}
			continue
		}
		cmd.words = append(cmd.words, w)
	}
	if len(cmd.words) == 0 && len(cmd.assigns) == 0 && len(cmd.redirs) == 0 {
		return errEmptyCommand
	}
	p.cmds = append(p.cmds, cmd)
	p.last = cmd
	return nil
}

// parseCompound parses the compound command or keyword kw at the current
// position.
func (p *bashParser) parseCompound(kw string) error {
	list := func(ends ...string) (string, error) {
		end, err := p.parseList(0, ends...)
		if err == nil && end == "" {
			err = fmt.Errorf("missing %s", ends[len(ends)-1])
		}
		return end, err
	}
	switch kw {
	case "if":
		p.consumeWord(kw)
		for {
			if _, err := list("then"); err != nil {
				return err
			}
			p.consumeWord("then")
			end, err := list("elif", "else", "fi")
			if err != nil {
				return err
			}
			p.consumeWord(end)
			if end == "fi" {
				break
			}
			if end == "else" {
				if _, err := list("fi"); err != nil {
					return err
				}
				p.consumeWord("fi")
				break
			}
		}
	case "while", "until":
		p.consumeWord(kw)
		if _, err := list("do"); err != nil {
			return err
		}
		p.consumeWord("do")
		if _, err := list("done"); err != nil {
			return err
		}
		p.consumeWord("done")
	case "for", "select":
		if err := p.parseFor(kw); err != nil {
			return err
		}
	case "{":
		p.consumeWord(kw)
		if _, err := list("}"); err != nil {
			return err
		}
		p.consumeWord("}")
	case "case":
		if !p.lenient {
			return errors.New("case is not allowed; use if")
		}
		return p.parseCase()
	case "[[":
		if !p.lenient {
			return errors.New("[[ … ]] is not allowed; use test or [")
		}
		return p.parseDoubleBracket()
	case "function":
		if !p.lenient {
			return errors.New("functions are not allowed")
		}
		p.consumeWord(kw)
		p.skipBlanks()
		if _, err := p.readWord(); err != nil {
			return err
		}
		p.skipBlanks()
		if p.peek() == '(' && p.at(1) == ')' {
			p.pos += 2
		}
		if err := p.skipSpace(); err != nil {
			return err
		}
		return p.parseCommand()
	case "coproc":
		if !p.lenient {
			return errors.New("coproc is not allowed")
		}
		p.consumeWord(kw)
		return p.parseCommand()
	case "time":
		p.consumeWord(kw)
		return p.parseCommand()
	default:
		return fmt.Errorf("unexpected %s", kw)
	}
	return p.trailingRedirs()
}

// parseFor parses "for NAME in WORDS; do LIST; done". In strict mode the
// words must be plain literals; the body is parsed once per word with NAME
// bound to it, so every command the loop can run is checked as it will run.
func (p *bashParser) parseFor(kw string) error {
	p.consumeWord(kw)
	p.skipBlanks()
	if strings.HasPrefix(p.src[p.pos:], "((") {
		if !p.lenient {
			return errors.New("arithmetic for (( )) is not allowed")
		}
		if err := p.skipArith(2); err != nil {
			return err
		}
		return p.forBody("", nil)
	}
	nw, err := p.readWord()
	if err != nil {
		return err
	}
	name := nw.lit
	if nw.quoted || nw.dynamic || !isName(name) {
		return fmt.Errorf("for %s: not a variable name", nw.raw)
	}
	p.skipBlanks()
	hasIn := false
	if p.peek() == '\n' || p.peek() == ';' {
		// "for x; do" or "for x\nin …"
		save := p.pos
		if p.peek() == ';' {
			p.pos++
		}
		if err := p.skipSpace(); err != nil {
			return err
		}
		if p.reserved() != "in" {
			p.pos = save
		}
	}
	var words []bashWord
	if p.reserved() == "in" {
		hasIn = true
		p.consumeWord("in")
		for {
			p.skipBlanks()
			if c := p.peek(); p.eof() || c == ';' || c == '\n' || c == '&' || c == '|' || c == ')' {
				break
			}
			w, err := p.readWord()
			if err != nil {
				return err
			}
			if w.alts != nil {
				for _, a := range w.alts {
					words = append(words, bashWord{raw: w.raw, lit: a, glob: -1})
				}
				continue
			}
			words = append(words, w)
		}
		if p.peek() == ';' {
			p.pos++
		}
	} else if p.peek() == ';' {
		p.pos++
	}
	if err := p.skipSpace(); err != nil {
		return err
	}
	if p.reserved() != "do" {
		return errors.New("for without do")
	}
	if p.lenient {
		return p.forBody(name, nil)
	}
	if !hasIn {
		return fmt.Errorf("for %s without a list of words is not allowed", name)
	}
	if len(words) == 0 {
		return fmt.Errorf("for %s over no words", name)
	}
	if len(words) > maxLoopWords {
		return fmt.Errorf("for %s over more than %d words", name, maxLoopWords)
	}
	values := make([]string, len(words))
	for i, w := range words {
		if w.dynamic || w.glob >= 0 || w.tilde {
			return fmt.Errorf("for %s over %s, a word computed at run time or a pattern; list the words", name, w.raw)
		}
		values[i] = w.lit
	}
	return p.forBody(name, values)
}

// forBody parses "do LIST done": once with name bound to values[0] (strict),
// then again for every other value.
func (p *bashParser) forBody(name string, values []string) error {
	p.consumeWord("do")
	old, oldUnknown := p.vars, p.unknown
	defer func() { p.vars, p.unknown = old, oldUnknown }()
	if name != "" && p.lenient {
		p.unknown = cloneSet(oldUnknown)
		p.unknown[name] = true
	}
	if len(values) > 0 {
		p.vars = cloneVars(old)
		p.vars[name] = values[0]
	}
	start := p.pos
	end, err := p.parseList(0, "done")
	if err != nil {
		return err
	}
	if end != "done" {
		return errors.New("missing done")
	}
	for _, v := range values[min(1, len(values)):] {
		if len(p.cmds) > maxLoopCmds {
			return errors.New("loops too long to check; list fewer words")
		}
		sub := &bashParser{src: p.src, pos: start, depth: p.depth + 1, lenient: p.lenient, vars: cloneVars(old), unknown: p.unknown, refs: p.refs}
		sub.vars[name] = v
		if sub.depth > maxBashDepth {
			return errors.New("nested too deeply")
		}
		if e, err := sub.parseList(0, "done"); err != nil || e != "done" {
			return fmt.Errorf("for %s: %v", name, err)
		}
		p.cmds = append(p.cmds, sub.cmds...)
	}
	p.consumeWord("done")
	return nil
}

func cloneSet(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for j, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || j > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// parseCase parses "case WORD in PATTERN) LIST ;; … esac" (lenient mode):
// the word and the patterns are not commands, the lists are.
func (p *bashParser) parseCase() error {
	p.consumeWord("case")
	p.skipBlanks()
	if _, err := p.readWord(); err != nil {
		return err
	}
	if err := p.skipSpace(); err != nil {
		return err
	}
	if p.reserved() != "in" {
		return errors.New("case without in")
	}
	p.consumeWord("in")
	for {
		if err := p.skipSpace(); err != nil {
			return err
		}
		if p.eof() {
			return errors.New("missing esac")
		}
		if p.reserved() == "esac" {
			p.consumeWord("esac")
			return p.trailingRedirs()
		}
		if p.peek() == '(' {
			p.pos++
		}
		for {
			p.skipBlanks()
			if _, err := p.readWord(); err != nil {
				return err
			}
			p.skipBlanks()
			if p.peek() == '|' {
				p.pos++
				continue
			}
			if p.peek() != ')' {
				return errors.New("case pattern without )")
			}
			p.pos++
			break
		}
		p.inCase++
		end, err := p.parseList(0, "esac")
		p.inCase--
		if err != nil {
			return err
		}
		switch end {
		case "esac":
			p.consumeWord("esac")
			return p.trailingRedirs()
		case ";;", ";&", ";;&":
			p.pos += len(end)
		default:
			return errors.New("missing esac")
		}
	}
}

// parseDoubleBracket skips "[[ … ]]" (lenient mode), collecting the
// commands of the substitutions in it.
func (p *bashParser) parseDoubleBracket() error {
	p.consumeWord("[[")
	for {
		p.skipBlanks()
		if p.eof() {
			return errors.New("missing ]]")
		}
		if c := p.peek(); c == '\n' {
			p.pos++
			continue
		}
		if strings.HasPrefix(p.src[p.pos:], "]]") && (p.pos+2 == len(p.src) || strings.IndexByte(" \t\n;&|)<>", p.src[p.pos+2]) >= 0) {
			p.pos += 2
			return p.trailingRedirs()
		}
		if strings.IndexByte("&|<>()!;", p.peek()) >= 0 {
			p.pos++
			continue
		}
		if _, err := p.readWord(); err != nil {
			return err
		}
	}
}

// skipArith skips an arithmetic expression opened by n parentheses at the
// current position ("((" or "$((" after its $), to its closing ones,
// collecting the commands of substitutions inside (lenient mode).
func (p *bashParser) skipArith(n int) error {
	start := p.pos + n
	depth := n
	i := start
	for ; i < len(p.src) && depth > 0; i++ {
		switch p.src[i] {
		case '(':
			depth++
		case ')':
			depth--
		}
	}
	if depth > 0 {
		return errors.New("unterminated arithmetic")
	}
	inner := p.src[start : i-n]
	p.pos = i
	return p.scanExpansions(inner)
}

// procSubst reads <( … ) or >( … ) (lenient mode): its commands are
// checked, the word is a computed file name.
func (p *bashParser) procSubst() (bashWord, error) {
	start := p.pos
	p.pos += 2
	p.depth++
	if p.depth > maxBashDepth {
		return bashWord{}, errors.New("nested too deeply")
	}
	if _, err := p.parseList(')'); err != nil {
		return bashWord{}, err
	}
	p.pos++
	p.depth--
	return bashWord{raw: p.src[start:p.pos], glob: -1, dynamic: true}, nil
}

// scanExpansions finds the substitutions and variable references in text
// that the shell expands (an unquoted here-document body, an arithmetic
// expression, a ${…}) and parses the substitutions' commands (lenient mode).
func (p *bashParser) scanExpansions(text string) error {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case '`':
			j := i + 1
			for j < len(text) && text[j] != '`' {
				if text[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(text) {
				return errors.New("unterminated `")
			}
			c := p.child(strings.ReplaceAll(text[i+1:j], "\\`", "`"))
			cmds, err := c.run()
			if err != nil {
				return err
			}
			p.cmds = append(p.cmds, cmds...)
			i = j
		case '$':
			if i+1 >= len(text) {
				continue
			}
			switch n := text[i+1]; {
			case n == '(':
				c := p.child(text)
				c.pos = i
				var b strings.Builder
				var w bashWord
				if err := c.readDollar(&b, &w, true); err != nil {
					return err
				}
				p.cmds = append(p.cmds, c.cmds...)
				i = c.pos - 1
			case n == '{':
				end := strings.IndexByte(text[i:], '}')
				if end < 0 {
					return errors.New("unterminated ${")
				}
				p.ref(text[i+2 : i+end])
				if err := p.scanExpansions(text[i+2 : i+end]); err != nil {
					return err
				}
				i += end
			case n == '_' || n >= 'A' && n <= 'Z' || n >= 'a' && n <= 'z':
				j := i + 1
				for j < len(text) && (text[j] == '_' || text[j] >= 'A' && text[j] <= 'Z' || text[j] >= 'a' && text[j] <= 'z' || text[j] >= '0' && text[j] <= '9') {
					j++
				}
				p.ref(text[i+1 : j])
				i = j - 1
			}
		}
	}
	return nil
}

// ref records the variable a ${…} or $NAME expands (lenient mode).
func (p *bashParser) ref(expr string) {
	if p.refs == nil {
		return
	}
	expr = strings.TrimLeft(expr, "#!")
	j := 0
	for j < len(expr) && (expr[j] == '_' || expr[j] >= 'A' && expr[j] <= 'Z' || expr[j] >= 'a' && expr[j] <= 'z' || expr[j] >= '0' && expr[j] <= '9') {
		j++
	}
	if j > 0 {
		*p.refs = append(*p.refs, expr[:j])
	}
}

// isAssignment reports whether the source text of a word is NAME=… or NAME+=….
func isAssignment(raw string) bool {
	i := strings.IndexByte(raw, '=')
	if i <= 0 {
		return false
	}
	return isName(strings.TrimSuffix(raw[:i], "+"))
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
	if p.lenient && (p.peek() == '<' || p.peek() == '>') && p.at(1) == '(' {
		w, err := p.procSubst()
		if err != nil {
			return err
		}
		cmd.redirs = append(cmd.redirs, bashRedir{op: op, target: w})
		return nil
	}
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
// when it contains $ or a backtick (strict), scanned for the commands of its
// substitutions (lenient).
func (p *bashParser) readHeredocs() error {
	for _, h := range p.heredocs {
		var body strings.Builder
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
				if !p.lenient {
					return errors.New("expansion in a here-document; quote its delimiter (<<'EOF')")
				}
				body.WriteString(line)
				body.WriteByte('\n')
			}
		}
		if body.Len() > 0 {
			if err := p.scanExpansions(body.String()); err != nil {
				return err
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
			if p.lenient && p.pos > start {
				break loop
			}
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
		case '{':
			alts, n, err := p.braceList()
			if err != nil {
				return w, err
			}
			if alts == nil {
				// not a brace expansion: bash keeps the braces
				b.WriteString(p.src[p.pos : p.pos+n])
				for i := 0; i < n; i++ {
					patLit(&pb, p.src[p.pos+i])
				}
				p.pos += n
				break
			}
			if w.glob >= 0 || w.dynamic || w.tilde || w.alts != nil {
				if !p.lenient {
					return w, errors.New("a brace list in a word with a pattern, an expansion or another list")
				}
				w.dynamic = true
				p.pos += n
				break
			}
			prefix := b.String()
			p.pos += n
			w.alts = []string{}
			rest := bashWord{glob: -1}
			if c := p.peek(); !p.eof() && strings.IndexByte(" \t\n;&|<>)", c) < 0 {
				var err error
				if rest, err = p.readWord(); err != nil {
					return w, err
				}
			}
			if rest.dynamic || rest.glob >= 0 || rest.alts != nil {
				if !p.lenient {
					return w, errors.New("a brace list in a word with a pattern, an expansion or another list")
				}
				w.dynamic = true
			}
			for _, a := range alts {
				w.alts = append(w.alts, prefix+a+rest.lit)
			}
			w.raw = p.src[start:p.pos]
			w.lit = w.alts[0]
			w.quoted = w.quoted || rest.quoted
			return w, nil
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

// braceList reads the unquoted {…} at the current position. A comma list of
// plain words ({a,b,c}, maybe empty alternatives) is a brace expansion:
// alts are its alternatives. Anything else the shell would not expand
// ({}, {a}, no closing brace) is literal text of length n. A range
// ({1..3}) or a nested or quoted list is refused (strict) or left literal
// (lenient).
func (p *bashParser) braceList() (alts []string, n int, err error) {
	j := p.pos + 1
	depth := 1
	for ; j < len(p.src) && depth > 0; j++ {
		switch c := p.src[j]; {
		case c == '{':
			depth++
		case c == '}':
			depth--
		case strings.IndexByte(" \t\n;&|<>()", c) >= 0:
			return nil, 1, nil // no closing brace in this word: a literal {
		}
	}
	if depth > 0 {
		return nil, 1, nil
	}
	body := p.src[p.pos+1 : j-1]
	n = j - p.pos
	switch {
	case strings.Contains(body, ","):
	case strings.Contains(body, ".."):
		if p.lenient {
			return nil, n, nil
		}
		return nil, 0, errors.New("a brace range is not allowed; list the words")
	default:
		return nil, n, nil
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		plain := c == ',' || c == '.' || c == '_' || c == '-' || c == '/' || c == '+' || c == '@' || c == '%' ||
			c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		switch {
		case plain:
		case p.lenient && strings.IndexByte("'\"\\`${}*?[]", c) < 0:
			// lenient: any other text is expanded too ({curl,http://x})
		case p.lenient:
			return nil, n, nil
		default:
			return nil, 0, fmt.Errorf("a brace list with %q in it; list the words", c)
		}
	}
	return strings.Split(body, ","), n, nil
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
			if p.lenient {
				return "", 0, nil
			}
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
			if !p.lenient {
				return errors.New("arithmetic $(( )) is not allowed")
			}
			p.pos++
			if err := p.skipArith(2); err != nil {
				return err
			}
			w.dynamic = true
			return nil
		}
		p.pos += 2
		p.depth++
		if p.depth > maxBashDepth {
			return errors.New("nested too deeply")
		}
		if _, err := p.parseList(')'); err != nil {
			return err
		}
		p.pos++ // ')'
		p.depth--
		w.dynamic = true
		w.split = w.split || !inDouble
	case n == '{':
		end := p.braceEnd(p.pos + 2)
		if end < 0 {
			return errors.New("unterminated ${")
		}
		expr := p.src[p.pos+2 : end]
		if v, ok := p.vars[expr]; ok {
			p.pos = end + 1
			return p.bound(b, w, v, inDouble)
		}
		if !p.lenient {
			return errors.New("parameter expansion ${…} is not allowed")
		}
		if expr == "HOME" && b.Len() == 0 {
			w.tilde = true // ${HOME}/… is a path in a home directory
		}
		p.ref(expr)
		if err := p.scanExpansions(expr); err != nil {
			return err
		}
		p.pos = end + 1
		w.dynamic = true
		w.split = w.split || !inDouble
	case n == '\'' && !inDouble:
		if !p.lenient {
			return errors.New("$'…' quoting is not allowed")
		}
		p.pos += 2
		s, err := p.ansiC()
		if err != nil {
			return err
		}
		b.WriteString(s)
		w.quoted = true
	case n == '"' && !inDouble:
		if !p.lenient {
			return errors.New(`$"…" quoting is not allowed`)
		}
		p.pos += 2
		w.quoted = true
		return p.readDouble(b, w)
	case strings.IndexByte(specialParams, n) >= 0 && n != 0:
		p.pos += 2
		w.dynamic = true
	case n == '_' || n >= 'A' && n <= 'Z' || n >= 'a' && n <= 'z':
		j := p.pos + 1
		for j < len(p.src) && (p.src[j] == '_' || p.src[j] >= 'A' && p.src[j] <= 'Z' || p.src[j] >= 'a' && p.src[j] <= 'z' || p.src[j] >= '0' && p.src[j] <= '9') {
			j++
		}
		name := p.src[p.pos+1 : j]
		if v, ok := p.vars[name]; ok {
			p.pos = j
			return p.bound(b, w, v, inDouble)
		}
		if !p.lenient {
			return errors.New("variables ($NAME) are not allowed")
		}
		if name == "HOME" && b.Len() == 0 {
			w.tilde = true // $HOME/… is a path in a home directory
		}
		p.ref(name)
		p.pos = j
		w.dynamic = true
		w.split = w.split || !inDouble
	case n >= '0' && n <= '9' || n == '@' || n == '*':
		if !p.lenient {
			return errors.New("variables ($NAME) are not allowed")
		}
		p.pos += 2
		w.dynamic = true
		w.split = w.split || !inDouble
	default:
		b.WriteByte('$')
		p.pos++
	}
	return nil
}

// bound writes the value of a bound loop variable: unquoted, a value the
// shell would split or expand as a pattern is refused.
func (p *bashParser) bound(b *strings.Builder, w *bashWord, v string, inDouble bool) error {
	if !inDouble && strings.ContainsAny(v, " \t\n*?[") {
		return fmt.Errorf("the loop word %q is split or expanded unquoted; quote the variable", v)
	}
	b.WriteString(v)
	w.quoted = true
	return nil
}

// braceEnd returns the index of the } closing the ${ whose content starts
// at i, skipping nested ${…} and quotes; -1 when there is none.
func (p *bashParser) braceEnd(i int) int {
	depth := 1
	for ; i < len(p.src); i++ {
		switch p.src[i] {
		case '\\':
			i++
		case '\'':
			e := strings.IndexByte(p.src[i+1:], '\'')
			if e < 0 {
				return -1
			}
			i += e + 1
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// ansiC reads the body of $'…' (after the opening quote) and decodes its
// escapes as bash does, so that $'\x63url' is seen as curl.
func (p *bashParser) ansiC() (string, error) {
	var b strings.Builder
	for {
		if p.eof() {
			return "", errors.New("unterminated $'")
		}
		c := p.peek()
		p.pos++
		if c == '\'' {
			return b.String(), nil
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if p.eof() {
			return "", errors.New("unterminated $'")
		}
		e := p.peek()
		p.pos++
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'v':
			b.WriteByte(11)
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := p.pos
			for j < len(p.src) && j-p.pos < max && strings.IndexByte("0123456789abcdefABCDEF", p.src[j]) >= 0 {
				j++
			}
			if j == p.pos {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			v, _ := strconv.ParseUint(p.src[p.pos:j], 16, 32)
			p.pos = j
			if e == 'x' {
				b.WriteByte(byte(v))
			} else {
				var buf [4]byte
				b.Write(buf[:utf8.EncodeRune(buf[:], rune(v))])
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := p.pos - 1
			for j < len(p.src) && j-(p.pos-1) < 3 && p.src[j] >= '0' && p.src[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(p.src[p.pos-1:j], 8, 16)
			p.pos = j
			b.WriteByte(byte(v))
		case 'c':
			if !p.eof() {
				b.WriteByte(p.peek() & 0x1f)
				p.pos++
			}
		default:
			b.WriteByte(e) // \\ \' \" \? and unknown escapes
		}
	}
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
	c := p.child(inner.String())
	c.depth = p.depth + 1
	cmds, err := c.run()
	if err != nil {
		return err
	}
	p.cmds = append(p.cmds, cmds...)
	w.dynamic = true
	w.split = w.split || !inDouble
	return nil
}
