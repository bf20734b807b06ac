package run

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/runstate"
)

// dagGraph: two branches of different speed. A (slow) → C; B (fast) → D;
// E owns what A owns; F depends on nothing and owns a file under A's
// directory.
const dagGraph = `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "level": 1, "files": {"create": ["a/"]}, "estimate_minutes": 20},
 {"id": "B", "title": "b", "level": 1, "files": {"create": ["b.txt"]}, "estimate_minutes": 2},
 {"id": "C", "title": "c", "level": 2, "dependencies": ["A"], "files": {"create": ["c.txt"]}, "estimate_minutes": 2},
 {"id": "D", "title": "d", "level": 2, "dependencies": ["B"], "files": {"create": ["d.txt"]}, "estimate_minutes": 2},
 {"id": "E", "title": "e", "level": 2, "dependencies": ["B"], "files": {"modify": ["a/x.txt"]}, "estimate_minutes": 2},
 {"id": "G", "title": "g", "level": 3, "dependencies": ["C", "D"], "files": {"create": ["g.txt"]}, "estimate_minutes": 1}
]}`

func fakeView(t *testing.T, g string, st map[string]runstate.Status, busy ...string) dagView {
	t.Helper()
	b := map[string]bool{}
	for _, id := range busy {
		b[id] = true
	}
	return newDAGView(mustGraph(t, g), nil, func(id string) runstate.Status {
		if s, ok := st[id]; ok {
			return s
		}
		return runstate.StatusPending
	}, b)
}

