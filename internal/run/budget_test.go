package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"

	"github.com/zergrush/zerg/internal/config"
)

// An account refusal (credit exhausted) stops every launch at once: the
// attempt in flight is stopped, nothing of level 2 starts, no task counts
// a failure, the report names the cause, and a resume continues.
func TestAccountErrorStopsLaunching(t *testing.T) {
	w := newWorld(t, twoLevels)
	hold := make(chan struct{})
	defer close(hold)
	w.att.script["A"] = []scripted{{class: outcome.Account, reason: outcome.ReasonCredit, detail: "the API answered 400: Your credit balance is too low"}}
	w.att.script["B"] = []scripted{{class: outcome.Success, reason: "completed", hold: hold}}
	w.att.together = 2
	st, err := w.rush(context.Background())
	var re *Error
	if !errors.As(err, &re) || re.Kind != Account || re.Task != "A" {
		t.Fatalf("err %v, want Account naming A", err)
	}
	if n := len(w.att.calls); n != 2 {
		t.Errorf("%d attempts, want 2 (A and B, none after the refusal)", n)
	}
	for _, id := range []string{"A", "B", "C"} {
		ts := st.Task(id)
		if ts.TaskFailures != 0 || ts.Status == runstate.StatusFailed || ts.Status == runstate.StatusBlocked {
			t.Errorf("%s counted as a failure: %+v", id, ts)
		}
	}
	if st.Finished == nil || st.Finished.Delivered || st.Finished.Cause != "account" {
		t.Fatalf("run_finished %+v, want not delivered, cause account", st.Finished)
	}
	st, err = w.resume(context.Background())
	assertDelivered(t, w, st, err)
}

// budget.run_usd: level 1 fits, level 2's attempt would pass the budget, so
// it never starts; the committed level stays merged; a resume with a higher
// budget delivers without redoing it.
func TestRunBudgetStopsLaunchesAndResumes(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.cfg.Workers = 1
	w.cfg.Budget.RunUSD = 0.025 // each fake attempt costs $0.01
	c := w.coordinator(runstate.NewState())
	c.projection = &runstate.Projection{Tasks: []runstate.TaskProjection{{Task: "A", AttemptUSD: 0.01}, {Task: "B", AttemptUSD: 0.01}, {Task: "C", AttemptUSD: 0.01}}}
	st, err := c.execute(context.Background())
	var re *Error
	if !errors.As(err, &re) || re.Kind != Budget || re.Task != "C" {
		t.Fatalf("err %v, want Budget naming C", err)
	}
	if n := len(w.att.attemptsOf("C")); n != 0 {
		t.Errorf("C ran %d attempts past the budget", n)
	}
	if st.Task("A").Status != runstate.StatusMerged || st.Task("B").Status != runstate.StatusMerged {
		t.Errorf("level 1 not merged: %s %s", st.Task("A").Status, st.Task("B").Status)
	}
	if st.Finished == nil || st.Finished.Cause != "budget" || st.Task("C").Status != runstate.StatusCancelled {
		t.Fatalf("run_finished %+v, C %s", st.Finished, st.Task("C").Status)
	}
	if st.Projection == nil || len(st.Projection.Tasks) != 3 {
		t.Errorf("projection not recorded: %+v", st.Projection)
	}
	w.cfg.Budget.RunUSD = 1
	st, err = w.resume(context.Background())
	assertDelivered(t, w, st, err)
	if n := len(w.att.attemptsOf("A")); n != 1 {
		t.Errorf("A ran %d times; the resume redid merged work", n)
	}
}

// on_exceed: cancel stops the attempts in flight when the budget refuses a
// launch; finish lets them commit.
func TestRunBudgetOnExceed(t *testing.T) {
	for _, mode := range []string{config.OnExceedFinish, config.OnExceedCancel} {
		t.Run(mode, func(t *testing.T) {
			w := newWorld(t, twoLevels)
			w.cfg.Budget.RunUSD = 0.015
			w.cfg.Budget.OnExceed = mode
			hold := make(chan struct{})
			// Whichever of A and B reserves first runs (held); the other is refused.
			w.att.script["A"] = []scripted{{class: outcome.Success, reason: "completed", hold: hold}}
			w.att.script["B"] = []scripted{{class: outcome.Success, reason: "completed", hold: hold}}
			c := w.coordinator(runstate.NewState())
			c.projection = &runstate.Projection{Tasks: []runstate.TaskProjection{{Task: "A", AttemptUSD: 0.01}, {Task: "B", AttemptUSD: 0.01}, {Task: "C", AttemptUSD: 0.01}}}
			done := make(chan struct{})
			var st *runstate.State
			var err error
			go func() { st, err = c.execute(context.Background()); close(done) }()
			if mode == config.OnExceedFinish {
				for c.halted() == nil {
					runtime.Gosched()
				}
				close(hold)
			}
			<-done
			if mode == config.OnExceedCancel {
				close(hold)
			}
			if !errors.Is(err, Budget) {
				t.Fatalf("err %v, want Budget", err)
			}
			want := map[string]runstate.Status{config.OnExceedFinish: runstate.StatusCommitted, config.OnExceedCancel: runstate.StatusCancelled}[mode]
			if len(w.att.calls) != 1 {
				t.Fatalf("%d attempts, want 1: the second would pass the budget", len(w.att.calls))
			}
			ran := w.att.calls[0].Task.ID
			if s := st.Task(ran).Status; s != want {
				t.Errorf("%s is %s, want %s", ran, s, want)
			}
		})
	}
}

