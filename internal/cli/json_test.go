package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/runstate"
)

// durationWord is a key that names a duration some other way than *_ms.
var durationWord = regexp.MustCompile(`(^|_)(minutes?|mins?|seconds?|secs?|hours?|duration|elapsed|ns|us)$`)

// checkJSONRules checks one --json output against the rules of docs/json.md
// a program can check: durations are whole milliseconds in keys ending in
// _ms (no key counts minutes or seconds), times are RFC 3339 UTC and never
// the zero time, absent values are left out rather than null.
func checkJSONRules(t *testing.T, what string, out []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: not JSON: %v\n%s", what, err, out)
		}
		walkJSON(t, what, "", v)
	}
}

func walkJSON(t *testing.T, what, path string, v any) {
	t.Helper()
	switch x := v.(type) {
	case nil:
		t.Errorf("%s: %s is null; leave an absent value out", what, path)
	case map[string]any:
		for k, val := range x {
			p := path + "." + k
			if durationWord.MatchString(k) {
				t.Errorf("%s: %s names a duration without _ms", what, p)
			}
			if strings.HasSuffix(k, "_ms") {
				if n, ok := val.(json.Number); !ok || strings.ContainsAny(n.String(), ".eE") {
					t.Errorf("%s: %s = %v is not a whole number of milliseconds", what, p, val)
				}
			}
			walkJSON(t, what, p, val)
		}
	case []any:
		for i, val := range x {
			walkJSON(t, what, path+"["+strconv.Itoa(i)+"]", val)
		}
	case string:
		if tm, err := time.Parse(time.RFC3339Nano, x); err == nil {
			if tm.IsZero() || !strings.HasSuffix(x, "Z") {
				t.Errorf("%s: %s = %q is the zero time or not UTC", what, path, x)
			}
		}
	}
}

