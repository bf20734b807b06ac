package journey

import (
	"strings"
	"testing"
)

func TestAggregate(t *testing.T) {
	s := &Summary{Findings: []Finding{
		{Severity: Info, Title: "i1"}, {Severity: Minor, Title: "m1"}, {Severity: Blocking, Title: "b1"},
		{Severity: Major, Title: "M1"}, {Severity: Blocking, Title: "b2"}, {Severity: Info, Title: "i2"},
	}}
	Aggregate(s)
	var order []string
	for _, f := range s.Findings {
		order = append(order, f.Title)
	}
	if strings.Join(order, ",") != "b1,b2,M1,m1,i1,i2" {
		t.Errorf("order %v", order)
	}
	if !s.Blocking || s.Counts[Blocking] != 2 || s.Counts[Major] != 1 || s.Counts[Minor] != 1 || s.Counts[Info] != 2 {
		t.Errorf("counts %v blocking %v", s.Counts, s.Blocking)
	}
	empty := &Summary{}
	Aggregate(empty)
	if empty.Blocking || len(empty.Counts) != 4 || empty.Findings == nil || empty.Checks == nil {
		t.Errorf("empty: %+v", empty)
	}
	md := RenderMarkdown(s)
	if !strings.Contains(md, "## Blocking\n\n- [] b1\n") || strings.Index(md, "## Blocking") > strings.Index(md, "## Info") || strings.Contains(md, "## Minor\n\n- [] i1") {
		t.Errorf("markdown:\n%s", md)
	}
}

