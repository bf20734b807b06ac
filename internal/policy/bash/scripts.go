package bash

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Checks of the small programs some allowed commands take as an argument:
// sed scripts, awk programs and jq filters can read and write files, run
// commands or print the environment from inside their text, where no path
// check sees them. Each check accepts a conservative subset and refuses the
// rest; a refusal tells the worker what to write instead.

// checkSedScript accepts a GNU sed script made of the commands that neither
// read, write nor run anything: r R w W e, the w and e flags of s, and
// anything this parser does not recognise are refused.
func checkSedScript(s string) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("sed script: "+format, a...)
	}
	n := len(s)
	i := 0
	// skip moves i past the bytes in set, skipTo up to the first in stop.
	skip := func(set string) {
		for i < n && strings.IndexByte(set, s[i]) >= 0 {
			i++
		}
	}
	skipTo := func(stop string) {
		for i < n && strings.IndexByte(stop, s[i]) < 0 {
			i++
		}
	}
	const blank, digits = " \t", "0123456789"
	// regex scans a regular expression delimited by d from i (just after
	// the opening delimiter) to just after the closing one; with what
	// "replacement", a replacement or a y set, which has no brackets. GNU
	// sed reads a bracket expression whole, so a delimiter inside one does
	// not end the regexp; a bracket holding the delimiter or a backslash is
	// refused so that no reading of it can differ.
	regex := func(d byte, what string) error {
		for i < n {
			switch c := s[i]; {
			case c == '\\':
				i += 2
				continue
			case c == '\n':
				return bad("a newline inside a %s", what)
			case c == '[' && what != "replacement":
				j := i + 1
				if j < n && s[j] == '^' {
					j++
				}
				if j < n && s[j] == ']' {
					j++
				}
				for j < n && s[j] != ']' {
					if s[j] == '[' && j+1 < n && strings.IndexByte(":.=", s[j+1]) >= 0 {
						return bad("a character class inside brackets")
					}
					j++
				}
				if j >= n {
					return bad("an unterminated bracket expression")
				}
				if body := s[i:j]; strings.IndexByte(body, d) >= 0 || strings.IndexByte(body, '\\') >= 0 || strings.IndexByte(body, '\n') >= 0 {
					return bad("a bracket expression holding %q", body)
				}
				i = j + 1
				continue
			case c == d:
				i++
				return nil
			}
			i++
		}
		return bad("an unterminated %s", what)
	}
	const re, repl = "regular expression", "replacement"
	address := func() (bool, error) {
		switch {
		case i < n && s[i] >= '0' && s[i] <= '9':
			skip(digits)
			if i < n && s[i] == '~' {
				i++
				skip(digits)
			}
		case i < n && s[i] == '$':
			i++
		case i < n && s[i] == '/':
			i++
			if err := regex('/', re); err != nil {
				return false, err
			}
		case i+1 < n && s[i] == '\\' && s[i+1] != '\n' && s[i+1] != '\\':
			d := s[i+1]
			i += 2
			if err := regex(d, re); err != nil {
				return false, err
			}
		default:
			return false, nil
		}
		skip("IM")
		return true, nil
	}
	for {
		skip(" \t\n;")
		if i >= n {
			return nil
		}
		if s[i] == '#' {
			skipTo("\n")
			continue
		}
		has, err := address()
		if err != nil {
			return err
		}
		if has {
			skip(blank)
			if i < n && s[i] == ',' {
				i++
				skip(blank)
				if i < n && (s[i] == '+' || s[i] == '~') {
					i++
					skip(digits)
				} else if ok, err := address(); err != nil {
					return err
				} else if !ok {
					return bad("a second address is missing")
				}
			}
		}
		skip(blank)
		for i < n && s[i] == '!' {
			i++
			skip(blank)
		}
		if i >= n {
			return bad("a command is missing")
		}
		c := s[i]
		i++
		switch c {
		case '{', '}':
			continue
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'L', 'q', 'Q':
			skip(blank)
			skip(digits)
		case ':', 'b', 't', 'T':
			// A label ends at the first character that could end it:
			// anything after is checked as commands, which is at worst
			// stricter than sed.
			skip(blank)
			skipTo(" \t\n;}#")
		case 'a', 'i', 'c':
			skip(blank)
			if i+1 < n && s[i] == '\\' && s[i+1] == '\n' {
				i += 2
			} else if i < n && s[i] == '\\' {
				i++
			}
			// The text runs to the end of the line; a line ending in a
			// backslash would continue it, which is refused to keep the
			// end of the text certain.
			start := i
			skipTo("\n")
			if i < n && i > start && s[i-1] == '\\' {
				return bad("%c text continued on the next line", c)
			}
			continue
		case 's', 'y':
			if i >= n || s[i] == '\n' || s[i] == '\\' {
				return bad("a bad %c command", c)
			}
			d := s[i]
			i++
			first := re // s's regular expression; y's first set has no brackets either
			if c == 'y' {
				first = repl
			}
			for _, what := range []string{first, repl} {
				if err := regex(d, what); err != nil {
					return err
				}
			}
			if c == 's' {
				skip("gpiImM" + digits)
			}
			if c == 's' && i < n && (s[i] == 'w' || s[i] == 'W' || s[i] == 'e') {
				return bad("the %c flag of s writes a file or runs a command", s[i])
			}
		case 'r', 'R', 'w', 'W':
			return bad("the %c command reads or writes a file", c)
		case 'e':
			return bad("the e command runs a command")
		case 'v':
			skipTo("\n;}")
		default:
			return bad("the command %q is not one this check knows", c)
		}
		skip(blank)
		if i < n && strings.IndexByte("\n;}#", s[i]) < 0 {
			return bad("unexpected %q after a command", s[i])
		}
	}
}

