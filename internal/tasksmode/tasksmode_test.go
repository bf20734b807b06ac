package tasksmode

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
)

// fakeCoordinator is the run as a sequence of views: Inspect returns the
// next one each call (the last one for ever); Start records its calls and
// can run a hook (posting leases, as a coordinator would).
type fakeCoordinator struct {
	mu       sync.Mutex
	views    []runstate.View
	starting bool
	started  []bool // the resume flag of each Start
	onStart  func()
	exited   chan error
}

func (c *fakeCoordinator) Inspect() (runstate.View, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.views[0]
	if len(c.views) > 1 {
		c.views = c.views[1:]
	}
	return v, nil
}
func (c *fakeCoordinator) Starting() bool { return c.starting }
func (c *fakeCoordinator) Start(resume bool) (<-chan error, error) {
	c.started = append(c.started, resume)
	if c.onStart != nil {
		c.onStart()
	}
	if c.exited == nil {
		c.exited = make(chan error, 1)
	}
	return c.exited, nil
}

func view(state runstate.RunState, alive bool, workers int, statuses ...runstate.Status) runstate.View {
	v := runstate.View{State: state, Workers: workers, Coordinator: runstate.CoordinatorView{Alive: alive, PID: 7}}
	for i, s := range statuses {
		v.Tasks = append(v.Tasks, runstate.TaskView{ID: fmt.Sprintf("T%d", i+1), Status: s})
	}
	return v
}

