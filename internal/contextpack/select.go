package contextpack

import (
	"fmt"
	"slices"
	"strings"
)

// Selection is the spec part of a pack.
type Selection struct {
	Text    string       // the prompt block ("" when no section is in)
	Uses    []SectionUse // every section, best first, with the decision
	Omitted []Omission   // the sections left out or cut
}

// Select ranks the sections against the query (score nil: Rank) and takes
// the best ones that fit in room bytes:
//
//   - a section that shares no word or name with the task is left out;
//   - the best section is in, cut at a line to fit when it is too long
//     (left out only when not even minCutChars of it fit);
//   - each other section is in only if it scores at least MinShare of the
//     best, fewer than MaxSections are in, and it fits whole.
//
// Ties are broken by the order of the spec. The sections that are in appear
// in the spec's order.
func Select(score func(Query, []Section) []Scored, q Query, secs []Section, room int) Selection {
	if score == nil {
		score = Rank
	}
	scored := score(q, secs)
	order := make([]int, len(secs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case scored[a].Score > scored[b].Score:
			return -1
		case scored[a].Score < scored[b].Score:
			return 1
		}
		return secs[a].Order - secs[b].Order
	})
	header := func(n int) string {
		return fmt.Sprintf("## Feature spec: the %s most relevant to this task (of %d)\n", plural(n, "section"), len(secs))
	}
	sel := Selection{Uses: []SectionUse{}, Omitted: []Omission{}}
	if len(secs) == 0 {
		return sel
	}
	best := scored[order[0]].Score
	left := room - len(header(MaxSections)) - 1
	var in []int
	texts := map[int]string{}
	for _, i := range order {
		s, sc := secs[i], scored[i]
		block := sectionBlock(s, s.Body)
		u := SectionUse{Name: s.Name(), Score: sc.Score, Terms: sc.Terms, Names: sc.Names, Tokens: Tokens(block)}
		switch {
		case sc.Score <= 0:
			u.Reason = "shares no word or name with the task"
		case len(in) == 0 && len(block) <= left:
			u.Included, u.Reason = true, "the best match"
		case len(in) == 0 && left >= minCutChars:
			block = sectionBlock(s, cutAtLine(s.Body, left-len(sectionBlock(s, ""))-len(cutNote)-1)+"\n"+cutNote)
			u.Included, u.Cut, u.Reason = true, true, fmt.Sprintf("the best match, cut to the %d tokens left of the budget", tokensOf(left))
		case len(in) == 0:
			u.Reason = fmt.Sprintf("budget: the best match, but only %d tokens were left for the spec", tokensOf(max(left, 0)))
		case len(in) >= MaxSections:
			u.Reason = fmt.Sprintf("limit: the %d best sections are in", MaxSections)
		case sc.Score < MinShare*best:
			u.Reason = fmt.Sprintf("score %.2f is under %.0f%% of the best (%.2f)", sc.Score, MinShare*100, best)
		case len(block) > left:
			u.Reason = fmt.Sprintf("budget: %d tokens, %d left for the spec", Tokens(block), tokensOf(max(left, 0)))
		default:
			u.Included, u.Reason = true, fmt.Sprintf("score %.2f is at least %.0f%% of the best (%.2f)", sc.Score, MinShare*100, best)
		}
		if u.Included {
			in = append(in, i)
			texts[i] = block
			left -= len(block)
			u.Tokens = Tokens(block)
		}
		if !u.Included || u.Cut {
			sel.Omitted = append(sel.Omitted, Omission{Kind: "section", Name: u.Name, Tokens: Tokens(sectionBlock(s, s.Body)), Reason: u.Reason})
		}
		sel.Uses = append(sel.Uses, u)
	}
	if len(in) == 0 {
		return sel
	}
	slices.SortFunc(in, func(a, b int) int { return secs[a].Order - secs[b].Order })
	var b strings.Builder
	b.WriteString(header(len(in)))
	for _, i := range in {
		b.WriteString(texts[i])
	}
	b.WriteString("\n")
	sel.Text = b.String()
	return sel
}

const cutNote = "…(section cut to fit the context budget)"

// sectionBlock is one section in the prompt: its file and heading trail as a
// heading, then its text.
func sectionBlock(s Section, body string) string {
	return "\n### " + s.Name() + "\n" + body + "\n"
}

// cutAtLine returns the longest prefix of s of at most n bytes that ends at
// a line break (or, when the first line is longer, at a space).
func cutAtLine(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		return strings.TrimRight(cut[:i], " \n")
	}
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		cut = cut[:i]
	}
	return strings.ToValidUTF8(cut, "")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
