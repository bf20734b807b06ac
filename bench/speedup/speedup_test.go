package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/mockapi"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

const sec = time.Second

// diamond: a → b, c → d, durations a 1, b 5, c 2, d 1.
func diamondGraph() ([]task, map[string]time.Duration) {
	ts := []task{{ID: "a", Level: 1}, {ID: "b", Level: 2, Deps: []string{"a"}}, {ID: "c", Level: 2, Deps: []string{"a"}}, {ID: "d", Level: 3, Deps: []string{"b", "c"}}}
	return ts, map[string]time.Duration{"a": 1 * sec, "b": 5 * sec, "c": 2 * sec, "d": 1 * sec}
}

func TestCriticalPathAndLowerBound(t *testing.T) {
	ts, d := diamondGraph()
	if got := criticalPath(ts, d); got != 7*sec {
		t.Fatalf("critical path = %v, want 7s (a, b, d)", got)
	}
	// One worker: the total work (9s) bounds; many workers: the critical path.
	for _, c := range []struct {
		workers int
		want    time.Duration
	}{{1, 9 * sec}, {2, 7 * sec}, {8, 7 * sec}, {0, 9 * sec}} {
		if got := lowerBound(ts, d, c.workers); got != c.want {
			t.Errorf("lower bound with %d workers = %v, want %v", c.workers, got, c.want)
		}
	}
	// Control: dropping the dependency of d on b must shorten the critical
	// path; a criticalPath that ignored dependencies would not notice.
	ts[3].Deps = []string{"c"}
	if got := criticalPath(ts, d); got != 6*sec {
		t.Fatalf("control: critical path without d→b = %v, want 6s (a, b)", got)
	}
}

func ev(t *testing.T, typ, task string, attempt int, at time.Time, data any) eventlog.Event {
	t.Helper()
	e := eventlog.Event{Type: typ, Task: task, Attempt: attempt, Time: at}
	if data != nil {
		b, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		e.Data = b
	}
	return e
}

func TestMakespanAndUsageFromEvents(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(sec))) }
	ok := func(in, out int64, usd float64) runstate.AttemptFinished {
		return runstate.AttemptFinished{Class: "success", CostUSD: usd, Usage: &runstate.Tokens{Input: in, CacheRead: 10, Output: out}}
	}
	evs := []eventlog.Event{
		ev(t, runstate.EvRunStarted, "", 0, at(0), nil),
		ev(t, runstate.EvAttemptStarted, "a", 1, at(2), nil),
		ev(t, runstate.EvAttemptStarted, "b", 1, at(3), nil),
		ev(t, runstate.EvAttemptFinished, "a", 1, at(5), ok(100, 20, 0.5)),
		// b fails once, then succeeds: the failure is paid for but not a span.
		ev(t, runstate.EvAttemptFinished, "b", 1, at(6), runstate.AttemptFinished{Class: "task", CostUSD: 0.25, Usage: &runstate.Tokens{Input: 40, Output: 4}}),
		ev(t, runstate.EvAttemptStarted, "b", 2, at(7), nil),
		ev(t, runstate.EvAttemptFinished, "b", 2, at(11), ok(200, 30, 1)),
		ev(t, runstate.EvRunFinished, "", 0, at(20), nil),
	}
	sp := spans(evs)
	if len(sp) != 2 || sp["a"].dur() != 3*sec || sp["b"].dur() != 4*sec {
		t.Fatalf("spans = %v, want a 3s and b 4s (its second attempt)", sp)
	}
	if got := makespan(sp); got != 9*sec {
		t.Fatalf("makespan = %v, want 9s (first start 2s to last end 11s, not the run's 20s)", got)
	}
	u := rushUsage(evs)
	if u.Input != 100+10+40+200+10 || u.Output != 54 || u.USD != 1.75 {
		t.Fatalf("usage = %+v, want input 360 (cache reads included), output 54, $1.75", u)
	}
	pt := u.perTask(2)
	if pt.Input != 180 || pt.Output != 27 || pt.USD != 0.875 {
		t.Fatalf("per task = %+v, want 180, 27, 0.875", pt)
	}
	if (usage{Input: 5}).perTask(0) != (usage{}) {
		t.Fatal("nothing delivered must give zeros")
	}
	// Control: a log whose b never succeeds has one span, and the makespan
	// shrinks to a's.
	if sp := spans(evs[:5]); len(sp) != 1 || makespan(sp) != 3*sec {
		t.Fatalf("control: spans without b's success = %v", sp)
	}
}

