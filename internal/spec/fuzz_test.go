package spec

import (
	"os"
	"path/filepath"
	"testing"
)

func addSeeds(f *testing.F) {
	f.Add([]byte(`{"feature":"f","tasks":[{"id":"A","title":"a","level":1}]}`))
	f.Add([]byte(graphJSON(task("A", 1, `"files":{"create":["x"]}`), task("B", 1, `"dependencies":["A"],"files":{"modify":["x"]}`))))
	f.Add([]byte(graphJSON(task("A", 1, `"dependencies":["B"]`), task("B", 2, `"dependencies":["A"]`))))
	f.Add([]byte(`{"feature":"f","tasks":[{"id":"A","title":"a","level":1.0e400}]}`))
	f.Add([]byte(`[`))
	f.Add([]byte(`{"feature":null,"tasks":[null,1,"x",{}]}`))
	// A real graph from the corpus.
	data, err := os.ReadFile(filepath.Join(corpusDir, "gsd__specs__rush-perf-fix.task-graph.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
}

// FuzzLoad: parsing never panics, and every rejection is an issue with a message.
func FuzzLoad(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		g, issues := Parse(data)
		if g == nil && len(issues) == 0 {
			t.Fatal("no graph and no issue")
		}
		for _, i := range issues {
			if i.Message == "" || i.Code == "" {
				t.Fatalf("issue without message or code: %+v", i)
			}
		}
	})
}

// FuzzValidate: validation and relevel never panic; an invalid report has
// errors with messages; a relevelled graph is valid.
func FuzzValidate(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := Check(data, Options{})
		if !r.Valid() && r.Err() == nil {
			t.Fatal("invalid without error")
		}
		for _, i := range append(r.Errors, r.Warnings...) {
			if i.Message == "" || i.String() == "" {
				t.Fatalf("empty message: %+v", i)
			}
		}
		if r.Valid() {
			_ = Analyze(r.Graph, 3)
		}
		out, _, after, err := Relevel(data, KeepLevels, Options{})
		if err == nil && !after.Valid() {
			t.Fatalf("relevel returned an invalid graph: %v\n%s", after.Err(), out)
		}
	})
}
