package run

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

// TestPlanJSON: rush --dry-run --json lists every level's tasks and every
// task with its projection and verification, [] for empty lists, and the
// on-exceed policy only with a run budget.
func TestPlanJSON(t *testing.T) {
	r := spec.Check([]byte(`{"feature":"auth","tasks":[
		{"id":"a","title":"A","level":1,"verification":{"command":"go test ./a"},"files":{"create":["a.go"]}},
		{"id":"b","title":"B","level":2,"dependencies":["a"],"verification":{"command":"go test ./b"}}]}`), spec.Options{})
	if !r.Valid() {
		t.Fatal(r.Err())
	}
	cfg := config.Default()
	p := Plan{Feature: "auth", Config: cfg, Workers: 2, Graph: r.Graph, Analysis: spec.Analyze(r.Graph, 2),
		Projection: runstate.Project(runstate.ProjectOptions{Graph: r.Graph, Config: cfg, Workers: 2})}
	out := p.JSON()
	if out.IntegrationBranch != "zerg/auth/integration" || len(out.Levels) != 2 || len(out.Tasks) != 2 {
		t.Fatalf("plan JSON = %+v, want the integration branch, 2 levels and 2 tasks", out)
	}
	if out.Tasks[0].ID != "a" || out.Tasks[0].Verification != "go test ./a" || strings.Join(out.Tasks[0].Owns, ",") != "a.go" {
		t.Errorf("first task = %+v", out.Tasks[0])
	}
	if out.Budget.OnExceed != "" && cfg.Budget.RunUSD == 0 {
		t.Errorf("on_exceed = %q without a run budget", out.Budget.OnExceed)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"confirm":[]`, `"owns":[]`, `"levels":[{"level":1,"tasks":["a"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("plan JSON lacks %s:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "existing_run") {
		t.Errorf("plan JSON of a fresh run names an existing run:\n%s", b)
	}
	p.Existing = &runstate.View{State: runstate.RunDelivered, Head: "abc"}
	if e := p.JSON().ExistingRun; e == nil || e.State != runstate.RunDelivered || e.Head != "abc" {
		t.Errorf("existing run = %+v", e)
	}
}