// post puts an open lease of attempt 1 of task on board for the
// coordinator of pid 7, with its token, and returns the token.
func post(t *testing.T, board, task string) string {
	t.Helper()
	token := task + "-1-0123456789abcdef"
	sum := sha256.Sum256([]byte(token))
	l := driver.Lease{Task: task, Attempt: 1, TokenSHA256: hex.EncodeToString(sum[:]), Workspace: "/repo/.zerg/tasks/f/" + task + "-1",
		Issued: time.Now(), Coordinator: 7}
	b, _ := json.Marshal(l)
	if err := os.WriteFile(filepath.Join(board, task+driver.LeaseSuffix), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(board, task+driver.TokenSuffix), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return token
}

// TestNextStartsTheCoordinatorAndHandsOut: with no coordinator, zerg tasks
// next starts one (a fresh run: no resume), and hands out the leases it
// posts, once; the next call finds them working.
func TestNextStartsTheCoordinatorAndHandsOut(t *testing.T) {
	board := t.TempDir()
	c := &fakeCoordinator{views: []runstate.View{view(runstate.RunNotStarted, false, 2), view(runstate.RunRunning, true, 2, runstate.StatusRunning)}}
	c.onStart = func() { post(t, board, "T1") }
	res, err := Next(context.Background(), c, board, time.Second, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.started) != 1 || c.started[0] {
		t.Fatalf("starts %v, want one without resume", c.started)
	}
	if res.Outcome != Handed || len(res.Tasks) != 1 || res.Tasks[0].ID != "T1-1-0123456789abcdef" || !strings.Contains(res.Tasks[0].Prompt, "T1-1-0123456789abcdef") {
		t.Fatalf("result %+v", res)
	}
	res, err = Next(context.Background(), c, board, 0, time.Millisecond)
	if err != nil || res.Outcome != Handed || len(res.Tasks) != 0 || len(res.Working) != 1 || len(c.started) != 1 {
		t.Fatalf("second call: %+v %v (starts %v)", res, err, c.started)
	}
}

// TestNextWaitsForTheLevel: while a started attempt has not posted its
// lease, the level is not handed out, until the wait runs out.
func TestNextWaitsForTheLevel(t *testing.T) {
	board := t.TempDir()
	post(t, board, "T1")
	c := &fakeCoordinator{views: []runstate.View{view(runstate.RunRunning, true, 2, runstate.StatusRunning, runstate.StatusRunning)}}
	begin := time.Now()
	res, err := Next(context.Background(), c, board, 150*time.Millisecond, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(begin) < 150*time.Millisecond || res.Outcome != Handed || len(res.Tasks) != 1 {
		t.Fatalf("after %s: %+v", time.Since(begin), res)
	}
}

// TestNextAtTheEnd: a run that ended says so without starting anything; a
// not-delivered run with a task requeued is resumed; a coordinator that
// ends at once is reported with its exit.
func TestNextAtTheEnd(t *testing.T) {
	board := t.TempDir()
	c := &fakeCoordinator{views: []runstate.View{view(runstate.RunDelivered, false, 2, runstate.StatusMerged)}}
	if res, err := Next(context.Background(), c, board, time.Second, time.Millisecond); err != nil || res.Outcome != Delivered || len(c.started) != 0 {
		t.Errorf("delivered: %+v %v %v", res, err, c.started)
	}
	c = &fakeCoordinator{views: []runstate.View{view(runstate.RunNotDelivered, false, 2, runstate.StatusMerged, runstate.StatusFailed)}}
	if res, err := Next(context.Background(), c, board, time.Second, time.Millisecond); err != nil || res.Outcome != NotDelivered || len(res.Failed) != 1 || res.Failed[0] != "T2" || len(c.started) != 0 {
		t.Errorf("not delivered: %+v %v %v", res, err, c.started)
	}
	c = &fakeCoordinator{views: []runstate.View{view(runstate.RunNotDelivered, false, 2, runstate.StatusMerged, runstate.StatusPending)}, exited: make(chan error, 1)}
	c.exited <- errors.New("exit status 2")
	res, err := Next(context.Background(), c, board, time.Second, time.Millisecond)
	if err != nil || res.Outcome != Ended || res.Exit == nil || len(c.started) != 1 || !c.started[0] {
		t.Errorf("requeued, then the coordinator ended: %+v %v %v", res, err, c.started)
	}
}

// TestReport: a token that is not the open lease's is refused naming the
// open attempt; the right one is reported, and the attempt's end in the
// log says what became of it.
func TestReport(t *testing.T) {
	board := t.TempDir()
	events := filepath.Join(t.TempDir(), "events.jsonl")
	token := post(t, board, "T1")
	log, _, err := eventlog.Open(events)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	failed := func() (runstate.View, error) { return view(runstate.RunRunning, true, 1, runstate.StatusFailed), nil }
	var notOpen *NotOpenError
	if _, err := Report(context.Background(), board, events, 7, "T1", "T1-1-guess", 0, time.Millisecond, failed); !errors.As(err, &notOpen) || notOpen.Open != 1 {
		t.Fatalf("a wrong token: %v", err)
	}
	if _, err := os.Stat(filepath.Join(board, "T1"+driver.ReportSuffix)); err == nil {
		t.Fatal("a wrong token was reported")
	}
	if _, err := Report(context.Background(), board, events, 3, "T1", token, 0, time.Millisecond, failed); !errors.As(err, &notOpen) || notOpen.Open != 0 {
		t.Fatalf("another coordinator's lease: %v", err)
	}
	d, err := Report(context.Background(), board, events, 7, "T1", token, 0, time.Millisecond, failed)
	if err != nil || d.Finished != nil {
		t.Fatalf("before the attempt ended: %+v %v", d, err)
	}
	if b, err := os.ReadFile(filepath.Join(board, "T1"+driver.ReportSuffix)); err != nil || strings.TrimSpace(string(b)) != token {
		t.Fatalf("report %q %v", b, err)
	}
	if _, err := log.AppendData(runstate.EvAttemptFinished, "T1", 1, runstate.AttemptFinished{Class: outcome.Task, Reason: "verify_failed"}); err != nil {
		t.Fatal(err)
	}
	d, err = Report(context.Background(), board, events, 7, "T1", token, time.Second, time.Millisecond, failed)
	if err != nil || d.Finished == nil || d.Finished.Class != outcome.Task || !d.TaskFailed {
		t.Fatalf("after the attempt ended: %+v %v", d, err)
	}
}

// TestTasksNextWaitsForTheLevel: zerg tasks next hands a level out once
// every started attempt has posted its lease, and ready tasks have one
// while worker slots are free; a task whose subagent works holds none back.
func TestTasksNextWaitsForTheLevel(t *testing.T) {
	view := func(workers int, statuses ...runstate.Status) runstate.View {
		v := runstate.View{Workers: workers, Coordinator: runstate.CoordinatorView{Alive: true, PID: 7}}
		for i, s := range statuses {
			v.Tasks = append(v.Tasks, runstate.TaskView{ID: fmt.Sprintf("T%d", i+1), Status: s})
		}
		return v
	}
	open := func(tasks ...string) map[string]bool {
		m := map[string]bool{}
		for _, t := range tasks {
			m[t] = true
		}
		return m
	}
	// A dead coordinator's lease is none: driver.ReadBoard leaves it out of
	// the open tasks (TestReadBoard).
	for _, tc := range []struct {
		name string
		v    runstate.View
		open map[string]bool
		want int
	}{
		{"all posted", view(4, runstate.StatusRunning, runstate.StatusRunning), open("T1", "T2"), 0},
		{"one still cloning", view(4, runstate.StatusRunning, runstate.StatusRunning), open("T1"), 1},
		{"ready with a free slot", view(2, runstate.StatusRunning, runstate.StatusReady, runstate.StatusReady), open("T1"), 1},
		{"ready without a slot", view(1, runstate.StatusRunning, runstate.StatusReady), open("T1"), 0},
		{"committed and merged hold nothing", view(4, runstate.StatusCommitted, runstate.StatusMerged, runstate.StatusRetryWait), nil, 0},
	} {
		if got := Launching(tc.v, tc.open); got != tc.want {
			t.Errorf("%s: %d still launching, want %d", tc.name, got, tc.want)
		}
	}
}
