package claude

import (
	"context"
	"errors"
	"fmt"
	"github.com/zergrush/zerg/internal/proc"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/outcome"
)

// fakeClaude is a stand-in CLI for driver tests that need no model: it
// prints stream-json lines and leaves detached processes behind, the way the
// Bash tool's setsid'd commands do.
const fakeClaude = `#!/bin/sh
echo "$@" > "$FAKE_DIR/argv"
env > "$FAKE_DIR/env"
echo '{"type":"system","subtype":"init","session_id":"11111111-2222-4333-8444-555555555555","model":"fake-model","tools":["Bash"]}'
echo 'not json at all'
# Detached like the Bash tool: own session, survives a process-group kill.
setsid sh -c 'echo $$ > "$FAKE_DIR/setsid.pid"; exec sleep 300' </dev/null >/dev/null 2>&1 &
nohup sleep 300 </dev/null >/dev/null 2>&1 &
echo $! > "$FAKE_DIR/nohup.pid"
# Detached with a scrubbed environment: only the tree walk can find it.
env -i setsid sh -c 'echo $$ > "'"$FAKE_DIR"'/envi.pid"; exec sleep 300' </dev/null >/dev/null 2>&1 &
for f in setsid nohup envi; do
  while [ ! -s "$FAKE_DIR/$f.pid" ]; do sleep 0.01; done
done
echo ready > "$FAKE_DIR/ready"
case "$FAKE_MODE" in
exit)
  echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"fake done","session_id":"11111111-2222-4333-8444-555555555555","total_cost_usd":0.25,"usage":{"input_tokens":10,"output_tokens":5}}'
  exit 0 ;;
ignore-term)
  trap '' TERM
  echo '{"type":"assistant","message":{"id":"m1","model":"fake-model","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},"parent_tool_use_id":null}'
  while :; do sleep 1; done ;;
silent)
  exec sleep 300 ;;
stdin)
  IFS= read -r line
  printf '%s\n' "$line" > "$FAKE_DIR/stdin"
  [ -n "$line" ] || exit 0
  echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"fake done","session_id":"11111111-2222-4333-8444-555555555555","total_cost_usd":0.25,"usage":{"input_tokens":10,"output_tokens":5}}'
  exit 0 ;;
*)
  echo '{"type":"assistant","message":{"id":"m1","model":"fake-model","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},"parent_tool_use_id":null}'
  exec sleep 300 ;;
esac
`

// fakeClaudeBin is the one copy of fakeClaude every run test starts. It is
// written once, before any test runs: a parallel test writing its own copy
// while another test forks would leave its write descriptor open in that
// child until the child execs, and starting the copy then fails with
// "text file busy" (ETXTBSY).
var fakeClaudeBin string