func TestSpeedupAndRatio(t *testing.T) {
	if got := speedup(120*sec, 30*sec); got != 4 {
		t.Fatalf("speedup = %v, want 4", got)
	}
	if got := ratio(105*sec, 100*sec); got != 1.05 {
		t.Fatalf("ratio = %v, want 1.05", got)
	}
	if speedup(sec, 0) != 0 || ratio(sec, 0) != 0 {
		t.Fatal("a zero denominator must give 0, not Inf")
	}
}

func TestTurnsFileAndDraw(t *testing.T) {
	f, err := loadTurns(turnsJSON)
	if err != nil {
		t.Fatal(err)
	}
	if f.sessions() < 6 {
		t.Errorf("samples come from %d sessions, want at least 6", f.sessions())
	}
	for _, s := range f.Samples {
		if s.Repo == "" || s.Path == "" || len(s.Commit) != 40 || s.ThinkMS <= 0 {
			t.Fatalf("sample without its source or a think time: %+v", s)
		}
		from, err1 := time.Parse(time.RFC3339Nano, s.From)
		to, err2 := time.Parse(time.RFC3339Nano, s.To)
		if err1 != nil || err2 != nil || to.Sub(from).Milliseconds() != s.ThinkMS {
			t.Fatalf("think_ms %d is not to-from (%s, %s)", s.ThinkMS, s.From, s.To)
		}
	}
	a, b := f.draw(50, 7, 1), f.draw(50, 7, 1)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different draw at %d: %v vs %v", i, a[i], b[i])
		}
	}
	// Control: another seed gives another sequence.
	c := f.draw(50, 8, 1)
	same := true
	for i := range a {
		same = same && a[i] == c[i]
	}
	if same {
		t.Fatal("control: seeds 7 and 8 drew the same 50 turns")
	}
	half := f.draw(50, 7, 0.5)
	if d := half[0].Delay - a[0].Delay/2; d > time.Millisecond || d < -time.Millisecond {
		t.Fatalf("think-scale 0.5 gave %v for %v", half[0].Delay, a[0].Delay)
	}
	st := describe([]float64{1, 2, 3, 4, 100})
	if st.Median != 3 || st.P90 != 100 || st.Mean != 22 {
		t.Fatalf("describe = %+v", st)
	}
	if describe([]float64{1, 2, 3, 4}).Median != 2.5 {
		t.Fatal("median of an even count is the mean of the middle two")
	}
}

