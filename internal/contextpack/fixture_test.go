package contextpack

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/spec"
)

// The fixture (testdata/shop): a spec whose design has a dozen sections,
// each about one component of a bookshop service, and a graph of twelve
// tasks, each building one of them. ownSection names each task's section.
var ownSection = map[string]string{
	"config":    "Configuration loader",
	"metrics":   "Metrics and health",
	"audit":     "Audit log",
	"catalog":   "Catalog store",
	"search":    "Search index",
	"auth":      "Authentication and sessions",
	"ratelimit": "Rate limiter",
	"router":    "HTTP router",
	"cart":      "Shopping cart",
	"inventory": "Inventory reservations",
	"notify":    "Email notifications",
	"checkout":  "Checkout and payments",
}

// loadShop reads the fixture: its graph and its spec cut into sections.
func loadShop(t testing.TB) (*spec.Graph, []Section) {
	t.Helper()
	dir := filepath.Join("testdata", "shop")
	data, err := os.ReadFile(filepath.Join(dir, "task-graph.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep := spec.Check(data, spec.Options{})
	if !rep.Valid() {
		t.Fatalf("fixture graph: %v", rep.Err())
	}
	var secs []Section
	for _, f := range []string{"requirements.md", "design.md"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		secs = append(secs, Split(f, string(b), len(secs))...)
	}
	return rep.Graph, secs
}

// packer gives the names of the sections a task's prompt carries.
type packer func(task *spec.Task) []string

// packsOf is the real packer: Build with the given scorer (nil: Rank).
func packsOf(g *spec.Graph, secs []Section, score func(Query, []Section) []Scored) packer {
	return func(task *spec.Task) []string {
		var in []string
		for _, u := range Build(Input{Task: task, Deps: DepsOf(g, task, nil), Spec: secs, Score: score}).Sections {
			if u.Included {
				in = append(in, u.Name)
			}
		}
		return in
	}
}

// packProblems checks every task's sections against the claim: its own
// section and at most three others. One line per problem.
func packProblems(g *spec.Graph, pack packer) []string {
	var out []string
	for _, task := range g.Tasks {
		own, others := false, []string{}
		for _, name := range pack(task) {
			if strings.HasSuffix(name, "› "+ownSection[task.ID]) {
				own = true
			} else {
				others = append(others, name)
			}
		}
		if !own {
			out = append(out, fmt.Sprintf("%s: its own section %q is not in the pack", task.ID, ownSection[task.ID]))
		}
		if len(others) > 3 {
			out = append(out, fmt.Sprintf("%s: %d other sections in the pack", task.ID, len(others)))
		}
	}
	return out
}

func TestShopFixture(t *testing.T) {
	g, secs := loadShop(t)
	if len(g.Tasks) != 12 {
		t.Fatalf("%d tasks, want 12", len(g.Tasks))
	}
	components := 0
	for _, s := range secs {
		if s.File == "design.md" && s.Level == 2 {
			components++
		}
	}
	if components != 12 {
		t.Fatalf("design.md has %d component sections, want 12", components)
	}
	for _, task := range g.Tasks {
		if ownSection[task.ID] == "" {
			t.Fatalf("task %s has no own section in the table", task.ID)
		}
	}
}

// TestEachPackCarriesItsOwnSection is the claim on the fixture: each task's
// pack carries its own section and at most three others, within the default
// budget. It logs what each pack carries.
func TestEachPackCarriesItsOwnSection(t *testing.T) {
	g, secs := loadShop(t)
	for _, p := range packProblems(g, packsOf(g, secs, nil)) {
		t.Error(p)
	}
	total := 0
	for _, s := range secs {
		total += Tokens(sectionBlock(s, s.Body))
	}
	for _, task := range g.Tasks {
		p := Build(Input{Task: task, Deps: DepsOf(g, task, nil), Spec: secs})
		if p.Tokens > p.Budget || p.OverBudget {
			t.Errorf("%s: %d tokens, over the budget of %d", task.ID, p.Tokens, p.Budget)
		}
		var in []string
		for _, u := range p.Sections {
			if u.Included {
				in = append(in, fmt.Sprintf("%s (%.2f)", u.Name[strings.LastIndex(u.Name, "› ")+len("› "):], u.Score))
			}
		}
		next := p.Sections[len(in)] // the best section left out
		t.Logf("%-9s %4d tokens, spec %3d of %d: %s; next: %s (%.2f)", task.ID, p.Tokens, partTokens(p, "spec"), total,
			strings.Join(in, ", "), next.Name, next.Score)
	}
}

// TestBrokenRankingIsNoticed is the control: the same check fails when the
// ranking is broken, both ways it can be: a scorer that ignores the task
// (every task gets the first sections of the spec) and the predecessor's
// way, the whole spec for every task.
func TestBrokenRankingIsNoticed(t *testing.T) {
	g, secs := loadShop(t)
	ignoresTask := func(_ Query, secs []Section) []Scored {
		out := make([]Scored, len(secs))
		for i, s := range secs {
			out[i] = Scored{Section: i, Score: float64(len(secs) - s.Order)}
		}
		return out
	}
	probs := packProblems(g, packsOf(g, secs, ignoresTask))
	if len(probs) < 10 {
		t.Errorf("a scorer that ignores the task: the check found only %d problems:\n%s", len(probs), strings.Join(probs, "\n"))
	}
	t.Logf("control, a scorer that ignores the task: %d problems, e.g. %s", len(probs), probs[0])

	whole := func(*spec.Task) []string {
		var all []string
		for _, s := range secs {
			all = append(all, s.Name())
		}
		return all
	}
	probs = packProblems(g, whole)
	if len(probs) != 12 {
		t.Errorf("the whole spec for every task: the check found %d problems, want 12:\n%s", len(probs), strings.Join(probs, "\n"))
	}
	t.Logf("control, the whole spec: %d problems, e.g. %s", len(probs), probs[0])
}

func partTokens(p Pack, name string) int {
	for _, part := range p.Parts {
		if part.Name == name {
			return part.Tokens
		}
	}
	return 0
}
