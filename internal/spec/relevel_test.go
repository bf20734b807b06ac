package spec

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// levelsOf returns id → level of a valid document.
func levelsOf(t *testing.T, doc []byte) map[string]int {
	t.Helper()
	r := Check(doc, Options{})
	if !r.Valid() {
		t.Fatalf("not valid after relevel: %v", r.Err())
	}
	out := map[string]int{}
	for _, tk := range r.Graph.Tasks {
		out[tk.ID] = tk.Level
	}
	return out
}

func TestRelevelSameLevelDependency(t *testing.T) {
	doc := `{
  "feature": "f",
  "notes": {"keep": [1, 2, 3]},
  "tasks": [
    {"id": "A", "title": "a", "level": 1, "phase": "x", "verification": {"command": "true"}},
    {"id": "B", "title": "b", "level": 1, "dependencies": ["A"], "verification": {"command": "true"}},
    {"id": "C", "title": "c", "level": 2, "dependencies": ["B"], "verification": {"command": "true"}},
    {"level": 2, "id": "D", "title": "d", "dependencies": ["A"], "verification": {"command": "true"}}
  ]
}`
	out, changes, _, err := Relevel([]byte(doc), KeepLevels, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := levelsOf(t, out)
	want := map[string]int{"A": 1, "B": 2, "C": 3, "D": 2}
	for id, l := range want {
		if got[id] != l {
			t.Errorf("%s: level %d, want %d", id, got[id], l)
		}
	}
	if len(changes) != 2 || changes[0] != (LevelChange{"B", 1, 2}) || changes[1] != (LevelChange{"C", 2, 3}) {
		t.Errorf("changes %+v", changes)
	}
	// Only the level numbers changed: every other byte is the user's.
	norm := regexp.MustCompile(`"level": \d+`)
	if norm.ReplaceAllString(string(out), "L") != norm.ReplaceAllString(doc, "L") {
		t.Errorf("relevel changed more than levels:\n%s", out)
	}
}

func TestRelevelASAPAndOwnership(t *testing.T) {
	doc := graphJSON(
		task("A", 3, `"files":{"create":["x.go"]}`),
		task("B", 5, `"files":{"modify":["x.go"]}`),
		task("C", 4, `"dependencies":["A"]`),
	)
	out, _, _, err := Relevel([]byte(doc), ASAP, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := levelsOf(t, out)
	// A and B both own x.go: ASAP would put both at 1, so B moves up. C follows A.
	if got["A"] != 1 || got["B"] != 2 || got["C"] != 2 {
		t.Fatalf("levels %v", got)
	}

	out, _, _, err = Relevel([]byte(doc), KeepLevels, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Gaps are closed, order kept: A(3)→1, C(4)→2, B(5)→3.
	if got := levelsOf(t, out); got["A"] != 1 || got["C"] != 2 || got["B"] != 3 {
		t.Fatalf("levels %v", got)
	}
}

func TestRelevelSeparatesSameLevelOwners(t *testing.T) {
	doc := graphJSON(task("A", 1, `"files":{"create":["x.go"]}`), task("B", 1, `"files":{"modify":["x.go"]}`))
	out, changes, _, err := Relevel([]byte(doc), KeepLevels, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := levelsOf(t, out); got["A"] != 1 || got["B"] != 2 || len(changes) != 1 {
		t.Fatalf("levels %v changes %v", got, changes)
	}
}

func TestRelevelInsertsMissingAndFixesZero(t *testing.T) {
	doc := graphJSON(`{"id":"A","title":"a",`+okVerify+`}`, task("B", 0, `"dependencies":["A"]`))
	out, _, _, err := Relevel([]byte(doc), KeepLevels, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := levelsOf(t, out); got["A"] != 1 || got["B"] != 2 {
		t.Fatalf("levels %v", got)
	}
}

func TestRelevelNoChange(t *testing.T) {
	doc := graphJSON(task("A", 1, ""), task("B", 2, `"dependencies":["A"]`))
	out, changes, _, err := Relevel([]byte(doc), KeepLevels, Options{})
	if err != nil || len(changes) != 0 || string(out) != doc {
		t.Fatalf("err %v changes %v", err, changes)
	}
}

func TestRelevelRefusesWhatLevelsCannotFix(t *testing.T) {
	for name, doc := range map[string]string{
		"cycle":       graphJSON(task("A", 1, `"dependencies":["B"]`), task("B", 2, `"dependencies":["A"]`)),
		"unknown dep": graphJSON(task("A", 1, `"dependencies":["Z"]`)),
		"bad json":    `{"feature":`,
		"dup id":      graphJSON(task("A", 1, ""), task("A", 2, "")),
		"unsafe path": graphJSON(task("A", 1, ""), task("B", 1, `"dependencies":["A"],"files":{"create":["/etc/x"]}`)),
	} {
		t.Run(name, func(t *testing.T) {
			_, _, r, err := Relevel([]byte(doc), KeepLevels, Options{})
			if !errors.Is(err, ErrCannotRelevel) || r.Valid() {
				t.Fatalf("err %v, report valid %v", err, r.Valid())
			}
		})
	}
}

// TestRelevelCorpus: every corpus graph whose only problems are levels becomes
// valid after relevel, and valid graphs are left byte for byte.
func TestRelevelCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.task-graph.json"))
	if len(files) != 50 {
		t.Fatalf("%d corpus graphs, want 50", len(files))
	}
	fixed := 0
	for _, f := range files {
		data, err := ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		before := Check(data, Options{})
		out, changes, after, err := Relevel(data, KeepLevels, Options{})
		if err != nil {
			t.Errorf("%s: %v: %v", filepath.Base(f), err, after.Err())
			continue
		}
		if before.Valid() && (len(changes) != 0 || string(out) != string(data)) {
			t.Errorf("%s: valid graph changed: %v", filepath.Base(f), changes)
		}
		if !before.Valid() {
			fixed++
			if !after.Valid() {
				t.Errorf("%s: still invalid: %v", filepath.Base(f), after.Err())
			}
		}
	}
	if fixed != 8 {
		t.Errorf("fixed %d invalid graphs, want the corpus's 8", fixed)
	}
}

func TestAnalyze(t *testing.T) {
	doc := graphJSON(
		task("A", 1, `"estimate_minutes":10`),
		task("B", 1, `"estimate_minutes":4`),
		task("C", 1, `"estimate_minutes":4`),
		task("D", 2, `"dependencies":["B"],"estimate_minutes":20`),
		task("E", 2, `"dependencies":["A"],"estimate_minutes":5`),
	)
	r := Check([]byte(doc), Options{})
	if !r.Valid() {
		t.Fatal(r.Err())
	}
	a := Analyze(r.Graph, 2)
	if strings.Join(a.CriticalPath, ",") != "B,D" || a.CriticalMinutes != 24 {
		t.Errorf("critical path %v (%v min)", a.CriticalPath, a.CriticalMinutes)
	}
	if a.TotalMinutes != 43 || a.LowerBoundDAG != 24 { // max(24, 43/2)
		t.Errorf("total %v, dag bound %v", a.TotalMinutes, a.LowerBoundDAG)
	}
	// Level 1: max(10, 18/2)=10; level 2: max(20, 25/2)=20.
	if a.LowerBoundLevels != 30 || a.MaxParallelism != 3 || len(a.Levels) != 2 {
		t.Errorf("level bound %v, parallelism %d, levels %d", a.LowerBoundLevels, a.MaxParallelism, len(a.Levels))
	}
	if one := Analyze(r.Graph, 1); one.LowerBoundDAG != 43 {
		t.Errorf("1 worker: %v, want total work 43", one.LowerBoundDAG)
	}
	// Without estimates the critical path is the longest chain by count.
	r = Check([]byte(graphJSON(task("A", 1, ""), task("B", 2, `"dependencies":["A"]`), task("C", 1, ""))), Options{})
	if a := Analyze(r.Graph, 4); strings.Join(a.CriticalPath, ",") != "A,B" || a.HasEstimates || a.LowerBoundDAG != 0 {
		t.Errorf("no estimates: %+v", a)
	}
}