func TestMain(m *testing.M) {
	if err := EnableSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "zerg-claude-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeClaudeBin = filepath.Join(dir, "claude")
	if err := os.WriteFile(fakeClaudeBin, []byte(fakeClaude), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type fakeRun struct {
	dir  string
	spec Spec
}

func newFakeRun(t *testing.T, mode string) *fakeRun {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return &fakeRun{dir: dir, spec: Spec{
		Binary:     fakeClaudeBin,
		Workdir:    ws,
		AttemptDir: filepath.Join(dir, "attempt"),
		Prompt:     "fake prompt",
		API:        APISettings{BaseURL: "http://127.0.0.1:9", APIKey: testKey},
		Hook:       HookSpec{Disabled: true},
		SetEnv:     map[string]string{"FAKE_DIR": dir, "FAKE_MODE": mode},
		KillGrace:  time.Second,
	}}
}

func (f *fakeRun) pid(t *testing.T, name string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.dir, name+".pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func (f *fakeRun) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(f.dir, "ready")); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("fake claude never got ready")
}

// assertGone fails if any of pids still exists (zombies included: the run
// must reap what re-parented to us).
func assertGone(t *testing.T, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		if st, err := proc.ReadStat(pid); err == nil {
			t.Errorf("process %d still exists (state %c, ppid %d)", pid, st.State, st.PPID)
		}
	}
}

// waitRecorded waits until the run's tracker has recorded every one of
// pids (it scans the tree every trackInterval) or 30 s have passed; the
// caller checks what was recorded.
func waitRecorded(r *Run, pids ...int) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		recorded := map[int]bool{}
		for _, p := range r.PIDs() {
			recorded[p.PID] = true
		}
		all := true
		for _, pid := range pids {
			all = all && recorded[pid]
		}
		if all {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitOutcome(t *testing.T, r *Run, limit time.Duration) Outcome {
	t.Helper()
	select {
	case <-r.Done():
		return r.Wait()
	case <-time.After(limit):
		r.Kill()
		t.Fatalf("run did not end within %v", limit)
		return Outcome{}
	}
}

func TestRunStopKillsDetachedTree(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, mode string
		stop       func(*Run, context.CancelFunc)
		cause      string
	}{
		{"Stop", "hang", func(r *Run, _ context.CancelFunc) { r.Stop() }, "stopped"},
		{"Kill", "hang", func(r *Run, _ context.CancelFunc) { r.Kill() }, "killed"},
		{"context cancel", "hang", func(_ *Run, cancel context.CancelFunc) { cancel() }, "cancelled"},
		{"SIGTERM ignored escalates to SIGKILL", "ignore-term", func(r *Run, _ context.CancelFunc) { r.Stop() }, "stopped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeRun(t, tc.mode)
			var mu sync.Mutex
			var events []Event
			f.spec.OnEvent = func(ev Event) { mu.Lock(); events = append(events, ev); mu.Unlock() }
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r, err := Start(ctx, f.spec)
			if err != nil {
				t.Fatal(err)
			}
			f.waitReady(t)
			detached := []int{f.pid(t, "setsid"), f.pid(t, "nohup"), f.pid(t, "envi")}
			// Let the tracker record the tree.
			waitRecorded(r, append(detached, r.PID())...)
			recorded := map[int]bool{}
			for _, p := range r.PIDs() {
				recorded[p.PID] = true
			}
			for _, pid := range append(detached, r.PID()) {
				if !recorded[pid] {
					t.Errorf("pid %d not recorded in %v", pid, r.PIDs())
				}
			}
			start := time.Now()
			tc.stop(r, cancel)
			o := waitOutcome(t, r, 30*time.Second)
			assertGone(t, append(detached, r.PID())...)
			if o.Class != outcome.Infra || !o.Stopped || o.StopCause != tc.cause || len(o.Leftover) != 0 {
				t.Fatalf("outcome %s/%s stopped %v cause %q leftover %v", o.Class, o.Reason, o.Stopped, o.StopCause, o.Leftover)
			}
			if tc.mode == "ignore-term" && time.Since(start) < f.spec.KillGrace {
				t.Fatalf("ended after %v, before the SIGKILL grace", time.Since(start))
			}
			mu.Lock()
			defer mu.Unlock()
			if len(events) < 2 || events[0].Init == nil || events[1].IsJSON() || string(events[1].Raw) != "not json at all" {
				t.Fatalf("events %+v", events)
			}
			if p := r.Progress(); p.Model != "fake-model" || p.SessionID == "" || p.LastEvent.IsZero() {
				t.Fatalf("progress %+v", p)
			}
		})
	}
}

func TestRunNormalExitSweepsLeftovers(t *testing.T) {
	t.Parallel()
	f := newFakeRun(t, "exit")
	r, err := Start(context.Background(), f.spec)
	if err != nil {
		t.Fatal(err)
	}
	o := waitOutcome(t, r, 30*time.Second)
	if o.Class != outcome.Success || o.ResultText != "fake done" || o.CostUSD != 0.25 || o.ExitCode != 0 || o.Stopped {
		t.Fatalf("outcome %+v", o)
	}
	// The nohup'd and setsid'd children carry the marker; the env -i one
	// re-parented to us, probably before any scan, and is found by its cwd.
	assertGone(t, f.pid(t, "setsid"), f.pid(t, "nohup"), f.pid(t, "envi"))
	if o.Duration <= 0 {
		t.Fatal("no duration")
	}
}