// TestJSONDurationsAndTimes runs the commands whose --json holds durations
// or times and checks them against docs/json.md.
func TestJSONDurationsAndTimes(t *testing.T) {
	f := newFakeRun(t, "auth", true)
	graph := []byte(`{"feature": "auth", "tasks": [
		{"id": "T1", "title": "one", "level": 1, "estimate_minutes": 2.5, "files": {"create": ["a.txt"]}, "verification": {"command": "true"}},
		{"id": "T2", "title": "two", "level": 2, "estimate_minutes": 10, "dependencies": ["T1"], "files": {"create": ["b.txt"]}, "verification": {"command": "true"}}]}`)
	writeFile(t, filepath.Join(f.root, ".zerg", "specs", "auth", "task-graph.json"), graph)
	writeFile(t, f.paths.GraphSnapshot, graph)
	for _, args := range [][]string{
		{"graph", "validate", "--json", "auth"},
		{"graph", "show", "--json", "auth"},
		{"status", "--json", "auth"},
		{"cost", "--json", "auth"},
		{"rush", "auth", "--dry-run", "--json"},
	} {
		code, out, errOut := runZerg(t, args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		checkJSONRules(t, strings.Join(args, " "), []byte(out))
	}
	if _, out, _ := runZerg(t, "graph", "show", "--json", "auth"); !strings.Contains(out, `"estimate_ms": 150000`) ||
		!strings.Contains(out, `"critical_ms": 750000`) {
		t.Errorf("graph show --json: estimates not in milliseconds:\n%s", out)
	}

	// A run's view with everything a live run shows: a running attempt and
	// the governor with neither a pause nor an open breaker.
	now := time.Now().UTC()
	v := runstate.View{Feature: "auth", State: runstate.RunRunning, StartedAt: now, DurationMS: 1500,
		Coordinator: runstate.CoordinatorView{Alive: true, PID: 7}, Governor: &runstate.GovernorSnapshot{Breaker: "closed", Zone: "green", Limit: 4},
		Levels: []runstate.LevelView{}, Gates: []runstate.GateView{},
		Tasks: []runstate.TaskView{{ID: "T1", Level: 1, Status: runstate.StatusRunning, Running: &runstate.RunningView{Attempt: 1, Started: now}}}}
	var buf bytes.Buffer
	if err := printViewJSON(&buf, v); err != nil {
		t.Fatal(err)
	}
	checkJSONRules(t, "status --json of a live run", buf.Bytes())
}

// TestRushDryRunJSON: rush --dry-run --json prints the plan as data, the
// same figures as the text, and writes nothing.
func TestRushDryRunJSON(t *testing.T) {
	f := newFakeRun(t, "other", false)
	writeFile(t, filepath.Join(f.root, ".zerg", "config.yaml"), []byte("workers: 2\ngates:\n  - name: test\n    command: \"true\"\n"))
	writeFile(t, filepath.Join(f.root, ".zerg", "specs", "auth", "task-graph.json"), []byte(`{"feature": "auth", "tasks": [
		{"id": "T1", "title": "one", "level": 1, "estimate_minutes": 4, "files": {"create": ["a.go"]}, "verification": {"command": "test -f a.go"}},
		{"id": "T2", "title": "two", "level": 1, "files": {"create": ["docs/b.md"]}, "verification": {"command": "true"}},
		{"id": "T3", "title": "three", "level": 2, "dependencies": ["T1"], "files": {"modify": ["a.go"]}, "verification": {"command": "true"}}]}`))
	code, out, errOut := runZerg(t, "rush", "auth", "--dry-run", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var plan struct {
		Feature string `json:"feature"`
		Workers int    `json:"workers"`
		Gates   []struct {
			Name string `json:"name"`
		} `json:"gates"`
		Levels []struct {
			Level     int      `json:"level"`
			Tasks     []string `json:"tasks"`
			Projected runstate.Range
		} `json:"levels"`
		Tasks []struct {
			ID         string   `json:"id"`
			Model      string   `json:"model"`
			Tier       string   `json:"tier"`
			EstimateMS int64    `json:"estimate_ms"`
			Owns       []string `json:"owns"`
			Projected  runstate.Range
		} `json:"tasks"`
		Projection struct {
			Basis     string         `json:"basis"`
			Projected runstate.Range `json:"projected"`
		} `json:"projection"`
		Confirm  []string `json:"confirm"`
		Analysis struct {
			Workers int `json:"workers"`
		} `json:"analysis"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("not the plan as JSON: %v\n%s", err, out)
	}
	if plan.Feature != "auth" || plan.Workers != 2 || plan.Analysis.Workers != 2 || len(plan.Gates) != 1 || len(plan.Levels) != 2 ||
		len(plan.Tasks) != 3 || plan.Confirm == nil || plan.Projection.Basis != "estimate" || plan.Projection.Projected.Expected <= 0 {
		t.Errorf("plan: %+v", plan)
	}
	if tk := plan.Tasks[0]; tk.ID != "T1" || tk.EstimateMS != 240_000 || tk.Tier != "implement" || len(tk.Owns) != 1 {
		t.Errorf("first task: %+v", tk)
	}
	if tk := plan.Tasks[1]; tk.ID != "T2" || tk.Tier != "simple" || tk.EstimateMS != 300_000 {
		t.Errorf("docs task (no estimate: the projection's 5 minutes): %+v", tk)
	}
	// The text shows the same total.
	_, text, _ := runZerg(t, "rush", "auth", "--dry-run")
	if want := fmt.Sprintf("projected cost: $%.2f expected", plan.Projection.Projected.Expected); !strings.Contains(text, want) {
		t.Errorf("text and JSON disagree: no %q in\n%s", want, text)
	}
	if exists(filepath.Join(f.root, ".zerg", "runs", "auth")) {
		t.Error("a dry run wrote the run's directory")
	}
}

// TestRushDryRunOfAFeatureWithARun: --dry-run of a feature whose run
// delivered says a rush would refuse to start and what comes next,
// instead of printing the plan of a fresh run; --json says so too.
func TestRushDryRunOfAFeatureWithARun(t *testing.T) {
	f := newFakeRun(t, "auth", true)
	writeFile(t, filepath.Join(f.root, ".zerg", "specs", "auth", "task-graph.json"), []byte(`{"feature": "auth", "tasks": [
		{"id": "T1", "title": "one", "level": 1, "files": {"create": ["a.go"]}, "verification": {"command": "true"}}]}`))
	code, out, errs := runZerg(t, "rush", "auth", "--dry-run")
	if code != ExitOK || !strings.Contains(out, "auth has a run already (DELIVERED, zerg/auth/integration at") ||
		!strings.Contains(out, "next: review and merge it (zerg merge auth --into BRANCH)") || strings.Contains(out, "Plan for") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
	_, js, _ := runZerg(t, "rush", "auth", "--dry-run", "--json")
	var plan struct {
		ExistingRun *struct {
			State string `json:"state"`
		} `json:"existing_run"`
	}
	if err := json.Unmarshal([]byte(js), &plan); err != nil || plan.ExistingRun == nil || plan.ExistingRun.State != "delivered" {
		t.Errorf("--json: %v %s", err, js)
	}
}