func TestRunProjectedNeedsAStartedRun(t *testing.T) {
	s := runstate.NewState()
	e, _ := newEvent(runstate.EvRunProjected, "", 0, runstate.Projection{Basis: "estimate"})
	if err := s.Apply(e); err == nil {
		t.Fatal("run_projected accepted before run_started")
	}
	start, _ := newEvent(runstate.EvRunStarted, "", 0, runstate.RunStarted{Feature: "f"})
	if err := s.Apply(start); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(e); err != nil || s.Projection == nil || s.Projection.Basis != "estimate" {
		t.Fatalf("run_projected refused: %v %+v", err, s.Projection)
	}
}

func TestModelTiers(t *testing.T) {
	g := mustGraph(t, `{"feature": "f", "tasks": [
 {"id": "code", "title": "c", "level": 1, "files": {"create": ["a.go"], "modify": ["README.md"]}},
 {"id": "docs", "title": "d", "level": 2, "files": {"create": ["docs/x.go.tmpl", "NOTES.txt"], "modify": ["README.md"]}},
 {"id": "read", "title": "r", "level": 1, "files": {"read": ["a.go"]}},
 {"id": "own", "title": "o", "level": 1, "model": "opus", "files": {"create": ["b.md"]}}
]}`)
	m := config.Models{Implement: "sonnet", Simple: "haiku"}
	for id, want := range map[string]string{"code": "sonnet/implement", "docs": "haiku/simple", "read": "haiku/simple", "own": "opus/graph"} {
		model, tier := runstate.ModelFor(m, g.Task(id))
		if got := model + "/" + tier; got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
	if model, tier := runstate.ModelFor(config.Models{Implement: "sonnet"}, g.Task("docs")); model != "sonnet" || tier != "implement" {
		t.Errorf("empty models.simple: %s/%s", model, tier)
	}
}

// The projection brackets: low ≤ expected ≤ high for every task, level and
// the run; a dearer model costs more; history scales the figures.
func TestProjection(t *testing.T) {
	g := mustGraph(t, `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "level": 1, "estimate_minutes": 2, "files": {"create": ["a.go"]}},
 {"id": "B", "title": "b", "level": 1, "estimate_minutes": 10, "model": "opus", "files": {"create": ["b.go"]}},
 {"id": "D", "title": "d", "level": 2, "dependencies": ["A"], "files": {"create": ["d.md"]}}
]}`)
	cfg := config.Default()
	p := runstate.Project(runstate.ProjectOptions{Graph: g, Config: cfg, Workers: 4})
	if p.Basis != "estimate" || len(p.Tasks) != 3 || len(p.Levels) != 2 || p.FanOut != 2 {
		t.Fatalf("projection %+v", p)
	}
	// Under dag, D (after A) may run beside B, of the level before, and
	// the fan-out is counted so (the chain A → D and B); with one level of
	// three tasks and workers 2, the workers bound it.
	dag := cfg
	dag.Schedule = config.ScheduleDAG
	wide := mustGraph(t, `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "level": 1, "files": {"create": ["a.go"]}},
 {"id": "B", "title": "b", "level": 1, "files": {"create": ["b.go"]}},
 {"id": "C", "title": "c", "level": 2, "dependencies": ["A"], "files": {"create": ["c.go"]}},
 {"id": "D", "title": "d", "level": 2, "dependencies": ["A"], "files": {"create": ["d.go"]}}
]}`)
	if got := runstate.Project(runstate.ProjectOptions{Graph: wide, Config: cfg, Workers: 4}).FanOut; got != 2 {
		t.Errorf("level fan-out %d, want 2 (the widest level)", got)
	}
	if got := runstate.Project(runstate.ProjectOptions{Graph: wide, Config: dag, Workers: 4}).FanOut; got != 3 {
		t.Errorf("dag fan-out %d, want 3 (B, C and D at once)", got)
	}
	if got := runstate.Project(runstate.ProjectOptions{Graph: wide, Config: dag, Workers: 2}).FanOut; got != 2 {
		t.Errorf("dag fan-out %d with 2 workers, want 2", got)
	}
	sum := 0.0
	for _, tp := range append([]runstate.TaskProjection{}, p.Tasks...) {
		if !(tp.Low > 0 && tp.Low <= tp.Expected && tp.Expected <= tp.High) || tp.AttemptUSD != tp.Expected {
			t.Errorf("%s: range %+v", tp.Task, tp.Range)
		}
		sum += tp.Expected
	}
	if p.Expected != sum || !(p.Low <= p.Expected && p.Expected <= p.High) {
		t.Errorf("run range %+v, tasks sum to %v", p.Range, sum)
	}
	if p.Task("B").Expected <= p.Task("A").Expected || p.Task("D").Model != "haiku" {
		t.Errorf("tiers: A %+v B %+v D %+v", p.Task("A"), p.Task("B"), p.Task("D"))
	}
	// The first request's tokens: TestProjectionFirstRequest (runstate).
	// History: an earlier run of the same mode whose tasks cost twice the
	// token model's figure doubles the expected one.
	dir := t.TempDir()
	run := filepath.Join(dir, "old")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "graph.json"), g.Raw, 0o644); err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, string(g.Raw))
	w.cfg = cfg
	w.cfg.Workers = 2
	w.att.cost = func(r AttemptRequest) float64 { return 2 * p.Task(r.Task.ID).Expected }
	if _, err := w.rush(context.Background()); err != nil {
		t.Fatal(err)
	}
	writeLog(t, filepath.Join(run, "events.jsonl"), w.log)
	h := runstate.Project(runstate.ProjectOptions{Graph: g, Config: cfg, Workers: 4, History: runstate.HistoryLogs(dir, "new"), LoadRecorded: LoadRecordedGraph})
	if h.Basis != "history" || h.HistoryTasks != 3 || h.Factor < 1.99 || h.Factor > 2.01 {
		t.Fatalf("history projection: basis %s, %d tasks, factor %v", h.Basis, h.HistoryTasks, h.Factor)
	}
	if r := h.Expected / p.Expected; r < 1.99 || r > 2.01 {
		t.Errorf("expected ×%v, want ×2", r)
	}
	// A rehearsal learns nothing from a real run.
	if r := runstate.Project(runstate.ProjectOptions{Graph: g, Config: cfg, Workers: 4, History: runstate.HistoryLogs(dir, "new"), LoadRecorded: LoadRecordedGraph, Rehearsal: true}); r.Basis != "estimate" {
		t.Errorf("a rehearsal used a real run's history")
	}
	// Nor does a config whose models differ from the ones the history ran
	// on: its prices say nothing of today's.
	other := cfg
	other.Models.Implement, other.Models.Simple = "opus", "opus"
	if r := runstate.Project(runstate.ProjectOptions{Graph: g, Config: other, Workers: 4, History: runstate.HistoryLogs(dir, "new"), LoadRecorded: LoadRecordedGraph}); r.Basis != "estimate" || r.HistoryTasks != 0 {
		t.Errorf("a history on other models was used: basis %s, %d tasks", r.Basis, r.HistoryTasks)
	}
}