func TestRunWatchdog(t *testing.T) {
	t.Parallel()
	f := newFakeRun(t, "silent")
	f.spec.IdleTimeout = 1500 * time.Millisecond
	start := time.Now()
	r, err := Start(context.Background(), f.spec)
	if err != nil {
		t.Fatal(err)
	}
	o := waitOutcome(t, r, 30*time.Second)
	if o.Class != outcome.Infra || o.Reason != outcome.ReasonStalled || o.StopCause != "stalled" {
		t.Fatalf("outcome %s/%s cause %q", o.Class, o.Reason, o.StopCause)
	}
	if d := time.Since(start); d < f.spec.IdleTimeout {
		t.Fatalf("watchdog fired after %v", d)
	}
	assertGone(t, f.pid(t, "setsid"), f.pid(t, "nohup"), f.pid(t, "envi"))
}

func TestRunProcessEnvAndArgv(t *testing.T) {
	t.Parallel()
	f := newFakeRun(t, "exit")
	r, err := Start(context.Background(), f.spec)
	if err != nil {
		t.Fatal(err)
	}
	waitOutcome(t, r, 30*time.Second)
	assertGone(t, f.pid(t, "setsid"), f.pid(t, "nohup"), f.pid(t, "envi"))
	argv, err := os.ReadFile(filepath.Join(f.dir, "argv"))
	if err != nil {
		t.Fatal(err)
	}
	assertNoSecret(t, string(argv))
	if !strings.Contains(string(argv), "--output-format stream-json --verbose") || !strings.HasSuffix(strings.TrimSpace(string(argv)), "-- fake prompt") {
		t.Fatalf("argv %q", argv)
	}
	env, err := os.ReadFile(filepath.Join(f.dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	allowed := append(append([]string{}, allowedEnv...), "FAKE_DIR", "FAKE_MODE", "PWD", "SHLVL", "_", "OLDPWD")
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(env)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		m[k] = v
		found := false
		for _, a := range allowed {
			found = found || a == k
		}
		if !found {
			t.Errorf("worker env has %s", k)
		}
	}
	if m[EnvAPIKey] != testKey || m["HOME"] != filepath.Join(f.spec.AttemptDir, "home") || m["PWD"] != f.spec.Workdir {
		t.Errorf("worker env %v", m)
	}
}

// A worker started with PromptLater waits on stdin; Send gives it the one
// user message of a stream-json input and closes stdin; the idle watchdog
// counts from the prompt, not from the start. Controls: a second Send, and
// a Send to a run started with its prompt, fail; a prompt and PromptLater
// together are a bad spec; an empty Send closes stdin and the worker ends.
func TestRunPromptLater(t *testing.T) {
	t.Parallel()
	f := newFakeRun(t, "stdin")
	f.spec.Prompt, f.spec.PromptLater = "", true
	f.spec.IdleTimeout = time.Second
	r, err := Start(context.Background(), f.spec)
	if err != nil {
		t.Fatal(err)
	}
	f.waitReady(t)
	time.Sleep(1500 * time.Millisecond) // longer than the idle timeout
	if err := r.Send("the task\nin two lines"); err != nil {
		t.Fatal(err)
	}
	if err := r.Send("again"); err == nil {
		t.Error("a second Send succeeded")
	}
	o := waitOutcome(t, r, 30*time.Second)
	if o.Class != outcome.Success {
		t.Fatalf("outcome %s/%s (%s): the wait before the prompt counted as idle?", o.Class, o.Reason, o.Detail)
	}
	argv, _ := os.ReadFile(filepath.Join(f.dir, "argv"))
	if !strings.HasSuffix(strings.TrimSpace(string(argv)), "--input-format stream-json") || strings.Contains(string(argv), " -- ") {
		t.Errorf("argv %q", argv)
	}
	in, _ := os.ReadFile(filepath.Join(f.dir, "stdin"))
	want := `{"message":{"content":"the task\nin two lines","role":"user"},"type":"user"}`
	if strings.TrimSpace(string(in)) != want {
		t.Errorf("stdin %s, want %s", in, want)
	}

	unused := newFakeRun(t, "stdin")
	unused.spec.Prompt, unused.spec.PromptLater = "", true
	r, err = Start(context.Background(), unused.spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Send(""); err != nil {
		t.Fatal(err)
	}
	waitOutcome(t, r, 30*time.Second)
	assertGone(t, unused.pid(t, "setsid"), unused.pid(t, "nohup"), unused.pid(t, "envi"))

	normal := newFakeRun(t, "exit")
	r, err = Start(context.Background(), normal.spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Send("x"); err == nil {
		t.Error("Send to a run started with its prompt succeeded")
	}
	waitOutcome(t, r, 30*time.Second)

	bad := newFakeRun(t, "exit")
	bad.spec.PromptLater = true
	if _, err := Start(context.Background(), bad.spec); !errors.Is(err, ErrBadSpec) {
		t.Errorf("a prompt with PromptLater: %v, want ErrBadSpec", err)
	}
}

func TestStartErrors(t *testing.T) {
	f := newFakeRun(t, "exit")
	f.spec.Binary = filepath.Join(f.dir, "missing")
	if _, err := Start(context.Background(), f.spec); err == nil {
		t.Fatal("started a missing binary")
	}
	f.spec.Prompt = ""
	if _, err := Start(context.Background(), f.spec); err == nil {
		t.Fatal("started with an empty prompt")
	}
}

func TestKillRecorded(t *testing.T) {
	t.Parallel()
	f := newFakeRun(t, "hang")
	r, err := Start(context.Background(), f.spec)
	if err != nil {
		t.Fatal(err)
	}
	f.waitReady(t)
	waitRecorded(r, f.pid(t, "setsid"), f.pid(t, "nohup"), f.pid(t, "envi"), r.PID())
	// A coordinator that restarted knows only the records.
	killed := KillRecorded(r.Marker(), r.PIDs(), time.Second)
	if len(killed) < 4 {
		t.Fatalf("KillRecorded killed %v", killed)
	}
	o := waitOutcome(t, r, 30*time.Second)
	assertGone(t, f.pid(t, "setsid"), f.pid(t, "nohup"), f.pid(t, "envi"), r.PID())
	if o.Class != outcome.Infra {
		t.Fatalf("outcome %s/%s", o.Class, o.Reason)
	}
	// A stale record (same PID, other start time) is left alone.
	self := os.Getpid()
	if got := KillRecorded("", []Proc{{PID: self, StartTime: 1}}, 0); len(got) != 0 {
		t.Fatalf("killed %v for a stale record", got)
	}
}

// A sandbox's inner bwrap orphaned during setup (its outer bwrap killed)
// carries no marker and was never recorded; KillRecorded finds it by the
// workdir its command line names. One started in another directory is not
// the run's and stays.
func TestKillRecordedFindsAnOrphanedSandbox(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to start a process under the name bwrap")
	}
	ours, other := t.TempDir(), t.TempDir()
	orphan := func(dir string) int {
		t.Helper()
		// The intermediate shell exits at once: the fake bwrap is
		// re-parented, as the real one is when its parent dies.
		// bash under the name bwrap, with bwrap's --chdir among its
		// arguments; "; :" keeps it from exec'ing sleep.
		out, err := exec.Command(bash, "-c", `(exec -a bwrap bash -c 'sleep 60; :' x --chdir "$1" >/dev/null 2>&1 & echo $!)`, "x", dir).Output()
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		return pid
	}
	mine, theirs := orphan(ours), orphan(other)
	for _, pid := range []int{mine, theirs} {
		if st, err := proc.ReadStat(pid); err != nil || st.State == 'Z' || (st.PPID != 1 && st.PPID != os.Getpid()) {
			t.Fatalf("the fake bwrap %d is not a live orphan of init or of this process: %+v, %v", pid, st, err)
		}
	}
	killed := KillRecorded("", nil, time.Second, ours)
	if !slices.Contains(killed, mine) {
		t.Fatalf("KillRecorded killed %v, not the orphaned sandbox %d started in the workdir", killed, mine)
	}
	if slices.Contains(killed, theirs) {
		t.Fatalf("KillRecorded killed %d, a sandbox started in another directory", theirs)
	}
	if syscall.Kill(theirs, 0) != nil {
		t.Fatal("the other directory's sandbox is gone")
	}
}
