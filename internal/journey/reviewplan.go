package journey

import (
	"fmt"
	"strconv"
	"strings"
)

// The review puts the whole change before the model or says what it did
// not: the diff is cut into parts of at most MaxPromptDiff bytes, each
// reviewed by its own session, and every prompt lists every changed file
// with its size and the part that holds it. What does not fit in
// MaxReviewParts parts is in no prompt, and the review says so with a
// blocking finding: a change is never merged on a review that silently saw
// only its beginning.
const (
	MaxPromptDiff  = 60000
	MaxReviewParts = 8
	// maxListedFiles bounds the file list of a prompt; the files past it
	// are counted, not named.
	maxListedFiles = 400
)

// ChangedFile is one changed file as the review sees it.
type ChangedFile struct {
	Path string
	// Bytes is the size of the file's diff.
	Bytes int
	// Binary: git shows no text of it, so no prompt holds its content.
	Binary bool
	// Parts are the parts (1-based) that hold its diff, in order; none
	// when it is binary or past the last part.
	Parts []int
	// Cut: some of its diff (or all of it) is in no part.
	Cut bool
}

// ReviewPlan is how one change is shared among review sessions.
type ReviewPlan struct {
	Files []ChangedFile
	// Parts is the diff text of each session's prompt.
	Parts []string
	// TotalBytes is the size of the whole diff.
	TotalBytes int
}

// PlanReview cuts diff (git diff output) into parts of at most budget
// bytes, at file boundaries when it can, else at hunks, else at lines, and
// keeps at most maxParts of them.
func PlanReview(diff string, budget, maxParts int) ReviewPlan {
	p := ReviewPlan{TotalBytes: len(diff)}
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			p.Parts = append(p.Parts, cur.String())
			cur.Reset()
		}
	}
	for _, sec := range splitFiles(diff) {
		f := ChangedFile{Path: sec.path, Bytes: len(sec.text), Binary: sec.binary}
		if !sec.binary {
			ps := pieces(sec, budget)
			taken := 0
			for _, piece := range ps {
				if cur.Len()+len(piece) > budget {
					flush()
				}
				if len(p.Parts) >= maxParts {
					break
				}
				cur.WriteString(piece)
				taken++
				if n := len(p.Parts) + 1; len(f.Parts) == 0 || f.Parts[len(f.Parts)-1] != n {
					f.Parts = append(f.Parts, n)
				}
			}
			f.Cut = taken < len(ps)
		}
		p.Files = append(p.Files, f)
	}
	if len(p.Parts) < maxParts {
		flush()
	}
	return p
}

// NotReviewed are the files some of whose diff is in no prompt, binary
// files aside.
func (p ReviewPlan) NotReviewed() []ChangedFile {
	var out []ChangedFile
	for _, f := range p.Files {
		if f.Cut {
			out = append(out, f)
		}
	}
	return out
}

// Findings are what the plan itself tells the reader: a change too large
// to review in full (blocking), and binary files no prompt could show
// (major: a person looks at them).
func (p ReviewPlan) Findings() []Finding {
	var out []Finding
	if cut := p.NotReviewed(); len(cut) > 0 {
		n := 0
		for _, f := range cut {
			n += f.Bytes
		}
		names := make([]string, 0, len(cut))
		for _, f := range cut {
			names = append(names, f.Path)
		}
		out = append(out, Finding{Severity: Blocking, Source: "review",
			Title: fmt.Sprintf("not fully reviewed: %s of the change (%s of %s of diff) were in no review prompt", plural(len(cut), "file", "files"), kb(n), kb(p.TotalBytes)),
			Detail: fmt.Sprintf("The review reads at most %d parts of %s each. Not reviewed, in whole or in part: %s. Read them yourself, or split the feature, then merge with --force.",
				MaxReviewParts, kb(MaxPromptDiff), listNames(names, 20))})
	}
	for _, f := range p.Files {
		if f.Binary {
			out = append(out, Finding{Severity: Major, Source: "review", File: f.Path,
				Title:  "binary file not reviewed: " + f.Path,
				Detail: "git shows no text of it, so the review could not read it; look at it yourself before merging."})
		}
	}
	return out
}

// fileList is the prompt's list of every changed file with its size and
// where it is, from part's point of view.
func (p ReviewPlan) fileList(part int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The change touches %s (%s of diff)", plural(len(p.Files), "file", "files"), kb(p.TotalBytes))
	if len(p.Parts) > 1 {
		fmt.Fprintf(&b, ", shared among %d review sessions; this is part %d of %d: judge the diff below, and read any file you need", len(p.Parts), part, len(p.Parts))
	}
	b.WriteString(":\n")
	for i, f := range p.Files {
		if i == maxListedFiles {
			fmt.Fprintf(&b, "  … and %s more\n", plural(len(p.Files)-i, "file", "files"))
			break
		}
		where := ""
		switch {
		case f.Binary:
			where = "binary: no text shown"
		case len(f.Parts) == 0:
			where = "NOT IN ANY PART: not reviewed"
		default:
			where = partWords(f.Parts, part)
			if f.Cut {
				where += "; its end is NOT IN ANY PART: not reviewed"
			}
		}
		fmt.Fprintf(&b, "  %s  %s  (%s)\n", f.Path, kb(f.Bytes), where)
	}
	return b.String()
}

