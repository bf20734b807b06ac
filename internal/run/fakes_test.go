package run

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

// Fakes for the coordinator's ports: no git, no claude, no sleeping. A
// whole run with retries, crashes and resumes replays in microseconds.

// memLog is an in-memory event log.
type memLog struct {
	mu     sync.Mutex
	events []eventlog.Event
	clock  *jumpClock
	failOn string // an event type whose write fails
}

func (l *memLog) AppendData(typ, task string, n int, data any) (eventlog.Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if typ == l.failOn {
		return eventlog.Event{}, fmt.Errorf("disk full")
	}
	e, err := eventlog.NewEvent(typ, task, n, data)
	if err != nil {
		return e, err
	}
	e.Seq = int64(len(l.events) + 1)
	e.Time = l.clock.Now()
	l.events = append(l.events, e)
	return e, nil
}

func (l *memLog) all() []eventlog.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

func (l *memLog) types() []string {
	var out []string
	for _, e := range l.all() {
		out = append(out, e.Type)
	}
	return out
}

// jumpClock never sleeps: After fires at once and moves time on.
type jumpClock struct {
	mu    sync.Mutex
	t     time.Time
	waits []time.Duration
}

func newClock() *jumpClock { return &jumpClock{t: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)} }

func (c *jumpClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *jumpClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.waits = append(c.waits, d)
	ch := make(chan time.Time, 1)
	ch <- c.t
	return ch
}

// scripted is one scripted attempt result.
type scripted struct {
	class  outcome.Class
	reason string
	detail string
	err    error         // zerg's own failure
	hold   chan struct{} // block until closed (or the context ends)
	diag   *diagnose.Hypothesis
	reset  string // an account refusal's reset time
	verify string // the verification's output
}

var pass = scripted{class: outcome.Success, reason: "completed"}

func taskFail(detail string) scripted {
	return scripted{class: outcome.Task, reason: "verification_failed", detail: detail}
}

var infra = scripted{class: outcome.Infra, reason: outcome.ReasonOverloaded, detail: "529"}

// fakeAttempter answers from a script: task → outcomes by attempt number;
// attempts past the script succeed.
type fakeAttempter struct {
	mu       sync.Mutex
	script   map[string][]scripted
	calls    []AttemptRequest
	running  int
	peak     int
	verifies bool // call OnVerify before a success
	// together makes each attempt wait (up to a second) until this many
	// run at once, to show that they can.
	together int
	// cost prices an attempt (default $0.01).
	cost func(AttemptRequest) float64
	// recovered are lost attempts' results Recover gives, by task.
	recovered map[string]attempt.Result
	// onStart is called as each attempt starts.
	onStart func(AttemptRequest)
}

// Recover answers from recovered: a lost attempt whose result is there
// was finished; the others were not.
func (f *fakeAttempter) Recover(ctx context.Context, r AttemptRequest) (attempt.Result, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	res, ok := f.recovered[r.Task.ID]
	return res, ok, nil
}

func (f *fakeAttempter) Attempt(ctx context.Context, r AttemptRequest) (attempt.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, r)
	pid := 1000 + len(f.calls)
	o := pass
	if s := f.script[r.Task.ID]; r.Number <= len(s) {
		o = s[r.Number-1]
	}
	f.running++
	f.peak = max(f.peak, f.running)
	onStart := f.onStart
	f.mu.Unlock()
	if onStart != nil {
		onStart(r)
	}
	defer func() { f.mu.Lock(); f.running--; f.mu.Unlock() }()
	for deadline := time.Now().Add(time.Second); f.together > 0 && time.Now().Before(deadline); {
		f.mu.Lock()
		enough := f.peak >= f.together
		f.mu.Unlock()
		if enough {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if r.OnStart != nil {
		r.OnStart([]claude.Proc{{PID: pid}}, "marker-"+r.Task.ID)
	}
	if o.hold != nil {
		select {
		case <-o.hold:
		case <-ctx.Done():
			return attempt.Result{Class: outcome.Infra, Reason: outcome.ReasonCancelled, Detail: "the run was stopped"}, nil
		}
	}
	if o.err != nil {
		return attempt.Result{}, o.err
	}
	if ctx.Err() != nil {
		return attempt.Result{Class: outcome.Infra, Reason: outcome.ReasonCancelled, Detail: "the run was stopped"}, nil
	}
	if o.class == outcome.Success && f.verifies && r.OnVerify != nil {
		r.OnVerify()
	}
	res := attempt.Result{Class: o.class, Reason: o.reason, Detail: o.detail,
		Commit: fmt.Sprintf("c-%s-%d", r.Task.ID, r.Number), Diagnosis: o.diag, Reset: o.reset, VerifyOutput: o.verify}
	res.Worker.CostUSD = 0.01
	if f.cost != nil {
		res.Worker.CostUSD = f.cost(r)
	}
	return res, nil
}

func (f *fakeAttempter) attemptsOf(task string) []AttemptRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []AttemptRequest
	for _, c := range f.calls {
		if c.Task.ID == task {
			out = append(out, c)
		}
	}
	return out
}

