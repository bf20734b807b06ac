package driver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/outcome"
)

// launchHanded posts the lease of attempt n of task on a fresh board and
// waits as tasks mode does; report runs once the lease is open.
func launchHanded(t *testing.T, ctx context.Context, lease time.Duration, report func(board string, l Lease)) Verdict {
	t.Helper()
	board := filepath.Join(t.TempDir(), "board")
	d := &Tasks{Board: board, Lease: lease, Poll: 10 * time.Millisecond}
	w := &handed{d: d, a: Attempt{Task: "T1", Number: 2}, dir: "/repo/.zerg/tasks/f/T1-2"}
	go func() {
		for {
			ls, _ := OpenLeases(board)
			if len(ls) == 1 {
				report(board, ls[0])
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	sp := claude.Spec{Prompt: "Task T1: one", Model: "haiku"}
	sp.Hook.AllowedPaths = []string{"a.txt"}
	v, err := w.Launch(ctx, sp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ls, _ := OpenLeases(board); len(ls) != 0 {
		t.Fatalf("the lease is still open after the launch: %+v", ls)
	}
	return v
}

// TestTasksLaunchTakesItsOwnReport: the report of the open lease ends the
// launch as a success; a report naming another lease (an expired one) is
// not taken, and the lease then expires as a stalled infra failure.
func TestTasksLaunchTakesItsOwnReport(t *testing.T) {
	var seen Lease
	v := launchHanded(t, context.Background(), time.Minute, func(board string, l Lease) {
		seen = l
		if err := Report(board, l.Task, l.ID); err != nil {
			t.Error(err)
		}
	})
	if v.Class != outcome.Success || v.Reason != outcome.ReasonCompleted {
		t.Fatalf("verdict %+v, want success", v)
	}
	if seen.ID != "T1-2" || seen.Model != "haiku" || seen.AgentModel != "haiku" || len(seen.Owns) != 1 || seen.Coordinator != os.Getpid() ||
		!strings.Contains(seen.Prompt, "Your workspace is /repo/.zerg/tasks/f/T1-2") || !strings.HasSuffix(seen.Prompt, "Task T1: one") {
		t.Fatalf("lease %+v", seen)
	}

	// The control: a report of another lease of the task is not this one's.
	start := time.Now()
	v = launchHanded(t, context.Background(), 300*time.Millisecond, func(board string, l Lease) {
		if err := Report(board, l.Task, LeaseID(l.Task, l.Attempt-1)); err != nil {
			t.Error(err)
		}
	})
	if v.Class != outcome.Infra || v.Reason != outcome.ReasonStalled || !strings.Contains(v.Detail, "lease T1-2 expired") {
		t.Fatalf("verdict %+v, want the lease expired", v)
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Fatalf("the lease ended before it expired")
	}
}

// TestTasksLaunchStopsWithTheRun: a stopped run ends the wait at once.
func TestTasksLaunchStopsWithTheRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	v := launchHanded(t, ctx, time.Hour, func(string, Lease) { cancel() })
	if v.Class != outcome.Infra || v.Reason != outcome.ReasonStopped {
		t.Fatalf("verdict %+v, want stopped", v)
	}
}

func TestAgentModel(t *testing.T) {
	for in, want := range map[string]string{"haiku": "haiku", "claude-sonnet-4-5": "sonnet", "claude-opus-4-8": "opus", "sonnet[1m]": "sonnet", "my-proxy-model": "", "": ""} {
		if got := AgentModel(in); got != want {
			t.Errorf("AgentModel(%q) = %q, want %q", in, got, want)
		}
	}
}
