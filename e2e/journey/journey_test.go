package journey

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJourneyRehearsal: the whole journey rehearsed offline. plan --from
// writes requirements.md with its open questions; design's first graph has a
// dependency cycle and an ownership clash, validation feeds both back, and
// round 2's graph is valid; the rush delivers it; review runs the gate, the
// secret scan, the rules check and the model's review, writes review.md and
// review.json and exits 0; the branch merges. The user's branch and working
// tree are untouched until the merge.
func TestJourneyRehearsal(t *testing.T) {
	p := newProject(t)
	idea := filepath.Join(p.tmp, "idea.txt")
	if err := os.WriteFile(idea, []byte("Greet and shout the names of a list, in plain sh.\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// plan
	r := p.zerg("plan", "demo", "--from", idea, "--rehearse")
	if r.code != 0 {
		t.Fatalf("plan: %s", r)
	}
	if got := p.read(p.specFile("requirements.md")); got != requirementsDoc {
		t.Errorf("requirements.md:\n%s", got)
	}
	for _, want := range []string{"wrote .zerg/specs/demo/requirements.md", "open questions (2):", "  - Should an empty names file print nothing or an error?"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan output lacks %q:\n%s", want, r.stdout)
		}
	}

	// design: round 1 invalid (cycle + ownership), round 2 valid.
	r = p.zerg("design", "demo", "--rehearse")
	if r.code != 0 {
		t.Fatalf("design: %s", r)
	}
	for _, want := range []string{
		"zerg: design round 1 of 3: ",
		"dependency cycle",
		"both own data/names.txt at level 1",
		"zerg: design round 2 of 3: the task graph is valid",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("design stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "round 3") {
		t.Errorf("a third round ran:\n%s", r.stderr)
	}
	for _, want := range []string{"demo: valid task graph after 2 rounds", "level 1: L1-names, L1-greet, L1-upper, L1-docs", "level 3: L3-tests",
		"L2-shout", "bin/shout", "data/names.txt"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("design output lacks %q:\n%s", want, r.stdout)
		}
	}
	if v := p.zerg("graph", "validate", "demo"); v.code != 0 {
		t.Errorf("the designed graph does not validate: %s", v)
	}
	if got := p.read(p.specFile("design.md")); got != designDoc {
		t.Errorf("design.md:\n%s", got)
	}
	// rush
	r = p.zerg("rush", "demo", "--rehearse")
	if r.code != 0 || !strings.Contains(r.stdout, "demo: DELIVERED (rehearsal)") {
		t.Fatalf("rush: %s", r)
	}
	if head := p.git("rev-parse", "HEAD"); head != p.base {
		t.Errorf("the user's HEAD moved: %s", head)
	}

	// review
	r = p.zerg("review", "demo", "--rehearse")
	if r.code != 0 {
		t.Fatalf("review: %s", r)
	}
	md := p.read(p.specFile("review.md"))
	for _, want := range []string{"# Review of demo", "Verdict: no blocking finding", "## Minor", "tests/run.sh checks one name of each command", "gate syntax passed"} {
		if !strings.Contains(md, want) {
			t.Errorf("review.md lacks %q:\n%s", want, md)
		}
	}
	var sum struct {
		Head     string         `json:"head"`
		Blocking bool           `json:"blocking"`
		Counts   map[string]int `json:"counts"`
		Checks   []string       `json:"checks"`
	}
	if err := json.Unmarshal([]byte(p.read(p.specFile("review.json"))), &sum); err != nil {
		t.Fatal(err)
	}
	integration := p.git("rev-parse", "zerg/demo/integration")
	if sum.Head != integration || sum.Blocking || sum.Counts["minor"] != 1 || sum.Counts["blocking"] != 0 {
		t.Errorf("review.json: %+v (integration %s)", sum, integration)
	}
	if strings.Join(sum.Checks, ",") != "gate:syntax,secrets,protected,rules,claude" {
		t.Errorf("checks: %v", sum.Checks)
	}
	if st := p.git("status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Errorf("the journey changed tracked files of the user's checkout:\n%s", st)
	}

	// A second review whose model finds something blocking: exit 1, and
	// merge refuses that head until --force.
	blocking := filepath.Join(p.tmp, "blocking.yaml")
	answer := reviewFindings(`{"severity": "blocking", "title": "bin/shout reads a fixed path", "file": "bin/shout", "line": 3, "detail": "Take the names file as an argument."}`)
	if err := os.WriteFile(blocking, []byte("tasks:\n  - name: review\n    match: \"Review demo:\"\n    turns:\n      - text: "+yamlString(t, answer)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = p.zerg("review", "demo", "--rehearse", "--scenario", blocking)
	if r.code != 1 || !strings.Contains(r.stdout, "blocking [claude] bin/shout:3: bin/shout reads a fixed path") ||
		!strings.Contains(r.stderr, "1 blocking finding") {
		t.Fatalf("blocking review: %s", r)
	}
	if md := p.read(p.specFile("review.md")); !strings.Contains(md, "## Blocking") || !strings.Contains(md, "Take the names file as an argument.") {
		t.Errorf("review.md:\n%s", md)
	}
	m := p.zerg("merge", "demo", "--into", "main")
	if m.code != 1 || strings.Count(m.stderr, "\n") != 1 || !strings.Contains(m.stderr, "1 blocking finding") || !strings.Contains(m.stderr, "--force") {
		t.Fatalf("merge after a blocking review: %s", m)
	}
	if head := p.git("rev-parse", "main"); head != p.base {
		t.Fatalf("main moved although the merge was refused")
	}
	m = p.zerg("merge", "demo", "--into", "main", "--force")
	if m.code != 0 || !strings.Contains(m.stdout, "fast-forwarded") || !strings.Contains(m.stderr, "merging anyway (--force)") {
		t.Fatalf("merge --force: %s", m)
	}
	if head := p.git("rev-parse", "main"); head != integration {
		t.Errorf("main at %s, want the integration head %s", head, integration)
	}
}

// TestJourneyBadInput: every command rejects bad input with one line naming
// the file or flag and what to do, exit 2, and writes nothing.
func TestJourneyBadInput(t *testing.T) {
	p := newProject(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"design", "demo", "--rehearse"}, ".zerg/specs/demo/requirements.md: no requirements for demo; write them with zerg plan demo"},
		{[]string{"review", "demo", "--rehearse"}, "branch zerg/demo/integration does not exist; deliver demo first with zerg rush demo"},
		{[]string{"plan", "demo", "--rehearse"}, "stdin is not a terminal: pass --from FILE"},
		{[]string{"plan", "demo", "--from", "nope.txt", "--rehearse"}, "--from nope.txt: cannot read the idea"},
		{[]string{"plan", "demo", "--from", "README.md", "--scenario", "x.yaml"}, "--scenario needs --rehearse"},
		{[]string{"plan", "demo", "--from", "README.md", "--rehearse", "--scenario", "missing.yaml"}, "missing.yaml"},
		{[]string{"plan", "bad/name", "--from", "README.md", "--rehearse"}, `"bad/name" is not a feature name`},
		{[]string{"design", "demo", "--max-rounds", "2"}, "unknown flag: --max-rounds"},
	}
	for _, c := range cases {
		r := p.zerg(c.args...)
		if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("zerg %s: want exit 2 and one line with %q; got %s", strings.Join(c.args, " "), c.want, r)
		}
	}
	if st := p.git("status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("bad input wrote files:\n%s", st)
	}
}