// fakeGit is refs, ancestry and merges in memory. Commits are strings; each
// knows its parents.
type fakeGit struct {
	mu       sync.Mutex
	branches map[string]string
	parents  map[string][]string
	user     string
	conflict string         // a task whose branch conflicts
	gateExit map[string]int // gate name → exit code
	gateOut  string         // what every gate prints ("" for "gate output")
	merges   [][]string     // the task lists merged, in order
	// breaks: commits whose presence on a merged head fails every gate;
	// holds: the commits each merged head holds.
	breaks map[string]bool
	holds  map[string][]string
}

func newGit() *fakeGit {
	return &fakeGit{branches: map[string]string{}, parents: map[string][]string{}, user: "base", gateExit: map[string]int{}}
}

func (g *fakeGit) UserHead(context.Context) (string, string, error) { return g.user, "main", nil }

func (g *fakeGit) Branch(_ context.Context, name string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.branches[name], nil
}

func (g *fakeGit) IsAncestor(_ context.Context, a, b string) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	seen := map[string]bool{}
	var walk func(c string) bool
	walk = func(c string) bool {
		if c == a {
			return true
		}
		if seen[c] {
			return false
		}
		seen[c] = true
		for _, p := range g.parents[c] {
			if walk(p) {
				return true
			}
		}
		return false
	}
	return walk(b), nil
}

func (g *fakeGit) SetBranch(_ context.Context, name, commit, old string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.branches[name] != old { // "" is the branch not existing
		return fmt.Errorf("compare-and-swap: %s is at %q, not %q", name, g.branches[name], old)
	}
	g.branches[name] = commit
	return nil
}

// commit adds a commit on top of parent.
func (g *fakeGit) commit(id, parent string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.parents[id] = []string{parent}
	return id
}

func (g *fakeGit) Merge(_ context.Context, base string, merges []TaskMerge) (MergedLevel, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var ids []string
	commits := slices.Clone(g.holds[base])
	for _, m := range merges {
		if m.Task == g.conflict {
			return nil, &ConflictError{Task: m.Task, Err: fmt.Errorf("CONFLICT in shared.txt")}
		}
		ids = append(ids, m.Task)
		commits = append(commits, m.Commit)
	}
	head := "m(" + base + "+" + strings.Join(ids, ",") + ")"
	g.parents[head] = []string{base}
	if g.holds == nil {
		g.holds = map[string][]string{}
	}
	g.holds[head] = commits
	g.merges = append(g.merges, ids)
	return &fakeMerged{g: g, head: head}, nil
}

type fakeMerged struct {
	g    *fakeGit
	head string
}

func (m *fakeMerged) Head() string { return m.head }
func (m *fakeMerged) RunGate(_ context.Context, gt config.Gate) (int, string) {
	m.g.mu.Lock()
	defer m.g.mu.Unlock()
	for _, c := range m.g.holds[m.head] {
		if m.g.breaks[c] {
			return 1, "FAIL: " + c + " broke the build"
		}
	}
	if m.g.gateOut != "" {
		return m.g.gateExit[gt.Name], m.g.gateOut
	}
	return m.g.gateExit[gt.Name], "gate output"
}
func (m *fakeMerged) Discard() {}

// fakeSalvager records what a resume salvaged.
type fakeSalvager struct {
	mu        sync.Mutex
	reaped    []string
	preserved []string
}

