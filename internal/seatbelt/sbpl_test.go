package seatbelt

import (
	"fmt"
	"strings"
)

// node is one form of a profile as sandbox-exec's Scheme reader would see
// it: an atom, a string (its value unescaped), or a list.
type node struct {
	atom   string
	str    *string
	list   []node
	isList bool
}

func (n node) String() string {
	switch {
	case n.isList:
		parts := make([]string, len(n.list))
		for i, c := range n.list {
			parts[i] = c.String()
		}
		return "(" + strings.Join(parts, " ") + ")"
	case n.str != nil:
		return fmt.Sprintf("%q", *n.str)
	}
	return n.atom
}

// head is a list's first atom ("allow", "subpath", ...).
func (n node) head() string {
	if n.isList && len(n.list) > 0 {
		return n.list[0].atom
	}
	return ""
}

// parse reads a profile the way a Scheme reader does: comments from ; to
// the end of the line, strings with \" and \\ escapes, lists, atoms. It
// lets the tests check what the profile says rather than what its text
// looks like, so that a string broken out of by an injected quote shows up
// as the forms it injected.
func parse(src string) ([]node, error) {
	p := &reader{src: src}
	var forms []node
	for {
		p.skip()
		if p.i >= len(p.src) {
			return forms, nil
		}
		n, err := p.form()
		if err != nil {
			return nil, err
		}
		forms = append(forms, n)
	}
}

type reader struct {
	src string
	i   int
}

func (p *reader) skip() {
	for p.i < len(p.src) {
		switch c := p.src[p.i]; {
		case c == ';':
			for p.i < len(p.src) && p.src[p.i] != '\n' {
				p.i++
			}
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *reader) form() (node, error) {
	p.skip()
	if p.i >= len(p.src) {
		return node{}, fmt.Errorf("unexpected end")
	}
	switch p.src[p.i] {
	case ')':
		return node{}, fmt.Errorf("unexpected ) at %d", p.i)
	case '(':
		p.i++
		n := node{isList: true}
		for {
			p.skip()
			if p.i >= len(p.src) {
				return node{}, fmt.Errorf("unclosed (")
			}
			if p.src[p.i] == ')' {
				p.i++
				return n, nil
			}
			c, err := p.form()
			if err != nil {
				return node{}, err
			}
			n.list = append(n.list, c)
		}
	case '"':
		p.i++
		var b strings.Builder
		for p.i < len(p.src) {
			c := p.src[p.i]
			p.i++
			switch c {
			case '"':
				s := b.String()
				return node{str: &s}, nil
			case '\\':
				if p.i >= len(p.src) {
					return node{}, fmt.Errorf("unfinished escape")
				}
				b.WriteByte(p.src[p.i])
				p.i++
			default:
				b.WriteByte(c)
			}
		}
		return node{}, fmt.Errorf("unclosed string")
	}
	start := p.i
	for p.i < len(p.src) && !strings.ContainsRune(" \n\t\r()\";", rune(p.src[p.i])) {
		p.i++
	}
	return node{atom: p.src[start:p.i]}, nil
}
