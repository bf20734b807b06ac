package security

import (
	"fmt"
	"slices"
	"strings"
)

// CharsPerToken is the estimate used to turn a token budget into characters
// (the context budget is 4,000 tokens ≈ 16,000 characters); the real count
// comes from the API's usage afterwards.
const CharsPerToken = 4

// RenderReport says what RenderRules kept and what it left out.
type RenderReport struct {
	Budget  int           `json:"budget_chars"` // 0: unlimited
	Used    int           `json:"used_chars"`
	Rules   int           `json:"rules"` // rules found in the files
	Kept    int           `json:"kept"`
	Omitted []OmittedRule `json:"omitted"`
}

// OmittedRule is a rule left out to fit the budget.
type OmittedRule struct {
	File  string `json:"file"`
	Title string `json:"title"`
	Level string `json:"level"`
	Size  int    `json:"size"`
}

// ruleDoc is a rules file cut into its rules.
type ruleDoc struct {
	file  string
	title string        // the "# " heading
	cats  []ruleSection // "## " sections, in file order
}

type ruleSection struct {
	heading string // "## A01:2025 - Broken Access Control" plus its short intro
	rules   []ruleBlock
}

type ruleBlock struct {
	title string // "Rule: Enforce Server-Side Access Control"
	level string // strict, warning, advisory or ""
	text  string // from the "### " line to the next heading
	keep  bool
}

const renderHeader = "# Security rules for this task\n\n" +
	"Follow these rules in every change. Level `strict`: never violate; `warning`: avoid unless the task requires it and say why; `advisory`: best practice.\n"

// RenderRules renders files (from RulesFor) as prompt text of at most
// maxChars bytes (0: no limit). Files are cut into their "### " rules and the
// rules are kept by priority: every strict rule before any warning, every
// warning before any advisory, and within a level the language and framework
// files before the core file, then file order. Whole rules are kept or left
// out, never cut in the middle. Introductions, prerequisite lists and summary
// sections without rules are not rendered: they point at files the worker does
// not have. When something is left out, the text ends with a line naming how
// many rules were omitted from which file (within the budget), and the report
// lists each one.
func RenderRules(files []RuleFile, maxChars int) (string, RenderReport) {
	docs := make([]*ruleDoc, 0, len(files))
	type ref struct {
		doc, cat, rule int
		prio           [3]int
	}
	var order []ref
	for i, f := range files {
		d := parseRuleDoc(f.Path, string(f.Content))
		docs = append(docs, d)
		filePrio := 0
		if f.Kind == "core" {
			filePrio = 1
		}
		for ci, c := range d.cats {
			for ri, r := range c.rules {
				order = append(order, ref{i, ci, ri, [3]int{levelRank(r.level), filePrio, len(order)}})
			}
		}
	}
	slices.SortStableFunc(order, func(a, b ref) int {
		for k := range a.prio {
			if a.prio[k] != b.prio[k] {
				return a.prio[k] - b.prio[k]
			}
		}
		return 0
	})
	rep := RenderReport{Budget: maxChars, Rules: len(order), Omitted: []OmittedRule{}}
	block := func(r ref) *ruleBlock { return &docs[r.doc].cats[r.cat].rules[r.rule] }

	// Greedy by priority: a rule is kept if the text with it still fits. A
	// smaller rule of lower priority may still fit after a large one did not.
	for _, r := range order {
		b := block(r)
		b.keep = true
		if maxChars > 0 && len(renderDocs(docs, "")) > maxChars {
			b.keep = false
		}
	}
	// The omission note needs room too: drop kept rules from the lowest
	// priority up until text and note fit.
	var text string
	for {
		note := omissionNote(docs, maxChars)
		text = renderDocs(docs, note)
		if maxChars <= 0 || len(text) <= maxChars {
			break
		}
		dropped := false
		for i := len(order) - 1; i >= 0; i-- {
			if b := block(order[i]); b.keep {
				b.keep = false
				dropped = true
				break
			}
		}
		if !dropped {
			text = "" // not even the header fits
			break
		}
	}
	for _, r := range order {
		b := block(r)
		if b.keep {
			rep.Kept++
		}
	}
	for _, d := range docs {
		for _, c := range d.cats {
			for _, b := range c.rules {
				if !b.keep {
					rep.Omitted = append(rep.Omitted, OmittedRule{File: d.file, Title: b.title, Level: b.level, Size: len(b.text)})
				}
			}
		}
	}
	rep.Used = len(text)
	return text, rep
}