func (s *fakeSalvager) ReapRun(context.Context) int { return 0 }

func (s *fakeSalvager) Reap(o runstate.OpenAttempt) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reaped = append(s.reaped, o.Marker)
	return len(o.PIDs)
}

func (s *fakeSalvager) Preserve(_ context.Context, task string, o runstate.OpenAttempt) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.preserved = append(s.preserved, task)
	return fmt.Sprintf("saved-%s-%d", task, o.Number), nil
}

// world is one repository's fakes, shared by a run and its resumes.
type world struct {
	t     *testing.T
	log   *memLog
	clock *jumpClock
	att   *fakeAttempter
	git   *fakeGit
	salv  *fakeSalvager
	cfg   config.Config
	graph *spec.Graph
	snap  []byte
	// runDir is the run's directory (gate logs).
	runDir string
}

func newWorld(t *testing.T, graphJSON string) *world {
	t.Helper()
	clk := newClock()
	cfg := config.Default()
	cfg.Workers = 2
	cfg.Retry.TaskRetries = 1
	cfg.Retry.InfraMaxAttempts = 3
	cfg.Retry.InfraBackoffInitial = time.Second
	cfg.Retry.InfraBackoffMax = 8 * time.Second
	cfg.Gates = []config.Gate{{Name: "tests", Command: "true", Required: true}}
	w := &world{t: t, log: &memLog{clock: clk}, clock: clk, att: &fakeAttempter{script: map[string][]scripted{}},
		git: newGit(), salv: &fakeSalvager{}, cfg: cfg, runDir: t.TempDir()}
	w.graph = mustGraph(t, graphJSON)
	return w
}

func mustGraph(t *testing.T, js string) *spec.Graph {
	t.Helper()
	r := spec.Check([]byte(js), spec.Options{})
	if !r.Valid() {
		t.Fatalf("test graph invalid: %v", r.Err())
	}
	return r.Graph
}

func (w *world) deps() Deps {
	return Deps{Log: w.log, Attempter: w.att, Integrator: w.git, Refs: w.git, Salvager: w.salv, Clock: w.clock,
		Rand:     func() float64 { return 0.5 }, // no jitter: Jitter(d, 0.5) == d
		Snapshot: func(raw []byte) error { w.snap = slices.Clone(raw); return nil }}
}

func (w *world) coordinator(st *runstate.State) *Coordinator {
	c := &Coordinator{feature: "f", cfg: w.cfg, workers: w.cfg.Workers, graph: w.graph, state: st,
		paths: Paths{Workspaces: "/ws", State: "/state", RunDir: w.runDir}, progress: newProgress(nil), d: w.deps()}
	return c
}

// rush runs a new run to its end.
func (w *world) rush(ctx context.Context) (*runstate.State, error) {
	w.t.Helper()
	return w.coordinator(runstate.NewState()).execute(ctx)
}

// resume replays the log, plans the resume against the current graph and
// runs it, as `zerg rush --resume` does.
func (w *world) resume(ctx context.Context) (*runstate.State, error) {
	w.t.Helper()
	st := w.replay()
	var recorded *spec.Graph
	if w.snap != nil {
		recorded = mustGraph(w.t, string(w.snap))
	}
	plan, err := planResume(ctx, "f", st, recorded, w.graph, w.git)
	if err != nil {
		return st, err
	}
	c := w.coordinator(st)
	c.resume = plan
	return c.execute(ctx)
}

func (w *world) replay() *runstate.State {
	w.t.Helper()
	st := runstate.Replay(w.log.all())
	if len(st.Rejected) > 0 {
		w.t.Fatalf("the log has events the state machine refuses: %v", st.Rejected)
	}
	return st
}

// data decodes an event's payload.
func data[T any](t *testing.T, e eventlog.Event) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(e.Data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

const twoLevels = `{"feature": "f", "tasks": [
 {"id": "A", "title": "a", "level": 1, "files": {"create": ["a.txt"]}},
 {"id": "B", "title": "b", "level": 1, "files": {"create": ["b.txt"]}},
 {"id": "C", "title": "c", "level": 2, "dependencies": ["A"], "files": {"create": ["c.txt"]}}
]}`

type eventlogEvent = eventlog.Event

var newEvent = eventlog.NewEvent
