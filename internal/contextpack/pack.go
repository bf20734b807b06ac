// Package contextpack chooses what a worker's prompt carries besides its
// instructions: the task itself, what its dependencies produced, the spec
// sections relevant to the task and the security rules of its languages,
// all within one token budget, with a record of what was left out and why.
//
// Everything here is a pure function of its input: the caller reads the
// spec files, the rules cache and the dependencies' attempt records.
package contextpack

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/textx"
)

// DefaultBudget is context.token_budget's default, in tokens.
const DefaultBudget = 4000

// Selection limits for the spec's sections.
const (
	// MaxSections: the best section and at most three others.
	MaxSections = 4
	// MinShare: a section other than the best is taken only if it scores at
	// least this share of the best one's score.
	MinShare = 0.5
	// SummaryChars bounds each dependency's summary in the prompt.
	SummaryChars = 480
	// minCutChars: the best section is cut to fit the budget only if at
	// least this much of it fits; less would be a fragment.
	minCutChars = 400
)

// Dep is one dependency of the task and what its committed attempt left.
type Dep struct {
	ID    string
	Title string
	Files []string // what it created or modified
	// Summary is its worker's final text in the attempt that succeeded
	// ("" when there is none: no run yet, or no result in the record).
	Summary string
	Attempt int // the attempt the summary is from
}

// DepsOf lists the task's dependencies from the graph, with the summaries
// found for them (by task id; nil: none).
func DepsOf(g *spec.Graph, t *spec.Task, summaries map[string]Summary) []Dep {
	if g == nil {
		return nil
	}
	var out []Dep
	for _, id := range t.Dependencies {
		d := g.Task(id)
		if d == nil {
			continue
		}
		s := summaries[id]
		out = append(out, Dep{ID: d.ID, Title: d.Title, Files: d.Files.Owned(), Summary: s.Text, Attempt: s.Attempt})
	}
	return out
}

// Summary is a worker's final text and the attempt it ended.
type Summary struct {
	Text    string
	Attempt int
}

// Input is everything a pack is chosen from.
type Input struct {
	Task *spec.Task
	Deps []Dep
	// Spec is the feature's spec cut into sections (Split).
	Spec []Section
	// RuleFiles are the security rules of the task's languages
	// (security.RulesFor); none: no rules block.
	RuleFiles []security.RuleFile
	// NoRules says why there are no rules, for the record ("" when there are).
	NoRules string
	// Previous says why the last attempt failed (a retry).
	Previous string
	// Budget in tokens (≤ 0: DefaultBudget).
	Budget int
	// Score ranks the sections; nil is Rank. Tests put a broken one here to
	// show that the checks on packs notice.
	Score func(Query, []Section) []Scored
}

// Pack is the chosen context: Text goes into the prompt, the rest says what
// is in it, what was left out and why (context.json).
type Pack struct {
	Task          string `json:"task"`
	Budget        int    `json:"budget_tokens"`
	Tokens        int    `json:"tokens"`
	CharsPerToken int    `json:"chars_per_token"`
	// OverBudget: the task's own text (with a retry's diagnosis) is over
	// the budget by itself. It is never cut; everything else is left out.
	OverBudget   bool         `json:"over_budget,omitempty"`
	Parts        []Part       `json:"parts"`
	Sections     []SectionUse `json:"sections"`
	Dependencies []DepUse     `json:"dependencies"`
	Rules        RulesUse     `json:"rules"`
	Omitted      []Omission   `json:"omitted"`
	// Text is the pack as the prompt carries it.
	Text string `json:"-"`
}

// Part is one block of the pack and its size.
type Part struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
}

// SectionUse is one spec section: its score and whether it is in.
type SectionUse struct {
	Name     string   `json:"name"`
	Score    float64  `json:"score"`
	Terms    []string `json:"terms,omitempty"`
	Names    []string `json:"names,omitempty"`
	Included bool     `json:"included"`
	Cut      bool     `json:"cut,omitempty"` // in, shortened to fit
	Tokens   int      `json:"tokens"`        // its size in the prompt (whole, when left out)
	Reason   string   `json:"reason"`
}

// DepUse is one dependency in the pack.
type DepUse struct {
	ID      string   `json:"id"`
	Files   []string `json:"files"`
	Summary bool     `json:"summary"` // its summary is in
	Attempt int      `json:"attempt,omitempty"`
}

