package driver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
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

// TestTasksLaunchTakesItsOwnReport: the lease is handed out once, with a
// token the board no longer holds afterwards (only its hash) and the
// subagent's prompt names; the report of that token ends the launch as a
// success.
func TestTasksLaunchTakesItsOwnReport(t *testing.T) {
	var out Lease
	var onBoard []byte
	v := launchHanded(t, context.Background(), time.Minute, func(board string, l Lease) {
		var ok bool
		var err error
		if out, ok, err = HandOut(board, l); err != nil || !ok {
			t.Errorf("hand out: %v %v", ok, err)
			return
		}
		if again, ok, err := HandOut(board, l); ok || err != nil {
			t.Errorf("handed out twice: %+v %v", again, err)
		}
		onBoard = boardText(t, board)
		if err := Report(board, l.Task, out.ID); err != nil {
			t.Error(err)
		}
	})
	if v.Class != outcome.Success || v.Reason != outcome.ReasonCompleted {
		t.Fatalf("verdict %+v, want success", v)
	}
	if !regexp.MustCompile(`^T1-2-[0-9a-f]{32}$`).MatchString(out.ID) || out.TokenSHA256 != "" || out.Model != "haiku" || out.AgentModel != "haiku" ||
		len(out.Owns) != 1 || out.Coordinator != os.Getpid() || out.Name() != "T1-2" ||
		!strings.Contains(out.Prompt, "Your workspace is /repo/.zerg/tasks/f/T1-2") || !strings.Contains(out.Prompt, "This task's lease is "+out.ID+":") ||
		!strings.HasSuffix(out.Prompt, "Task T1: one") {
		t.Fatalf("lease %+v", out)
	}
	if bytes.Contains(onBoard, []byte(out.ID)) {
		t.Errorf("the board holds the token once it was handed out:\n%s", onBoard)
	}
}

// TestTasksLaunchRefusesAnotherReport: what another subagent could name
// (the lease's public name, the old guessable form, a token of another
// attempt, the hash the board holds) is not the lease's token: the lease
// expires as a stalled infra failure. Issue 35: a subagent reported another
// task's lease and got its content committed as that task.
func TestTasksLaunchRefusesAnotherReport(t *testing.T) {
	for name, forge := range map[string]func(l Lease) string{
		"its name":           func(l Lease) string { return l.Name() },
		"the hash on board":  func(l Lease) string { return l.TokenSHA256 },
		"another attempt's":  func(l Lease) string { tok, _ := newLeaseToken(l.Task, l.Attempt-1); return tok },
		"a token of its own": func(l Lease) string { tok, _ := newLeaseToken(l.Task, l.Attempt); return tok },
	} {
		start := time.Now()
		v := launchHanded(t, context.Background(), 300*time.Millisecond, func(board string, l Lease) {
			if err := Report(board, l.Task, forge(l)); err != nil {
				t.Error(err)
			}
		})
		if v.Class != outcome.Infra || v.Reason != outcome.ReasonStalled || !strings.Contains(v.Detail, "the lease of T1-2 expired") {
			t.Fatalf("%s: verdict %+v, want the lease expired", name, v)
		}
		if time.Since(start) < 300*time.Millisecond {
			t.Fatalf("%s: the lease ended before it expired", name)
		}
	}
}

// boardText is every file on the board, concatenated.
func boardText(t *testing.T, board string) []byte {
	t.Helper()
	var all []byte
	entries, err := os.ReadDir(board)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(board, e.Name()))
		all = append(append(all, e.Name()+":\n"...), b...)
	}
	return all
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