func TestParseModelFindings(t *testing.T) {
	text := "Here is my review.\n```json\n" + `{"findings": [
	  {"severity": "Blocking", "title": "SQL built by concatenation", "file": "db.go", "line": 12, "detail": "use parameters"},
	  {"severity": "low", "title": "typo"},
	  {"severity": "urgent", "title": "odd"}]}` + "\n```\n"
	fs, err := ParseModelFindings(text)
	if err != nil || len(fs) != 3 {
		t.Fatalf("%v %+v", err, fs)
	}
	if fs[0].Severity != Blocking || fs[0].File != "db.go" || fs[0].Line != 12 || fs[0].Source != "claude" {
		t.Errorf("first %+v", fs[0])
	}
	if fs[1].Severity != Minor {
		t.Errorf("low read as %s", fs[1].Severity)
	}
	// An unknown severity takes the most severe reading.
	if fs[2].Severity != Blocking || !strings.Contains(fs[2].Title, `"urgent" read as blocking`) {
		t.Errorf("unknown severity %+v", fs[2])
	}
	if fs, err := ParseModelFindings(`{"findings": []}`); err != nil || len(fs) != 0 || fs == nil {
		t.Errorf("empty: %v %v", fs, err)
	}
	for _, bad := range []string{"", "Looks good to me.", `{"findings": [}`, `{"findings": "none"}`, `{"findings": null}`, `{"verdict": "ok"}`} {
		if _, err := ParseModelFindings(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestParseModelFindingsAsModelsAnswer: the answers the red team saw and
// their neighbours. A blocking finding is blocking whatever surrounds it:
// prose after it (with braces), before it, a fence, an answer wrapped in
// another object, the same answer twice, or a missing severity.
func TestParseModelFindingsAsModelsAnswer(t *testing.T) {
	obj := `{"findings": [{"severity": "blocking", "title": "backdoor in auth.go", "file": "auth.go", "line": 7}]}`
	for name, text := range map[string]string{
		"bare":                     obj,
		"one sentence after":       obj + "\nThe handler accepts the token {debug} for any user; remove it before merging.",
		"prose before with braces": "I read auth.go; the check `if (x) { ok }` is odd.\n" + obj,
		"fenced among prose":       "Summary below.\n\n```json\n" + obj + "\n```\n\nLet me know if you need more.",
		"wrapped":                  `{"review": ` + obj + `, "notes": "done"}`,
		"twice":                    obj + "\n\nAgain, as JSON:\n" + obj,
		"example then answer":      `Format: {"findings": [...]}` + "\n" + obj,
	} {
		fs, err := ParseModelFindings(text)
		if err != nil || len(fs) != 1 || fs[0].Severity != Blocking || fs[0].File != "auth.go" {
			t.Errorf("%s: %v %+v", name, err, fs)
		}
	}
	// Two answers: both are kept, the worst decides.
	fs, err := ParseModelFindings(`{"findings": [{"severity": "minor", "title": "a"}]} and then {"findings": [{"severity": "blocking", "title": "b"}]}`)
	if err != nil || len(fs) != 2 || fs[1].Severity != Blocking {
		t.Errorf("two answers: %v %+v", err, fs)
	}
	fs, err = ParseModelFindings(`{"findings": [{"title": "no grade"}]}`)
	if err != nil || len(fs) != 1 || fs[0].Severity != Blocking {
		t.Errorf("missing severity: %v %+v", err, fs)
	}
	// What a model copied from the diff is cleaned before review.md.
	fs, _ = ParseModelFindings(`{"findings": [{"severity": "info", "title": "x\u001b]52;c;QUFB\u0007\r0 blocking", "detail": "a\u001b[2Jb"}]}`)
	if len(fs) != 1 || fs[0].Title != "x0 blocking" || fs[0].Detail != "ab" {
		t.Errorf("not cleaned: %+v", fs)
	}
}

// TestMergeBlock: only a review of the very head, with a blocking finding,
// blocks a merge.
func TestMergeBlock(t *testing.T) {
	blocking := &Summary{Head: "abc", Blocking: true}
	clean := &Summary{Head: "abc"}
	unread := &Summary{Head: "abc", Errors: []string{"the review's answer could not be read"}}
	for _, c := range []struct {
		s    *Summary
		head string
		want bool
	}{
		{nil, "abc", false},
		{clean, "abc", false},
		{blocking, "abc", true},
		{unread, "abc", true},    // an error blocks even without a finding
		{blocking, "def", false}, // the branch moved on since the review
	} {
		if got := MergeBlock(c.s, c.head); got != c.want {
			t.Errorf("MergeBlock(%+v, %s) = %v", c.s, c.head, got)
		}
	}
}

func TestWriteAndLoadReview(t *testing.T) {
	dir := t.TempDir()
	if s, err := LoadReview(dir); s != nil || err != nil {
		t.Fatalf("no review: %v %v", s, err)
	}
	s := &Summary{Version: SummaryVersion, Feature: "auth", Head: "abc", Findings: []Finding{{Severity: Blocking, Source: "secrets", Title: "key"}}}
	Aggregate(s)
	if err := WriteReview(dir, s); err != nil {
		t.Fatal(err)
	}
	got, err := LoadReview(dir)
	if err != nil || got.Head != "abc" || !got.Blocking || got.Counts[Blocking] != 1 {
		t.Fatalf("%v %+v", err, got)
	}
}

func TestOpenQuestions(t *testing.T) {
	doc := "# R\n\n## Goal\n- not a question\n\n## Open questions\n- Who uses it?\n2. How big?\nWhat about errors?\nSome prose.\n\n## Notes\n- later\n"
	qs, ok := OpenQuestions(doc)
	if !ok || strings.Join(qs, "|") != "Who uses it?|How big?|What about errors?" {
		t.Errorf("%v %q", ok, qs)
	}
	if qs, ok := OpenQuestions("## Open Questions\n- None.\n"); !ok || len(qs) != 0 {
		t.Errorf("none: %v %q", ok, qs)
	}
	if _, ok := OpenQuestions("# R\n- x\n"); ok {
		t.Error("no section found one")
	}
}

func TestCheckFeature(t *testing.T) {
	for _, ok := range []string{"auth", "user-auth_2", "v1.2"} {
		if err := CheckFeature(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a/b", "-x", "a..b", "x.lock", "a b"} {
		if CheckFeature(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
