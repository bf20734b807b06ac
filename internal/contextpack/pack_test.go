package contextpack

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

func TestSplit(t *testing.T) {
	md := "Intro before any heading.\n\n" +
		"# Design\n\n" +
		"## Components\n\n" + // no text: only a trail
		"### Rate limiter\nToken buckets.\n\n```go\n# not a heading\n```\n\n" +
		"### Cache ###\nLRU.\n" +
		"#hashtag is text\n" +
		"## Risks\n    # indented code, not a heading\nNone.\n"
	secs := Split("design.md", md, 5)
	var got []string
	for _, s := range secs {
		got = append(got, fmt.Sprintf("%d %s L%d: %q", s.Order, s.Name(), s.Level, s.Body))
	}
	want := []string{
		`5 design.md L0: "Intro before any heading."`,
		`6 design.md › Design › Components › Rate limiter L3: "Token buckets.\n\n` + "```go\\n# not a heading\\n```" + `"`,
		`7 design.md › Design › Components › Cache L3: "LRU.\n#hashtag is text"`,
		`8 design.md › Design › Risks L2: "# indented code, not a heading\nNone."`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestWords(t *testing.T) {
	got := words("The RateLimiter refills tokens; HTTPServer uses rate_limit and entries, not class.")
	want := []string{"ratelimiter", "rate", "limiter", "refill", "token", "httpserver", "http", "server",
		"rate", "limit", "entry", "class"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("words = %q, want %q", got, want)
	}
}

func TestRankExplainsItsScore(t *testing.T) {
	secs := []Section{
		{File: "design.md", Trail: []string{"Rate limiter"}, Body: "Token buckets per client. See `internal/ratelimit/bucket.go`.", Order: 0},
		{File: "design.md", Trail: []string{"Cache"}, Body: "An LRU cache of rendered pages with a token of freshness.", Order: 1},
		{File: "design.md", Trail: []string{"Mailer"}, Body: "Sends mail over SMTP.", Order: 2},
	}
	q := Query{Title: "Rate limiter", Text: "Write Allow with token buckets.", Files: []string{"internal/ratelimit/bucket.go"}}
	sc := Rank(q, secs)
	if !(sc[0].Score > sc[1].Score && sc[1].Score > 0 && sc[2].Score == 0) {
		t.Fatalf("scores %v, want limiter > cache > mailer = 0", sc)
	}
	if sc[0].Terms[0] != "rate" && sc[0].Terms[0] != "limiter" {
		t.Errorf("strongest terms of the limiter section: %v", sc[0].Terms)
	}
	if !reflect.DeepEqual(sc[0].Names, []string{"internal/ratelimit/bucket.go"}) || sc[1].Names != nil {
		t.Errorf("names: %v, %v", sc[0].Names, sc[1].Names)
	}
	// Deterministic: the same input gives the same scores.
	if again := Rank(q, secs); !reflect.DeepEqual(again, sc) {
		t.Errorf("Rank is not deterministic: %v then %v", sc, again)
	}
}

func TestContainsName(t *testing.T) {
	for _, c := range []struct {
		text, name string
		want       bool
	}{
		{"see limit.go.", "limit.go", true},
		{"see `limit.go`", "limit.go", true},
		{"see ratelimit.go", "limit.go", false},
		{"see other/limit.go", "limit.go", false},
		{"see limit.golang", "limit.go", false},
		{"limit.go and ratelimit.go", "limit.go", true},
	} {
		if got := containsName(c.text, c.name); got != c.want {
			t.Errorf("containsName(%q, %q) = %v", c.text, c.name, got)
		}
	}
}

func task(id, title, desc string, files ...string) *spec.Task {
	return &spec.Task{ID: id, Title: title, Description: desc, Files: spec.Files{Create: files}}
}

// sections makes n sections of about size bytes each, section i about
// component i.
func sections(n, size int) []Section {
	var out []Section
	for i := range n {
		body := strings.Repeat(fmt.Sprintf("The component%c keeps its own state. ", 'a'+i), size/36+1)
		out = append(out, Section{File: "design.md", Trail: []string{fmt.Sprintf("Component%c", 'a'+i)}, Body: body[:size], Order: i})
	}
	return out
}

func TestBestSectionIsCutToFitTheBudget(t *testing.T) {
	secs := sections(3, 4000) // each about 1,000 tokens
	p := Build(Input{Task: task("T", "Componentb", "Build componentb."), Spec: secs, Budget: 500})
	if p.Tokens > 500 {
		t.Errorf("%d tokens, budget 500", p.Tokens)
	}
	var in []SectionUse
	for _, u := range p.Sections {
		if u.Included {
			in = append(in, u)
		}
	}
	if len(in) != 1 || !strings.HasSuffix(in[0].Name, "Componentb") || !in[0].Cut {
		t.Fatalf("sections in: %+v", in)
	}
	if !strings.Contains(p.Text, cutNote) {
		t.Errorf("the prompt does not say the section was cut:\n%s", p.Text)
	}
	if o := omission(p, "section", "Componentb"); o == nil || !strings.Contains(o.Reason, "cut") {
		t.Errorf("the cut is not recorded: %+v", p.Omitted)
	}
}

func TestOtherSectionsNeedHalfTheBestScoreAndRoom(t *testing.T) {
	secs := []Section{
		{File: "d.md", Trail: []string{"Rate limiter"}, Body: "Rate limiter: token buckets refill; the limiter refuses bursts.", Order: 0},
		{File: "d.md", Trail: []string{"Router"}, Body: "The router calls the rate limiter before the handler.", Order: 1},
		{File: "d.md", Trail: []string{"Mailer"}, Body: "Sends mail; retries with backoff.", Order: 2},
	}
	q := Query{Title: "Rate limiter", Text: "Token buckets."}
	sel := Select(nil, q, secs, 10000)
	if !sel.Uses[0].Included || sel.Uses[0].Name != "d.md › Rate limiter" {
		t.Fatalf("best: %+v", sel.Uses[0])
	}
	for _, u := range sel.Uses[1:] {
		if u.Included {
			t.Errorf("%s is in: %s", u.Name, u.Reason)
		}
	}
	if u := sel.Uses[1]; u.Name != "d.md › Router" || !strings.Contains(u.Reason, "under 50% of the best") {
		t.Errorf("router: %+v", u)
	}
	if u := sel.Uses[2]; u.Reason != "shares no word or name with the task" {
		t.Errorf("mailer: %+v", u)
	}
	// A second section that scores well is in, after the best one in the
	// spec's order, when it fits.
	secs[1].Body = "Rate limiter buckets: the router's token buckets and the limiter."
	sel = Select(nil, q, secs, 10000)
	if !sel.Uses[1].Included {
		t.Fatalf("router not in: %+v", sel.Uses[1])
	}
	if strings.Index(sel.Text, "### d.md › Rate limiter") > strings.Index(sel.Text, "### d.md › Router") {
		t.Errorf("sections not in the spec's order:\n%s", sel.Text)
	}
	// Without room for it, it is left out for the budget.
	first := len(Select(nil, q, secs[:1], 10000).Text)
	sel = Select(nil, q, secs, first+10)
	if sel.Uses[1].Included || !strings.HasPrefix(sel.Uses[1].Reason, "budget:") {
		t.Errorf("router with no room: %+v", sel.Uses[1])
	}
}

func TestAtMostMaxSections(t *testing.T) {
	var secs []Section
	for i := range 8 {
		secs = append(secs, Section{File: "d.md", Trail: []string{fmt.Sprintf("Part %d", i)}, Body: "The cache keeps entries.", Order: i})
	}
	sel := Select(nil, Query{Title: "cache entries"}, secs, 100000)
	n := 0
	for _, u := range sel.Uses {
		if u.Included {
			n++
		} else if !strings.HasPrefix(u.Reason, "limit:") {
			t.Errorf("%s: %s", u.Name, u.Reason)
		}
	}
	if n != MaxSections {
		t.Errorf("%d sections in, want %d", n, MaxSections)
	}
	// Equal scores: the spec's order decides.
	if !sel.Uses[0].Included || sel.Uses[0].Name != "d.md › Part 0" {
		t.Errorf("first: %+v", sel.Uses[0])
	}
}

func TestDependencySummaries(t *testing.T) {
	g := &spec.Graph{Tasks: []*spec.Task{
		task("A", "Names", "", "data/names.txt"),
		task("B", "Greeter", "", "lib/greet.sh"),
		{ID: "C", Title: "Greet all", Dependencies: []string{"A", "B"}, Files: spec.Files{Create: []string{"bin/greet-all"}}},
	}}
	c := g.Tasks[2]
	long := strings.Repeat("word ", 200) + "\x1b[2Jend"
	deps := DepsOf(g, c, map[string]Summary{"A": {Text: "Wrote three names.\x1b]0;x\x07", Attempt: 2}, "B": {Text: long, Attempt: 1}})
	p := Build(Input{Task: c, Deps: deps})
	if !strings.Contains(p.Text, "- A (Names): data/names.txt\n  Its worker's summary: Wrote three names.\n") {
		t.Errorf("A's summary:\n%s", p.Text)
	}
	if strings.Contains(p.Text, "\x1b") {
		t.Errorf("an escape reached the prompt:\n%q", p.Text)
	}
	line := p.Text[strings.Index(p.Text, "- B "):]
	line = line[strings.Index(line, "summary: ")+len("summary: "):]
	line = line[:strings.IndexByte(line, '\n')]
	if len(line) > SummaryChars || !strings.HasSuffix(line, "…") {
		t.Errorf("B's summary is %d bytes: %q", len(line), line)
	}
	if !reflect.DeepEqual(p.Dependencies, []DepUse{{ID: "A", Files: []string{"data/names.txt"}, Summary: true, Attempt: 2},
		{ID: "B", Files: []string{"lib/greet.sh"}, Summary: true, Attempt: 1}}) {
		t.Errorf("dependencies: %+v", p.Dependencies)
	}

	// A small budget: the summaries get a quarter of what the task left.
	p = Build(Input{Task: c, Deps: deps, Budget: 150})
	if o := omission(p, "summary", "B"); o == nil || !strings.Contains(o.Reason, "quarter") {
		t.Errorf("B's summary not left out for the budget: %+v\n%s", p.Omitted, p.Text)
	}
	if !strings.Contains(p.Text, "- B (Greeter): lib/greet.sh\n") {
		t.Errorf("B's files must stay when its summary goes:\n%s", p.Text)
	}
}

// rules is a fake rules file: n strict rules of about size bytes each.
func rules(n, size int) []security.RuleFile {
	var b strings.Builder
	b.WriteString("# Core rules\n\n## A01 Access\n\n")
	for i := range n {
		fmt.Fprintf(&b, "### Rule: number %d\n\n**Level**: `strict`\n\n%s\n\n", i, strings.Repeat("x", size))
	}
	return []security.RuleFile{{Path: "rules/core.md", Kind: "core", Content: []byte(b.String())}}
}

func TestRulesShareTheRestWithTheSpec(t *testing.T) {
	secs := sections(4, 2000)
	tk := task("T", "Componenta", "Build componenta.", "a.go")
	// Rules bigger than the budget: they are sure of half of what is left,
	// the best section fits in the other half, and what the rules leave
	// out is named.
	p := Build(Input{Task: tk, Spec: secs, RuleFiles: rules(20, 600), Budget: 2000})
	if p.Tokens > 2000 {
		t.Errorf("%d tokens, budget 2000", p.Tokens)
	}
	if partTokens(p, "rules") < 800 || partTokens(p, "spec") == 0 {
		t.Errorf("parts %+v: the rules should get about half, the spec its best section", p.Parts)
	}
	if p.Rules.Kept == 0 || p.Rules.Kept == p.Rules.Rules {
		t.Errorf("rules: %+v", p.Rules)
	}
	n := 0
	for _, o := range p.Omitted {
		if o.Kind == "rule" {
			n++
			if !strings.HasPrefix(o.Reason, "budget: a strict rule") {
				t.Errorf("rule omission: %+v", o)
			}
		}
	}
	if n != p.Rules.Rules-p.Rules.Kept {
		t.Errorf("%d rule omissions recorded, %d rules left out", n, p.Rules.Rules-p.Rules.Kept)
	}
	// Small rules: all in, and the spec may use the rest.
	p = Build(Input{Task: tk, Spec: secs, RuleFiles: rules(1, 100), Budget: 2000})
	if p.Rules.Kept != 1 || p.Rules.Rules != 1 {
		t.Errorf("small rules: %+v", p.Rules)
	}
	if !strings.Contains(p.Text, "## Security rules for this task's languages\n") {
		t.Errorf("no rules block:\n%s", p.Text)
	}
}

func TestTaskOverBudgetIsKeptAndFlagged(t *testing.T) {
	tk := task("T", "Componenta", strings.Repeat("Build componenta carefully. ", 100))
	p := Build(Input{Task: tk, Spec: sections(2, 500), Budget: 100})
	if !p.OverBudget || !strings.Contains(p.Text, strings.TrimSpace(tk.Description)) {
		t.Errorf("over budget %v; the task must stay whole", p.OverBudget)
	}
	for _, u := range p.Sections {
		if u.Included {
			t.Errorf("%s is in with no budget left", u.Name)
		}
	}
}

func TestPackRecordIsJSON(t *testing.T) {
	g, secs := loadShop(t)
	tk := g.Task("checkout")
	p := Build(Input{Task: tk, Deps: DepsOf(g, tk, nil), Spec: secs, NoRules: "not fetched", Previous: "verification failed"})
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"task", "budget_tokens", "tokens", "parts", "sections", "dependencies", "rules", "omitted"} {
		if _, ok := back[k]; !ok {
			t.Errorf("context record lacks %q: %s", k, b)
		}
	}
	if _, ok := back["Text"]; ok {
		t.Error("the record repeats the text (prompt.md has it)")
	}
	if !strings.HasSuffix(p.Text, "## Previous attempt failed\nAn earlier attempt of this task failed, verification failed\n\n") {
		t.Errorf("the diagnosis is not last:\n%s", p.Text)
	}
	if p.Tokens != Tokens(p.Text) {
		t.Errorf("tokens %d, text has %d", p.Tokens, Tokens(p.Text))
	}
	sum := 0
	for _, part := range p.Parts {
		sum += part.Tokens
	}
	if sum < p.Tokens-len(p.Parts) || sum > p.Tokens+len(p.Parts) {
		t.Errorf("parts %+v add up to %d, pack %d", p.Parts, sum, p.Tokens)
	}
}

func omission(p Pack, kind, suffix string) *Omission {
	for i, o := range p.Omitted {
		if o.Kind == kind && strings.HasSuffix(o.Name, suffix) {
			return &p.Omitted[i]
		}
	}
	return nil
}