// Both runs must do the same modelled work: the single session's script is
// the rush's turns, task after task, with the same delays and tokens, and
// both scenarios load in the scripted server.
func TestScenariosShareTheDrawnTurns(t *testing.T) {
	f, shapes := turnsAndShapes(t)
	for _, name := range []string{"3x4", "wide", "deep", "diamond"} {
		ts := shapes[name].Tasks
		if len(ts) == 0 {
			t.Fatalf("shape %s has no tasks", name)
		}
		sc := scripts(ts, 3, f, 1, 1)
		rs, err := rushScenario(feature, ts, sc)
		if err != nil {
			t.Fatal(err)
		}
		ss, err := singleScenario(feature, ts, sc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mockapi.ParseScenario(rs); err != nil {
			t.Fatalf("%s rush scenario: %v", name, err)
		}
		if _, err := mockapi.ParseScenario(ss); err != nil {
			t.Fatalf("%s single scenario: %v", name, err)
		}
		var r, s scenario
		json.Unmarshal(rs, &r)
		json.Unmarshal(ss, &s)
		var concat []scTurn
		for _, tk := range r.Tasks {
			concat = append(concat, tk.Turns...)
		}
		got := s.Tasks[0].Turns
		if len(got) != len(concat) {
			t.Fatalf("%s: single session has %d turns, the rush %d", name, len(got), len(concat))
		}
		for i := range got {
			if got[i].Delay != concat[i].Delay || got[i].Usage["output_tokens"] != concat[i].Usage["output_tokens"] {
				t.Fatalf("%s turn %d: single %v/%v, rush %v/%v", name, i, got[i].Delay, got[i].Usage, concat[i].Delay, concat[i].Usage)
			}
			last := i == len(got)-1
			if (len(got[i].Tools) == 0) != last {
				t.Fatalf("%s turn %d: only the very last turn may end the session", name, i)
			}
		}
		if !strings.HasPrefix(singlePrompt(feature, ts), s.Tasks[0].Match) {
			t.Fatalf("%s: the single prompt does not match its scenario", name)
		}
		// The order is a dependency order.
		seen := map[string]bool{}
		for _, tk := range ordered(ts) {
			for _, d := range tk.Deps {
				if !seen[d] {
					t.Fatalf("%s: %s comes before its dependency %s", name, tk.ID, d)
				}
			}
			seen[tk.ID] = true
		}
	}
	// Control: another seed changes the turns, so the check above compares
	// something that varies.
	ts := shapes["3x4"].Tasks
	if a, b := scripts(ts, 3, f, 1, 1), scripts(ts, 3, f, 2, 1); a["L1-a"][0].Delay == b["L1-a"][0].Delay && a["L2-b"][1].Delay == b["L2-b"][1].Delay && a["L3-d"][0].Delay == b["L3-d"][0].Delay {
		t.Fatal("control: seeds 1 and 2 drew the same delays")
	}
}

// A real project's tasks have scripts of their own lengths; every turn must
// get the next drawn turn, in the single session's order, and keep its
// tools.
func TestWithDrawsKeepsTurnsAndOrder(t *testing.T) {
	f, err := loadTurns(turnsJSON)
	if err != nil {
		t.Fatal(err)
	}
	ts := []task{{ID: "b", Level: 2, Deps: []string{"a"}}, {ID: "a", Level: 1}}
	base := map[string][]scTurn{
		"a": {{Tools: []scTool{{Name: "Write"}}}, {Text: "done a"}},
		"b": {{Tools: []scTool{{Name: "Read"}}}, {Tools: []scTool{{Name: "Edit"}}}, {Text: "done b"}},
	}
	got := withDraws(ts, base, f, 3, 1)
	want := f.draw(5, 3, 1)
	seq := append(append([]scTurn{}, got["a"]...), got["b"]...)
	for i, tu := range seq {
		if tu.Delay != want[i].Delay.String() || tu.Usage["output_tokens"] != want[i].Output {
			t.Fatalf("turn %d: %v/%v, want draw %v", i, tu.Delay, tu.Usage, want[i])
		}
	}
	if got["b"][1].Tools[0].Name != "Edit" || got["a"][1].Text != "done a" {
		t.Fatal("withDraws changed the turns' content")
	}
	if base["a"][0].Delay != "" {
		t.Fatal("withDraws wrote into the base turns")
	}
	// Control: were a drawn after b (id order instead of dependency order),
	// a's first turn would get draw 3.
	if got["a"][0].Delay == want[3].Delay.String() && want[0] != want[3] {
		t.Fatal("control: a got b's draw")
	}
}

func TestBestSchedule(t *testing.T) {
	// The diamond reaches its critical path on two workers.
	ts, d := diamondGraph()
	if got := bestSchedule(ts, d, 2); got != 7*sec {
		t.Errorf("diamond on 2 workers: best %v, want 7s", got)
	}
	if got := bestSchedule(ts, d, 1); got != 9*sec {
		t.Errorf("diamond on 1 worker: best %v, want 9s (the work)", got)
	}
	// Five equal tasks on four workers: the bound says 1.25 s, any schedule
	// takes two waves.
	var five []task
	eq := map[string]time.Duration{}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		five = append(five, task{ID: id, Level: 1})
		eq[id] = sec
	}
	if lb, got := lowerBound(five, eq, 4), bestSchedule(five, eq, 4); lb != 1250*time.Millisecond || got != 2*sec {
		t.Errorf("five equal tasks on 4 workers: bound %v, best %v; want 1.25s and 2s", lb, got)
	}
	// The choice matters: b, c, x (1 s each) and d (2 s) after x, on two
	// workers. Starting in id order (b and c: the first choice a search
	// tries) ends at 4 s; starting x first, at 3 s. A search that kept its
	// first choice would say 4.
	choice := []task{{ID: "b", Level: 1}, {ID: "c", Level: 1}, {ID: "x", Level: 1}, {ID: "d", Level: 2, Deps: []string{"x"}}}
	cd := map[string]time.Duration{"b": sec, "c": sec, "x": sec, "d": 2 * sec}
	if got := bestSchedule(choice, cd, 2); got != 3*sec {
		t.Errorf("best %v, want 3s (x first)", got)
	}
	// Control: d after all three leaves no choice that helps: two waves,
	// then d.
	choice[3].Deps = []string{"b", "c", "x"}
	if got := bestSchedule(choice, cd, 2); got != 4*sec {
		t.Errorf("control: d after b, c and x: best %v, want 4s", got)
	}
	// Too large to search: zero, not a guess.
	var many []task
	for i := range maxBestTasks + 1 {
		many = append(many, task{ID: string(rune('A' + i)), Level: 1})
	}
	if got := bestSchedule(many, map[string]time.Duration{}, 4); got != 0 {
		t.Errorf("over %d tasks: %v, want 0", maxBestTasks, got)
	}
	// Sixteen independent tasks of distinct durations: within the task
	// limit, far past the states the search may solve; it gives up (0)
	// instead of searching for minutes.
	var wide []task
	wd := map[string]time.Duration{}
	for i := range 16 {
		id := string(rune('A' + i))
		wide = append(wide, task{ID: id, Level: 1})
		wd[id] = time.Duration(1000+137*i) * time.Millisecond
	}
	if got := bestSchedule(wide, wd, 4); got != 0 {
		t.Errorf("sixteen distinct independent tasks: %v, want 0 (too many states to search)", got)
	}
}