func partWords(parts []int, this int) string {
	var ws []string
	for _, n := range parts {
		if n == this {
			ws = append(ws, "in this part")
		} else {
			ws = append(ws, "part "+strconv.Itoa(n))
		}
	}
	return strings.Join(ws, ", ")
}

// ReviewPrompt is the prompt of part (1-based) of the review of feature:
// what to look for, the list of every changed file, the answer format and
// that part's diff.
func ReviewPrompt(feature, base, head string, plan ReviewPlan, part int, rules []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Review %s: review the changes of the integration branch against its base.\n\n", feature)
	fmt.Fprintf(&b, "Your working directory is the branch's head (%s); the base is %s. ", short(head), short(base))
	b.WriteString("Look for bugs, security problems, missing tests and departures from the design (.zerg/specs may hold it). ")
	if len(rules) > 0 {
		fmt.Fprintf(&b, "Security rules that apply to the languages touched: %s. ", strings.Join(rules, ", "))
	}
	b.WriteString(`Answer with one JSON object and nothing else:
{"findings": [{"severity": "blocking|major|minor|info", "title": "...", "file": "path", "line": 0, "detail": "..."}]}
blocking means the branch must not be merged as it is. An empty list means nothing to report.

`)
	b.WriteString(plan.fileList(part))
	b.WriteString("\nThe diff")
	if len(plan.Parts) > 1 {
		fmt.Fprintf(&b, " (part %d of %d)", part, len(plan.Parts))
	}
	b.WriteString(":\n")
	if part >= 1 && part <= len(plan.Parts) {
		b.WriteString(plan.Parts[part-1])
	}
	return b.String()
}

// fileSection is one file's part of a diff.
type fileSection struct {
	path   string
	header string // the lines before the first hunk
	text   string // the whole section, header included
	binary bool
}

// splitFiles cuts git diff output at its "diff --git" lines.
func splitFiles(diff string) []fileSection {
	var out []fileSection
	starts := []int{}
	for i := 0; i < len(diff); {
		if strings.HasPrefix(diff[i:], "diff --git ") {
			starts = append(starts, i)
		}
		j := strings.IndexByte(diff[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
	}
	if len(starts) == 0 && diff != "" {
		starts = []int{0}
	}
	for k, st := range starts {
		end := len(diff)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		text := diff[st:end]
		sec := fileSection{text: text, path: sectionPath(text)}
		sec.header = text
		if h := strings.Index(text, "\n@@"); h >= 0 {
			sec.header = text[:h+1]
		}
		sec.binary = strings.Contains(sec.header, "\nGIT binary patch\n") || strings.Contains(sec.header, "\nBinary files ")
		out = append(out, sec)
	}
	return out
}

// sectionPath is the path a file section is about: its "+++" line, else
// its "rename to" or "---" line (a deletion), else the header's.
func sectionPath(text string) string {
	first, rest, _ := strings.Cut(text, "\n")
	var lines []string
	for _, l := range strings.Split(rest, "\n") {
		if strings.HasPrefix(l, "@@") {
			break
		}
		lines = append(lines, l)
	}
	for _, pre := range []string{"+++ ", "rename to ", "--- "} {
		for _, l := range lines {
			if p, ok := strings.CutPrefix(l, pre); ok && p != "/dev/null" {
				return unquote(p, pre != "rename to ")
			}
		}
	}
	// "diff --git a/X b/X": X is half of what follows, less the prefixes.
	h := strings.TrimPrefix(first, "diff --git ")
	if n := len(h); n%2 == 1 && strings.HasPrefix(h, "a/") && h[n/2] == ' ' && h[n/2+1:n/2+3] == "b/" && h[2:n/2] == h[n/2+3:] {
		return h[2 : n/2]
	}
	return unquote(strings.Fields(h + " ?")[0], true)
}

// unquote reads a path as git writes it, quoted when it holds unusual
// bytes ("b/t\303\251st"), without its a/ or b/ prefix when it has one.
func unquote(p string, prefixed bool) string {
	p = strings.TrimSuffix(p, "\t")
	if strings.HasPrefix(p, `"`) {
		if u, err := strconv.Unquote(p); err == nil {
			p = u
		}
	}
	if prefixed && (strings.HasPrefix(p, "a/") || strings.HasPrefix(p, "b/")) {
		return p[2:]
	}
	return p
}

// pieces cuts a file section into pieces of at most budget bytes: whole
// when it fits, else at line boundaries (a line longer than a piece at the
// piece's size). Each piece after the first repeats the file's header, so
// a session reading it knows the file.
func pieces(sec fileSection, budget int) []string {
	if len(sec.text) <= budget {
		return []string{sec.text}
	}
	header := sec.header
	if len(header) > budget/4 {
		header = header[:budget/4] + "\n"
	}
	cont := header + "(continued)\n"
	room := budget - len(cont)
	var out []string
	cur, body := header, false
	add := func(s string) {
		if body && len(cur)+len(s) > budget {
			out = append(out, cur)
			cur, body = cont, false
		}
		cur += s
		body = true
	}
	for _, line := range strings.SplitAfter(sec.text[len(sec.header):], "\n") {
		for len(line) > room {
			add(line[:room])
			line = line[room:]
		}
		if line != "" {
			add(line)
		}
	}
	if body {
		out = append(out, cur)
	}
	return out
}

func kb(n int) string {
	if n < 1000 {
		return plural(n, "byte", "bytes")
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1000)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func listNames(names []string, n int) string {
	if len(names) > n {
		return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
	}
	return strings.Join(names, ", ")
}