func TestDAGStarts(t *testing.T) {
	M, C, R, F, W := runstate.StatusMerged, runstate.StatusCommitted, runstate.StatusRunning, runstate.StatusFailed, runstate.StatusRetryWait
	for _, tc := range []struct {
		name   string
		status map[string]runstate.Status
		busy   []string
		free   int
		want   []string
	}{
		{"start: the roots, the longest chain first", nil, nil, 4, []string{"A", "B"}},
		{"one slot: the critical path's root", nil, nil, 1, []string{"A"}},
		{"no slot", nil, nil, 0, nil},
		// The fast branch goes on while the slow task of the level before runs.
		{"a dependency merged is enough", map[string]runstate.Status{"A": R, "B": M}, []string{"A"}, 4, []string{"D"}},
		// E owns a/x.txt, which A (running, owning a/) owns too.
		{"ownership: not while a holder runs", map[string]runstate.Status{"A": R, "B": M}, []string{"A"}, 4, []string{"D"}},
		{"ownership: not while a holder waits to merge", map[string]runstate.Status{"A": C, "B": M}, nil, 4, []string{"D"}},
		{"ownership: free once the holder merged", map[string]runstate.Status{"A": M, "B": M}, nil, 4, []string{"C", "D", "E"}},
		// E owns a/x.txt, created under A's a/ at the level before: the
		// levels' order holds for it although E does not depend on A.
		{"ownership: a later level waits for an earlier owner", map[string]runstate.Status{"B": M}, nil, 4, []string{"A", "D"}},
		{"a dependency only committed is not merged", map[string]runstate.Status{"A": M, "B": C}, nil, 4, []string{"C"}},
		{"failed and busy tasks do not start", map[string]runstate.Status{"A": M, "B": M, "C": F, "D": W}, []string{"D"}, 4, []string{"E"}},
		{"a task back from a gate failure starts again", map[string]runstate.Status{"A": M, "B": M, "C": W, "D": M, "E": M}, nil, 4, []string{"C"}},
		{"everything merged", map[string]runstate.Status{"A": M, "B": M, "C": M, "D": M, "E": M, "G": M}, nil, 4, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := dagStarts(fakeView(t, dagGraph, tc.status, tc.busy...), tc.free)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	// Control: two tasks of a level whose patterns may overlap (the
	// validator's warning, not an error) never run at once; the same graph
	// with disjoint patterns does.
	overlap := `{"feature": "f", "tasks": [
 {"id": "P", "title": "p", "level": 1, "files": {"create": ["gen/*.go"]}},
 {"id": "Q", "title": "q", "level": 1, "files": {"create": ["gen/**/*.pb.go"]}}]}`
	if got := dagStarts(fakeView(t, overlap, nil), 4); len(got) != 1 {
		t.Errorf("overlapping tasks: %v start together", got)
	}
	if got := dagStarts(fakeView(t, overlap, map[string]runstate.Status{"P": runstate.StatusRunning}, "P"), 4); len(got) != 0 {
		t.Errorf("overlapping tasks: %v starts beside P", got)
	}
	disjoint := strings.Replace(overlap, "gen/**/*.pb.go", "other/**/*.pb.go", 1)
	if got := dagStarts(fakeView(t, disjoint, nil), 4); len(got) != 2 {
		t.Errorf("disjoint tasks: %v, want both", got)
	}
}

func TestDAGBatch(t *testing.T) {
	M, C := runstate.StatusMerged, runstate.StatusCommitted
	for _, tc := range []struct {
		name   string
		status map[string]runstate.Status
		busy   []string
		want   []string
	}{
		{"nothing committed", nil, nil, nil},
		{"the committed ones, in level then id order", map[string]runstate.Status{"A": M, "B": M, "D": C, "C": C}, nil, []string{"C", "D"}},
		// A task never merges before a dependency: G waits for C.
		{"not before a dependency", map[string]runstate.Status{"A": M, "B": M, "C": C, "D": M, "G": C}, nil, []string{"C"}},
		{"a task being merged is not batched again", map[string]runstate.Status{"A": C, "B": C}, []string{"A"}, []string{"B"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := dagBatch(fakeView(t, dagGraph, tc.status, tc.busy...))
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDAGBlocked(t *testing.T) {
	v := fakeView(t, dagGraph, map[string]runstate.Status{"A": runstate.StatusFailed, "B": runstate.StatusMerged, "D": runstate.StatusMerged})
	got := dagBlocked(v)
	// C waits for A; G for C, so for A; E for A too, which owns what it
	// modifies at a lower level. D does not wait for A.
	if len(got) != 3 || got["C"] != "A" || got["G"] != "A" || got["E"] != "A" {
		t.Errorf("blocked %v, want C, E and G by A", got)
	}
	// Control: nothing failed, nothing blocked.
	if got := dagBlocked(fakeView(t, dagGraph, map[string]runstate.Status{"A": runstate.StatusRunning})); len(got) != 0 {
		t.Errorf("blocked %v with no failure", got)
	}
}

// gateWorld plays a merge plan against a gate that fails whenever a
// culprit is merged on the head it runs on: what the coordinator does
// with real merges, in memory.
func playPlan(batch []string, culprits ...string) (merged, failed []string, tests int, trace []string) {
	bad := func(ids []string) bool {
		return slices.ContainsFunc(ids, func(id string) bool { return slices.Contains(culprits, id) })
	}
	p := newMergePlan(batch)
	for {
		step, ok := p.Next()
		if !ok {
			return
		}
		if step.Fail != "" {
			failed = append(failed, step.Fail)
			trace = append(trace, "fail "+step.Fail)
			continue
		}
		tests++
		onHead := append(slices.Clone(merged), step.Test...)
		if bad(onHead) {
			p.Result(false, GateFailure{Gate: "tests", Exit: 1, Output: fmt.Sprint(step.Test)})
			trace = append(trace, fmt.Sprintf("test %v fails", step.Test))
			continue
		}
		merged = append(merged, step.Test...)
		p.Result(true, GateFailure{})
		trace = append(trace, fmt.Sprintf("test %v merges", step.Test))
	}
}

func TestMergePlanBisectsToTheCulprit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		batch    []string
		culprits []string
		tests    int
	}{
		{"a batch that passes merges in one test", []string{"A", "B", "C"}, nil, 1},
		{"a batch of one fails alone", []string{"A"}, []string{"A"}, 1},
		{"culprit first", []string{"A", "B", "C", "D"}, []string{"A"}, 5},
		{"culprit last", []string{"A", "B", "C", "D"}, []string{"D"}, 3},
		{"culprit in the middle", []string{"A", "B", "C", "D", "E"}, []string{"C"}, 4},
		{"two culprits", []string{"A", "B", "C", "D"}, []string{"B", "D"}, 5},
		{"all culprits", []string{"A", "B", "C"}, []string{"A", "B", "C"}, 5},
		// Bisection, not one task at a time: one culprit among sixteen
		// takes the batch's test and a few halvings.
		{"one in sixteen", strings.Split("a b c d e f g h i j k l m n o p", " "), []string{"l"}, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			merged, failed, tests, trace := playPlan(tc.batch, tc.culprits...)
			slices.Sort(failed)
			if !slices.Equal(failed, tc.culprits) {
				t.Fatalf("failed %v, want %v\n%s", failed, tc.culprits, strings.Join(trace, "\n"))
			}
			var rest []string
			for _, id := range tc.batch {
				if !slices.Contains(tc.culprits, id) {
					rest = append(rest, id)
				}
			}
			slices.Sort(merged)
			if !slices.Equal(merged, rest) {
				t.Errorf("merged %v, want every other task %v\n%s", merged, rest, strings.Join(trace, "\n"))
			}
			if tests > tc.tests {
				t.Errorf("%d gate runs, want at most %d\n%s", tests, tc.tests, strings.Join(trace, "\n"))
			}
		})
	}
}

// The culprit's failure carries the output of the gate that named it: the
// test of a group that held no other unmerged task.
func TestMergePlanCulpritCarriesItsGate(t *testing.T) {
	p := newMergePlan([]string{"A", "B"})
	var why GateFailure
	for {
		step, ok := p.Next()
		if !ok {
			break
		}
		switch {
		case step.Fail != "":
			if step.Fail != "B" {
				t.Fatalf("culprit %s, want B", step.Fail)
			}
			why = step.Why
		case slices.Contains(step.Test, "B"):
			p.Result(false, GateFailure{Gate: "lint", Exit: 2, Output: "b.txt: TODO"})
		default:
			p.Result(true, GateFailure{})
		}
	}
	if why.Gate != "lint" || why.Output != "b.txt: TODO" {
		t.Errorf("culprit's failure %+v", why)
	}
}