// writeLog writes a fake run's events as a real log file.
func writeLog(t *testing.T, path string, l *memLog) {
	t.Helper()
	log, _, err := eventlog.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for _, e := range l.all() {
		if _, err := log.AppendData(e.Type, e.Task, e.Attempt, e.Data); err != nil {
			t.Fatal(err)
		}
	}
}

// A graph whose tasks still to run own a protected path is refused; a task
// the run already merged or committed is not, so a run started before the
// check (subprocess mode did not make it) still resumes.
func TestProtectedOwnershipSparesDoneTasks(t *testing.T) {
	file := filepath.Join(t.TempDir(), "g.json")
	if err := os.WriteFile(file, []byte(`{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "level": 1, "files": {"create": [".github/workflows/ci.yml"]}},
 {"id": "B", "title": "b", "level": 1, "files": {"create": [".zerg/hooks/x"]}},
 {"id": "C", "title": "c", "level": 1, "files": {"create": ["c.go"]}}
]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	st := runstate.NewState()
	check := func() error {
		_, err := validGraph(file, GraphLoadFor("", config.Default(), st))
		return err
	}
	err := check()
	if err == nil || !strings.Contains(err.Error(), "task A:") || !strings.Contains(err.Error(), "task B:") {
		t.Fatalf("a new run: %v, want A and B named", err)
	}
	st.Tasks["A"] = &runstate.TaskState{ID: "A", Status: runstate.StatusMerged}
	st.Tasks["B"] = &runstate.TaskState{ID: "B", Status: runstate.StatusCommitted, Commit: "abc"}
	if err := check(); err != nil {
		t.Errorf("done tasks were refused: %v", err)
	}
	st.Tasks["B"] = &runstate.TaskState{ID: "B", Status: runstate.StatusFailed}
	if err := check(); err == nil || strings.Contains(err.Error(), "task A:") {
		t.Errorf("B still to run: %v, want only B named", err)
	}
	// A graph a run recorded is read as it was checked then.
	if _, err := loadGraph(file, ""); err != nil {
		t.Errorf("a recorded graph: %v", err)
	}
}

// A gateway that refused a request because budget.run_usd is spent stops
// the launching like the coordinator's own check; the task is not failed,
// and a resume with more budget runs it.
func TestGatewayRunBudgetStopsLaunching(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.cfg.Workers = 1
	w.cfg.Budget.RunUSD = 5
	w.att.script["A"] = []scripted{{class: outcome.Infra, reason: outcome.ReasonRunBudget, detail: "the gateway refused further requests: budget.run_usd is spent"}}
	st, err := w.rush(context.Background())
	var re *Error
	if !errors.As(err, &re) || re.Kind != Budget || re.Task != "A" {
		t.Fatalf("err %v, want Budget naming A", err)
	}
	if n := len(w.att.calls); n != 1 {
		t.Errorf("%d attempts after the gateway's budget stop, want 1", n)
	}
	if s := st.Task("A").Status; s == runstate.StatusFailed {
		t.Errorf("A failed for good: the run's budget is not the task's fault")
	}
	st, err = w.resume(context.Background())
	assertDelivered(t, w, st, err)
}

// No attempt starts while the disk of the run's records is below
// disk.min_free_mb; the control, the default floor, launches.
func TestLowDiskStopsLaunching(t *testing.T) {
	w := newWorld(t, twoLevels)
	w.cfg.Workers = 1
	w.cfg.Disk.MinFreeMB = 1 << 40 // more than any disk has
	c := w.coordinator(runstate.NewState())
	c.paths.RunDir = t.TempDir()
	_, err := c.execute(context.Background())
	var re *Error
	if !errors.As(err, &re) || re.Kind != DiskFull || !strings.Contains(err.Error(), "disk.min_free_mb") {
		t.Fatalf("err %v, want DiskFull naming disk.min_free_mb", err)
	}
	if n := len(w.att.calls); n != 0 {
		t.Errorf("%d attempts started below the floor", n)
	}
	w.cfg.Disk.MinFreeMB = 1
	st, err := w.resume(context.Background())
	assertDelivered(t, w, st, err)
}

// TestCostProjectsEachModel: the per-model lines carry the projection of
// the tasks each model was to run, as the tasks' and levels' do, so the
// model chart has projected bars.
func TestCostProjectsEachModel(t *testing.T) {
	proj := runstate.Projection{Tasks: []runstate.TaskProjection{
		{Task: "A", Level: 1, Model: "sonnet", Range: runstate.Range{Low: 1, Expected: 2, High: 4}},
		{Task: "B", Level: 1, Model: "haiku", Range: runstate.Range{Low: 0.1, Expected: 0.2, High: 0.4}},
		{Task: "C", Level: 2, Model: "sonnet", Range: runstate.Range{Low: 1, Expected: 3, High: 6}}}}
	var evs []eventlogEvent
	add := func(typ, task string, n int, data any) {
		e, err := newEvent(typ, task, n, data)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	add(runstate.EvRunStarted, "", 0, runstate.RunStarted{Feature: "f"})
	add(runstate.EvRunProjected, "", 0, proj)
	add(runstate.EvLevelStarted, "", 0, runstate.LevelStarted{Level: 1, Tasks: []string{"A", "B"}})
	add(runstate.EvAttemptStarted, "A", 1, runstate.AttemptStarted{Level: 1})
	add(runstate.EvAttemptFinished, "A", 1, runstate.AttemptFinished{Class: "success", CostUSD: 1.5, Model: "sonnet"})
	r := runstate.Cost("f", evs)
	got := map[string]float64{}
	for _, m := range r.Models {
		if m.Projected == nil {
			t.Fatalf("model %s has no projection", m.Name)
		}
		got[m.Name] = m.Projected.Expected
	}
	if got["sonnet"] != 5 || got["haiku"] != 0.2 || len(got) != 2 {
		t.Errorf("projected per model %v", got)
	}
}
