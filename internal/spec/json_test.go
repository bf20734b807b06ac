package spec

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGraphJSON: tasks come level by level, lists are [] rather than null,
// minutes become milliseconds, and the critical path is marked.
func TestGraphJSON(t *testing.T) {
	doc := graphJSON(
		task("b", 2, `"dependencies":["a"],"estimate_minutes":1.5,"files":{"create":["b.go"]}`),
		task("a", 1, `"estimate_minutes":2`),
		task("c", 1, ""),
	)
	r := Check([]byte(doc), Options{})
	if !r.Valid() {
		t.Fatalf("graph invalid: %v", r.Err())
	}
	an := Analyze(r.Graph, 2)
	out := NewGraphJSON("g.json", r.Graph, an)
	var ids []string
	for _, tk := range out.Tasks {
		ids = append(ids, tk.ID)
	}
	if got := strings.Join(ids, ","); got != "a,c,b" {
		t.Errorf("task order = %s, want a,c,b (level by level, file order within one)", got)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		`"file":"g.json"`, `"feature":"f"`,
		`{"id":"a","title":"t a","level":1,"dependencies":[],"create":[],"modify":[],"read":[],"estimate_ms":120000,"critical":true,"verification":"go test ./..."}`,
		`{"id":"c","title":"t c","level":1,"dependencies":[],"create":[],"modify":[],"read":[],"critical":false,`,
		`"estimate_ms":90000,"critical":true`,
		`"critical_path":["a","b"]`, `"critical_ms":210000`, `"workers":2`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("graph JSON lacks %s:\n%s", want, s)
		}
	}
}

func TestReportProblemsListErrorsThenWarnings(t *testing.T) {
	r := &Report{
		Warnings: []Issue{{Severity: Warning, Code: "w", Message: "warn"}},
		Errors:   []Issue{{Severity: Error, Code: "e", Task: "T1", Field: "level", Message: "bad"}},
	}
	got := r.Problems("g.json")
	if len(got) != 2 || got[0].Code != "e" || got[1].Code != "w" || got[0].File != "g.json" || got[0].Task != "T1" || got[0].Severity != "error" {
		t.Errorf("Problems = %+v, want the error then the warning, naming the file", got)
	}
	if got := (&Report{}).Problems("g.json"); got == nil || len(got) != 0 {
		t.Errorf("Problems of a clean report = %#v, want []", got)
	}
}

func TestMinutesMSAndNonNil(t *testing.T) {
	if got := MinutesMS(1.5); got != 90_000 {
		t.Errorf("MinutesMS(1.5) = %d", got)
	}
	if got := NonNil[string](nil); got == nil || len(got) != 0 {
		t.Errorf("NonNil(nil) = %#v, want []", got)
	}
}