// RulesUse says which security rules are in.
type RulesUse struct {
	Files   []string `json:"files"`
	Rules   int      `json:"rules"`
	Kept    int      `json:"kept"`
	Tokens  int      `json:"tokens"`
	Missing string   `json:"missing,omitempty"` // why there are none
}

// Omission is something left out of the pack, or cut.
type Omission struct {
	Kind   string `json:"kind"` // section, rule, summary
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
	Reason string `json:"reason"`
}

// Tokens estimates the tokens of s as the rest of zerg does:
// security.CharsPerToken characters per token, rounded up.
func Tokens(s string) int { return tokensOf(len(s)) }

func tokensOf(chars int) int { return (chars + security.CharsPerToken - 1) / security.CharsPerToken }

// Build chooses the pack. The budget is spent in this order, and each step
// records what it left out:
//
//  1. The task's own text (what to do, acceptance criteria, files,
//     verification, its context, a retry's diagnosis) and the list of the
//     dependencies' files: always in, never cut.
//  2. The dependencies' summaries, each cut to SummaryChars, together at most
//     a quarter of what is left, in dependency order.
//  3. The spec sections and the security rules share the rest: the rules
//     are sure of up to half of it, the sections take what the rules do not
//     need, best first (see Select), and the rules then get everything the
//     sections left.
func Build(in Input) Pack {
	budget := in.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	limit := budget * security.CharsPerToken
	t := in.Task
	p := Pack{Task: t.ID, Budget: budget, CharsPerToken: security.CharsPerToken,
		Sections: []SectionUse{}, Dependencies: []DepUse{}, Omitted: []Omission{}}

	// 1. The task.
	task := taskBlock(t)
	tail := tailBlock(t, in.Previous)
	deps := make([]DepUse, len(in.Deps))
	for i, d := range in.Deps {
		deps[i] = DepUse{ID: d.ID, Files: nonNil(d.Files)}
	}
	used := len(task) + len(tail) + len(depsBlock(in.Deps, nil))
	if used > limit {
		p.OverBudget = true
	}

	// 2. The dependencies' summaries.
	summaries := make([]string, len(in.Deps))
	quarter := max(limit-used, 0) / 4
	share := quarter
	for i, d := range in.Deps {
		s := summaryText(d.Summary)
		if s == "" {
			continue
		}
		grow := len(depsBlock(in.Deps, withOne(summaries, i, s))) - len(depsBlock(in.Deps, summaries))
		if grow > share {
			p.Omitted = append(p.Omitted, Omission{Kind: "summary", Name: d.ID, Tokens: Tokens(s),
				Reason: fmt.Sprintf("budget: the dependencies' summaries get at most a quarter of what the task left (%d tokens); %d left", tokensOf(quarter), tokensOf(share))})
			continue
		}
		summaries[i], share, used = s, share-grow, used+grow
		deps[i].Summary, deps[i].Attempt = true, d.Attempt
	}
	dblock := depsBlock(in.Deps, summaries)
	p.Dependencies = deps

	// 3. Sections and rules share the rest.
	rest := max(limit-used, 0)
	var rulesAll string
	if len(in.RuleFiles) > 0 {
		rulesAll, _ = security.RenderRules(in.RuleFiles, 0)
		rulesAll = rulesHeader + rulesAll + "\n"
	}
	reserve := min(len(rulesAll), rest/2)
	sel := Select(in.Score, QueryFor(t), in.Spec, rest-reserve)
	p.Sections = sel.Uses
	p.Omitted = append(p.Omitted, sel.Omitted...)
	used += len(sel.Text)

	rblock := ""
	p.Rules = RulesUse{Files: []string{}, Missing: in.NoRules}
	if len(in.RuleFiles) > 0 {
		for _, f := range in.RuleFiles {
			p.Rules.Files = append(p.Rules.Files, f.Path)
		}
		room := max(limit-used-len(rulesHeader)-1, 0)
		text, rep := security.RenderRules(in.RuleFiles, max(room, 1))
		if strings.TrimSpace(text) != "" {
			rblock = rulesHeader + text + "\n"
		}
		p.Rules.Rules, p.Rules.Kept = rep.Rules, rep.Kept
		for _, o := range rep.Omitted {
			p.Omitted = append(p.Omitted, Omission{Kind: "rule", Name: o.File + ": " + o.Title, Tokens: tokensOf(o.Size),
				Reason: fmt.Sprintf("budget: %s rule; the rules had %d tokens left", nonEmptyLevel(o.Level), tokensOf(room))})
		}
		if rblock == "" {
			p.Rules.Kept = 0
		}
	}
	p.Rules.Tokens = Tokens(rblock)

	p.Text = task + dblock + sel.Text + rblock + tail
	p.Tokens = Tokens(p.Text)
	for _, part := range []Part{{"task", Tokens(task + tail)}, {"dependencies", Tokens(dblock)}, {"spec", Tokens(sel.Text)}, {"rules", Tokens(rblock)}} {
		if part.Tokens > 0 {
			p.Parts = append(p.Parts, part)
		}
	}
	return p
}