// TestModelBoundOfTheTenTurnDraws pins what docs/benchmarks.md says of the
// ten-turn draws (seed 1): on 3x4 one chain of three tasks thinks 209 s,
// more than a quarter of the 778 s of think time, so no schedule on four
// workers passes 3.72x over the serial think time; 3x8's chains are
// shorter than its work over four workers (4.00x), and over eight (5.95x).
func TestModelBoundOfTheTenTurnDraws(t *testing.T) {
	f, shapes := turnsAndShapes(t)
	for _, c := range []struct {
		shape   shape
		workers int
		serial  float64
		bound   float64
	}{
		{shapes["3x4"], 4, 778.2, 209.0},
		{shapes["3x8"], 4, 1608.9, 402.2},
		{shapes["3x8"], 8, 1608.9, 270.4},
	} {
		think := thinkTimes(scripts(c.shape.Tasks, 10, f, 1, 1))
		var serial time.Duration
		for _, d := range think {
			serial += d
		}
		bound := lowerBound(c.shape.Tasks, think, c.workers)
		if math.Abs(serial.Seconds()-c.serial) > 0.05 || math.Abs(bound.Seconds()-c.bound) > 0.05 {
			t.Errorf("%s on %d workers: serial think %.1f s, model bound %.1f s; want %.1f and %.1f (the docs quote them)",
				c.shape.Name, c.workers, serial.Seconds(), bound.Seconds(), c.serial, c.bound)
		}
	}
}

// turnsAndShapes loads the bench's measured turns and its graphs.
func turnsAndShapes(t *testing.T) (*turnsFile, map[string]shape) {
	t.Helper()
	f, err := loadTurns(turnsJSON)
	if err != nil {
		t.Fatal(err)
	}
	shapes, err := loadShapes()
	if err != nil {
		t.Fatal(err)
	}
	return f, shapes
}

// -estimates drawn: the graph zerg reads carries each task's drawn think
// time as estimate_minutes, to the half minute, so that the dag schedule
// can rank the chains; without it the graph has none.
func TestDrawnEstimatesReachTheGraph(t *testing.T) {
	f, shapes := turnsAndShapes(t)
	ts := shapes["3x8"].Tasks
	sc := scripts(ts, 10, f, 1, 1)
	think := thinkTimes(sc)
	est := withEstimates(ts, sc)
	if ts[0].Estimate != nil {
		t.Fatal("withEstimates changed the shape's own tasks")
	}
	data, err := graphJSON(feature, est)
	if err != nil {
		t.Fatal(err)
	}
	g, issues := spec.Parse(data)
	if len(issues) > 0 {
		t.Fatalf("zerg refuses the graph: %v", issues)
	}
	distinct := map[float64]bool{}
	for _, gt := range g.Tasks {
		want := max(math.Round(think[gt.ID].Minutes()*2)/2, 0.5)
		if !gt.HasEstimate || gt.EstimateMinutes != want {
			t.Errorf("%s: estimate %v (set %v), want %v for %v of think time", gt.ID, gt.EstimateMinutes, gt.HasEstimate, want, think[gt.ID])
		}
		distinct[gt.EstimateMinutes] = true
	}
	// Control: the ten-turn draws differ enough that the estimates rank
	// tasks at all (all equal would leave the graph's own order).
	if len(distinct) < 2 {
		t.Errorf("every task got the same estimate %v: nothing to rank by", distinct)
	}
	plain, _ := graphJSON(feature, ts)
	if g, _ := spec.Parse(plain); g.Tasks[0].HasEstimate {
		t.Error("a graph without -estimates has estimates")
	}
}