// awkForbidden are names an awk program may not mention anywhere, strings
// included: reading files or commands, running commands, the environment,
// the argument list (assigning ARGV opens other files), gawk's indirect
// calls and directives (@), its symbol tables and extensions.
var awkForbidden = regexp.MustCompile(`\b(getline|system|ENVIRON|PROCINFO|ARGV|ARGC|SYMTAB|FUNCTAB|extension)\b|@|/inet`)

// checkAwkProgram accepts an awk program whose print and printf statements
// redirect nowhere. Whether a "/" starts a regular expression depends on the
// grammar; the program is scanned both ways and a redirection found in
// either is refused.
func checkAwkProgram(prog string) error {
	if m := awkForbidden.FindString(prog); m != "" {
		return fmt.Errorf("awk program: %q reads, writes or runs something outside the program", m)
	}
	for _, regexps := range []bool{true, false} {
		if err := awkRedirects(prog, regexps); err != nil {
			return err
		}
	}
	return nil
}

// awkRedirects tokenizes prog (strings, and regular expressions when
// regexps is set) and refuses a ">" or "|" at parenthesis depth 0 inside a
// print or printf statement, which runs to the next ; { or }.
func awkRedirects(prog string, regexps bool) error {
	n := len(prog)
	inPrint := false
	depth := 0
	operand := false // the last token ends an operand: a "/" after it divides
	for i := 0; i < n; {
		c := prog[i]
		switch {
		case c == '"':
			j := i + 1
			for j < n && prog[j] != '"' {
				if prog[j] == '\\' {
					j++
				}
				if j < n && prog[j] == '\n' {
					return errors.New("awk program: a newline inside a string")
				}
				j++
			}
			if j >= n {
				return errors.New("awk program: an unterminated string")
			}
			i = j + 1
			operand = true
			continue
		case c == '/' && regexps && !operand:
			j := i + 1
			inBracket := false
			for j < n && (inBracket || prog[j] != '/') {
				switch prog[j] {
				case '\\':
					j++
				case '[':
					inBracket = true
				case ']':
					inBracket = false
				case '\n':
					return errors.New("awk program: a newline inside a regular expression")
				}
				j++
			}
			if j >= n {
				return errors.New("awk program: an unterminated regular expression")
			}
			i = j + 1
			operand = true
			continue
		case c == '#':
			for i < n && prog[i] != '\n' {
				i++
			}
			continue
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < n && (prog[j] == '_' || prog[j] >= 'a' && prog[j] <= 'z' || prog[j] >= 'A' && prog[j] <= 'Z' || prog[j] >= '0' && prog[j] <= '9') {
				j++
			}
			word := prog[i:j]
			switch word {
			case "print", "printf":
				inPrint, depth, operand = true, 0, false
			case "in", "return", "if", "while", "for", "do", "else", "case":
				operand = false
			default:
				operand = true
			}
			i = j
			continue
		case c >= '0' && c <= '9' || c == '.':
			operand = true
		case c == ')' || c == ']':
			operand = true
			if c == ')' && depth > 0 {
				depth--
			}
		case c == '(':
			operand = false
			depth++
		case c == ';' || c == '{' || c == '}':
			inPrint, operand = false, false
		case c == '\n':
			// A print statement may go on after a newline (after a
			// comma, a backslash, …): only ; and braces end it here.
			operand = false
		case c == '>' || c == '|':
			if inPrint && depth == 0 {
				if c == '|' && i+1 < n && prog[i+1] == '|' {
					i += 2
					operand = false
					continue
				}
				return fmt.Errorf("awk program: %q in a print statement redirects its output", string(c))
			}
			operand = false
		case c == '$':
			operand = false
		case c == '+' || c == '-':
			// x++ ends an operand; a + between operands starts one
			if i+1 < n && prog[i+1] == c && operand {
				i += 2
				continue
			}
			operand = false
		case c == ' ' || c == '\t' || c == '\\':
		default:
			operand = false
		}
		i++
	}
	return nil
}

// jqForbidden are what a jq filter may not use: the environment (env,
// $ENV), modules (import, include), and the paths jq searches for them. A
// name right after a "." is a field and is fine.
var jqForbidden = regexp.MustCompile(`(^|[^.\w$])(env|import|include|modulemeta|get_search_list|get_jq_origin|get_prog_origin)\b|\$ENV\b`)

func checkJqFilter(f string) error {
	if m := jqForbidden.FindStringSubmatch(f); m != nil {
		name := strings.TrimLeft(m[0], " \t\n(|,;:[{}=+-*/<>!\"\\")
		return fmt.Errorf("jq program: %q reads the environment or other files", name)
	}
	return nil
}
