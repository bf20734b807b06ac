package contextpack

import (
	"strings"
)

// Section is one part of a spec file: a markdown heading and the text up to
// the next heading of any level. The text before a file's first heading is a
// section of its own (Level 0, named after the file).
type Section struct {
	File  string   `json:"file"`  // requirements.md, design.md
	Trail []string `json:"trail"` // the headings from the file's top down to this one
	Level int      `json:"level"` // 1–6 for "#"…"######", 0 before the first heading
	Body  string   `json:"-"`     // the text under the heading, trimmed
	Order int      `json:"-"`     // position in the whole spec, from 0
}

// Name is the section's file and heading trail, as the pack's record and
// the prompt show it: "design.md › Components › Rate limiter".
func (s Section) Name() string {
	if len(s.Trail) == 0 {
		return s.File
	}
	return s.File + " › " + strings.Join(s.Trail, " › ")
}

// Heading is the section's own heading ("" before the first one).
func (s Section) Heading() string {
	if len(s.Trail) == 0 {
		return ""
	}
	return s.Trail[len(s.Trail)-1]
}

// Split cuts a markdown file into its sections at ATX headings ("#" to
// "######" followed by a space), outside fenced code blocks. Sections with
// no text under their heading are left out: they only give their heading to
// the trail of the sections below them. Order counts from first.
func Split(file, text string, first int) []Section {
	var out []Section
	var trail []string // trail[i] is the heading at level i+1, "" when none
	cur := Section{File: file}
	var body []string
	flush := func() {
		cur.Body = strings.TrimSpace(strings.Join(body, "\n"))
		if cur.Body != "" {
			cur.Order = first + len(out)
			out = append(out, cur)
		}
		body = body[:0]
	}
	fence := ""
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if f := fenceOf(line); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(strings.TrimSpace(line), fence) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), fence[:1])) == "":
				fence = ""
			}
			body = append(body, line)
			continue
		}
		level, title := heading(line)
		if fence != "" || level == 0 {
			body = append(body, line)
			continue
		}
		flush()
		for len(trail) < level {
			trail = append(trail, "")
		}
		trail = append(trail[:level-1], title)
		var t []string
		for _, h := range trail {
			if h != "" {
				t = append(t, h)
			}
		}
		cur = Section{File: file, Trail: t, Level: level}
	}
	flush()
	return out
}

// fenceOf returns the fence marker a line opens or closes (``` or ~~~, as
// long as written), or "".
func fenceOf(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return ""
	}
	for _, c := range []string{"`", "~"} {
		n := len(t) - len(strings.TrimLeft(t, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// heading parses an ATX heading line: its level and title, or 0.
func heading(line string) (int, string) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return 0, ""
	}
	n := len(t) - len(strings.TrimLeft(t, "#"))
	if n < 1 || n > 6 {
		return 0, ""
	}
	rest := t[n:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return 0, "" // "#hashtag" is text
	}
	title := strings.TrimSpace(rest)
	// A closing sequence of #s is not part of the title.
	if s := strings.TrimRight(title, "#"); s != title && (s == "" || strings.HasSuffix(s, " ")) {
		title = strings.TrimSpace(s)
	}
	if title == "" {
		return 0, ""
	}
	return n, title
}