const rulesHeader = "## Security rules for this task's languages\n"

// taskBlock is what the task says about itself, before its dependencies.
func taskBlock(t *spec.Task) string {
	var b strings.Builder
	if d := strings.TrimSpace(t.Description); d != "" {
		fmt.Fprintf(&b, "## What to do\n%s\n\n", d)
	}
	if len(t.AcceptanceCriteria) > 0 {
		b.WriteString("## Acceptance criteria\n")
		for _, c := range t.AcceptanceCriteria {
			fmt.Fprintf(&b, "- %s\n", c)
		}
		b.WriteString("\n")
	}
	b.WriteString("## Files\n")
	writeList(&b, "Create", t.Files.Create)
	writeList(&b, "Modify", t.Files.Modify)
	writeList(&b, "Read", t.Files.Read)
	b.WriteString("You may create or modify only the files listed under Create and Modify; writes anywhere else are refused and fail the task.\n\n")
	return b.String()
}

// tailBlock is the rest of the task's own text: verification, its context
// and a retry's diagnosis (the last goes at the end of the pack).
func tailBlock(t *spec.Task, previous string) string {
	var b strings.Builder
	if t.Verification != nil && strings.TrimSpace(t.Verification.Command) != "" {
		fmt.Fprintf(&b, "## Verification\nWhen you finish, zerg runs this command in your workspace; it must pass:\n\n    %s\n\n", t.Verification.Command)
	}
	if c := strings.TrimSpace(t.Context); c != "" {
		fmt.Fprintf(&b, "## Context\n%s\n\n", c)
	}
	if previous != "" {
		fmt.Fprintf(&b, "## Previous attempt failed\nAn earlier attempt of this task failed, %s\n\n", previous)
	}
	return b.String()
}

func writeList(b *strings.Builder, label string, paths []string) {
	if len(paths) == 0 {
		return
	}
	fmt.Fprintf(b, "%s: %s\n", label, strings.Join(paths, ", "))
}

// depsBlock lists the dependencies' files and the summaries given (by
// position; "" none). A dependency with neither is not listed.
func depsBlock(deps []Dep, summaries []string) string {
	var b strings.Builder
	for i, d := range deps {
		s := ""
		if i < len(summaries) {
			s = summaries[i]
		}
		if len(d.Files) == 0 && s == "" {
			continue
		}
		files := strings.Join(d.Files, ", ")
		if files == "" {
			files = "no files"
		}
		fmt.Fprintf(&b, "- %s (%s): %s\n", d.ID, textx.OneLine(d.Title), files)
		if s != "" {
			fmt.Fprintf(&b, "  Its worker's summary: %s\n", s)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "## From earlier tasks (already in your workspace)\n" + b.String() + "\n"
}

func withOne(s []string, i int, v string) []string {
	out := slices.Clone(s)
	out[i] = v
	return out
}

// summaryText is a worker's summary as the prompt carries it: printable,
// one line, at most SummaryChars bytes, cut at a word.
func summaryText(s string) string {
	s = strings.Join(strings.Fields(term.Clean(s)), " ")
	if len(s) <= SummaryChars {
		return s
	}
	cut := s[:SummaryChars-len("…")]
	if i := strings.LastIndexByte(cut, ' '); i > SummaryChars/2 {
		cut = cut[:i]
	}
	return strings.ToValidUTF8(cut, "") + "…"
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonEmptyLevel(l string) string {
	if l == "" {
		return "unlevelled"
	}
	return "a " + l
}