func levelRank(l string) int {
	switch l {
	case "strict":
		return 0
	case "warning":
		return 1
	case "advisory":
		return 2
	}
	return 3
}

// renderDocs writes the kept rules, file by file in the given order, with
// their file and section headings, and note at the end.
func renderDocs(docs []*ruleDoc, note string) string {
	var b strings.Builder
	b.WriteString(renderHeader)
	for _, d := range docs {
		has := false
		for _, c := range d.cats {
			for _, r := range c.rules {
				has = has || r.keep
			}
		}
		if !has {
			continue
		}
		fmt.Fprintf(&b, "\n%s (%s)\n", d.title, d.file)
		for _, c := range d.cats {
			started := false
			for _, r := range c.rules {
				if !r.keep {
					continue
				}
				if !started && c.heading != "" {
					b.WriteString("\n" + c.heading + "\n")
				}
				started = true
				b.WriteString("\n" + r.text + "\n")
			}
		}
	}
	if note != "" {
		b.WriteString("\n" + note + "\n")
	}
	return b.String()
}

// omissionNote tells the worker which rules were left out for the budget, per
// file, naming the rules while the note stays short.
func omissionNote(docs []*ruleDoc, maxChars int) string {
	var parts []string
	total := 0
	for _, d := range docs {
		var titles []string
		for _, c := range d.cats {
			for _, r := range c.rules {
				if !r.keep {
					titles = append(titles, strings.TrimPrefix(r.title, "Rule: "))
				}
			}
		}
		if len(titles) == 0 {
			continue
		}
		total += len(titles)
		p := fmt.Sprintf("%s: %d (%s)", d.file, len(titles), strings.Join(titles, "; "))
		if len(p) > 300 {
			p = fmt.Sprintf("%s: %d", d.file, len(titles))
		}
		parts = append(parts, p)
	}
	if total == 0 {
		return ""
	}
	return fmt.Sprintf("[Security rules trimmed to fit the context budget of %d characters: %d rules omitted — %s.]",
		maxChars, total, strings.Join(parts, "; "))
}

// parseRuleDoc cuts a rules markdown file into "## " sections and "### "
// rules, ignoring headings inside fenced code blocks (the examples contain
// "# comment" lines).
func parseRuleDoc(file, content string) *ruleDoc {
	d := &ruleDoc{file: file}
	var cat *ruleSection
	var rule *ruleBlock
	var buf []string
	flush := func() {
		text := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(strings.Join(buf, "\n")), "---"))
		buf = nil
		switch {
		case rule != nil:
			rule.text = strings.TrimSpace(text)
			cat.rules = append(cat.rules, *rule)
			rule = nil
		case cat != nil && len(cat.rules) == 0:
			cat.heading = strings.TrimSpace(text)
		}
	}
	fence := false
	for _, line := range strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
		}
		if !fence {
			switch {
			case strings.HasPrefix(line, "# ") && d.title == "":
				flush()
				d.title = strings.TrimSpace(line)
				continue
			case strings.HasPrefix(line, "## "):
				flush()
				d.cats = append(d.cats, ruleSection{})
				cat = &d.cats[len(d.cats)-1]
			case strings.HasPrefix(line, "### "):
				flush()
				if cat == nil {
					d.cats = append(d.cats, ruleSection{})
					cat = &d.cats[len(d.cats)-1]
				}
				rule = &ruleBlock{title: strings.TrimSpace(strings.TrimPrefix(line, "### "))}
			case rule != nil && rule.level == "" && strings.HasPrefix(line, "**Level**:"):
				rule.level = strings.Trim(strings.TrimSpace(strings.TrimPrefix(line, "**Level**:")), "`")
			}
		}
		if cat != nil {
			buf = append(buf, line)
		}
	}
	flush()
	if d.title == "" {
		d.title = "# " + file
	}
	return d
}
