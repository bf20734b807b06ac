package claude_test

// The driver end to end: the real pinned Claude Code CLI against our
// scripted Messages API (internal/mockapi), launched through claude.Start
// exactly as the coordinator does.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/mockapi"
	"github.com/zergrush/zerg/internal/outcome"
)

const e2eKey = "sk-ant-e2e-SECRET-do-not-log"

// e2eRun is one worker against one scripted server.
type e2eRun struct {
	srv  *mockapi.Server
	spec claude.Spec
	ws   string
	root string
}

func newE2E(t *testing.T, scenario string) *e2eRun {
	t.Helper()
	sc, err := mockapi.ParseScenario([]byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	srv := mockapi.NewServer(sc)
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return &e2eRun{srv: srv, ws: ws, root: root, spec: claude.Spec{
		Binary:     cli.Path,
		Workdir:    ws,
		AttemptDir: filepath.Join(root, "attempt"),
		Prompt:     "please do the e2e task",
		API:        claude.APISettings{BaseURL: url, APIKey: e2eKey},
		Tools:      []string{"Bash", "Edit", "Read", "Write"},
		MaxRetries: 1,
		APITimeout: 5 * time.Second,
		// A safety net only: the machine may be loaded, so it is generous.
		IdleTimeout: 3 * time.Minute,
		KillGrace:   2 * time.Second,
		Hook:        claude.HookSpec{ZergBinary: zergBin, AllowedPaths: []string{"**"}},
	}}
}

func (e *e2eRun) run(t *testing.T) (claude.Outcome, *claude.Run) {
	t.Helper()
	r, err := claude.Start(context.Background(), e.spec)
	if err != nil {
		t.Fatal(err)
	}
	return waitOutcome(t, r, 4*time.Minute), r
}

// TestRealCLIVersionIsSupported: the CLI under test is the pinned one,
// or (ZERG_CLAUDE: make cli-matrix, make cli-compat) a release whose
// place in the supported range is known.
func TestRealCLIVersionIsSupported(t *testing.T) {
	v, err := claude.Version(context.Background(), cli.Path)
	if err != nil {
		t.Fatal(err)
	}
	if cli.Source == claude.SourceEnv {
		if s := claude.SupportOf(v); s == claude.OlderMin || s == claude.Unreadable {
			t.Fatalf("claude %s at %s (ZERG_CLAUDE): %s than zerg supports (%s to %s)", v, cli.Path, s, claude.MinVersion, claude.TestedVersion)
		}
		t.Logf("claude %s (ZERG_CLAUDE): %s", v, claude.SupportOf(v))
		return
	}
	pinned, err := claude.PinnedVersion(cli.RepoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if v != pinned {
		t.Fatalf("claude %s at %s (%s), pinned %s", v, cli.Path, cli.Source, pinned)
	}
}

func TestE2EWriteEditBash(t *testing.T) {
	e := newE2E(t, `
tasks:
  - name: work
    match: "e2e task"
    turns:
      - tools: [{name: Write, input: {file_path: hello.txt, content: "hi\n"}}]
      - tools: [{name: Read, input: {file_path: hello.txt}}]
      - tools: [{name: Edit, input: {file_path: hello.txt, old_string: "hi", new_string: "hello"}}]
      - tools: [{name: Bash, input: {command: "echo ran > ran.txt", description: "run"}}]
      - text: "All done."
        usage: {input_tokens: 5000, output_tokens: 300, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`)
	var mu sync.Mutex
	types := map[string]int{}
	e.spec.OnEvent = func(ev claude.Event) { mu.Lock(); types[ev.Type]++; mu.Unlock() }
	o, r := e.run(t)
	if o.Class != outcome.Success || o.Reason != outcome.ReasonCompleted || o.ResultText != "All done." || o.ExitCode != 0 {
		t.Fatalf("outcome %s/%s %q exit %d stderr %q", o.Class, o.Reason, o.Detail, o.ExitCode, o.Stderr)
	}
	if got := readFile(t, filepath.Join(e.ws, "hello.txt")); got != "hello\n" {
		t.Fatalf("hello.txt = %q", got)
	}
	if got := readFile(t, filepath.Join(e.ws, "ran.txt")); got != "ran\n" {
		t.Fatalf("ran.txt = %q", got)
	}
	// Accounting comes from the result event: the last turn's scripted
	// usage is in the totals, and the cost is the CLI's.
	if o.Usage.OutputTokens < 300 || o.Usage.InputTokens < 5000 || o.CostUSD <= 0 || o.NumTurns != 5 {
		t.Fatalf("usage %+v cost %v turns %d", o.Usage, o.CostUSD, o.NumTurns)
	}
	var sum float64
	for _, mu := range o.ModelUsage {
		sum += mu.CostUSD
	}
	if len(o.ModelUsage) == 0 || fmt.Sprintf("%.6f", sum) != fmt.Sprintf("%.6f", o.CostUSD) {
		t.Fatalf("modelUsage %+v vs cost %v", o.ModelUsage, o.CostUSD)
	}
	p := r.Progress()
	if p.ToolCalls["Write"] != 1 || p.ToolCalls["Edit"] != 1 || p.ToolCalls["Read"] != 1 || p.ToolCalls["Bash"] != 1 || !p.TokensFinal || p.Turns != 5 {
		t.Fatalf("progress %+v", p)
	}
	if o.SessionID != e.spec.SessionID && e.spec.SessionID != "" || o.SessionID != r.SessionID() {
		t.Fatalf("session %q vs %q", o.SessionID, r.SessionID())
	}
	mu.Lock()
	if types[claude.TypeSystem] == 0 || types[claude.TypeAssistant] < 5 || types[claude.TypeUser] < 4 || types[claude.TypeResult] != 1 {
		t.Fatalf("event types %v", types)
	}
	mu.Unlock()
	// The worker reached the API with our key (through its env) and our
	// session id, and its state went to the attempt dir, not HOME.
	reqs := e.srv.Requests()
	mains := 0
	for _, q := range reqs {
		if q.Kind == mockapi.KindMain {
			mains++
			if !q.APIKey || q.SessionID != r.SessionID() || !sameTools(q.ToolNames, e.spec.Tools) {
				t.Fatalf("request %+v", q)
			}
		}
	}
	if mains != 5 {
		t.Fatalf("%d main requests, want 5", mains)
	}
	if _, err := os.Stat(filepath.Join(e.spec.AttemptDir, "config", ".claude.json")); err != nil {
		t.Fatalf("config dir not used: %v", err)
	}
	assertNoSecret(t, o.Stderr+o.Detail+fmt.Sprintf("%+v", o))
}

func TestE2EFaults(t *testing.T) {
	cases := []struct {
		name   string
		fault  string
		idle   time.Duration
		class  outcome.Class
		reason string
	}{
		{"429 persistent", `{http: 429, retry_after: 1}`, 0, outcome.Infra, outcome.ReasonRateLimit},
		{"500 persistent", `{http: 500}`, 0, outcome.Infra, outcome.ReasonServerError},
		{"529", `{http: 529}`, 0, outcome.Infra, outcome.ReasonOverloaded},
		{"401", `{http: 401}`, 0, outcome.Account, outcome.ReasonAuth},
		{"400", `{http: 400}`, 0, outcome.Fatal, outcome.ReasonBadRequest},
		{"404 model", `{http: 404, kinds: [main, fallback]}`, 0, outcome.Fatal, outcome.ReasonModelNotFound},
		// The 403 class through the real CLI: it reports every 403 as its
		// own authentication_failed ("Failed to authenticate. API Error:
		// 403 …", without the error type), so without a gateway any 403
		// is account/auth, a proxy's too (docs/driver.md).
		{"403 permission_error", `{http: 403}`, 0, outcome.Account, outcome.ReasonAuth},
		{"403 not the API's", `{http: 403, error_type: forbidden, message: "blocked by the proxy's policy"}`, 0, outcome.Account, outcome.ReasonAuth},
		{"400 usage limit", `{http: 400, message: "You have reached your specified API usage limits. You will regain access on 2030-07-01 at 00:00 UTC."}`, 0, outcome.Account, outcome.ReasonUsageLimit},
		{"malformed stream", `{malformed: garbage, kinds: [main, fallback]}`, 0, outcome.Infra, outcome.ReasonMalformed},
		{"stall before headers, CLI timeout", `{stall: before_headers, duration: 60s, kinds: [main, fallback]}`, 0, outcome.Infra, outcome.ReasonTimeout},
		{"stall after headers, our watchdog", `{stall: after_message_start, kinds: [main, fallback]}`, 8 * time.Second, outcome.Infra, outcome.ReasonStalled},
		{"max_tokens", `{stop: max_tokens, kinds: [main, fallback]}`, 0, outcome.Task, outcome.ReasonMaxOutputTokens},
		{"refusal", `{stop: refusal}`, 0, outcome.Task, outcome.ReasonRefusal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t, `
tasks:
  - name: faulty
    match: "e2e task"
    turns: [{text: "never seen"}]
    faults: [`+tc.fault+`]
`)
			e.spec.APITimeout = 2 * time.Second
			if tc.idle > 0 {
				e.spec.IdleTimeout = tc.idle
			}
			start := time.Now()
			o, r := e.run(t)
			if o.Class != tc.class || o.Reason != tc.reason {
				t.Fatalf("outcome %s/%s, want %s/%s; detail %q exit %d stderr %q", o.Class, o.Reason, tc.class, tc.reason, o.Detail, o.ExitCode, o.Stderr)
			}
			if tc.idle == 0 && (o.Result == nil || !o.Result.IsError || o.ExitCode != 1) {
				t.Fatalf("result %+v exit %d", o.Result, o.ExitCode)
			}
			if tc.idle > 0 && (!o.Stopped || time.Since(start) < tc.idle) {
				t.Fatalf("watchdog: stopped %v after %v", o.Stopped, time.Since(start))
			}
			assertGone(t, r.PID())
			t.Logf("%s: %s/%s in %v: %q", tc.name, o.Class, o.Reason, time.Since(start).Round(time.Millisecond), o.Detail)
		})
	}
}

func TestE2EStopLeavesNoProcess(t *testing.T) {
	// Turn 1 detaches a long sleep the way an agent would (setsid + nohup);
	// turn 2 hangs upstream so the run is mid-flight when we stop it.
	const scenario = `
tasks:
  - name: detach
    match: "e2e task"
    turns:
      - tools: [{name: Bash, input: {command: "setsid nohup sh -c 'echo $$ > sleep.pid; exec sleep 300' > /dev/null 2>&1 & echo started", description: "detach"}}]
      - text: "never reached"
        faults: [{stall: before_headers}]
`
	for _, tc := range []struct {
		name  string
		stop  func(*claude.Run, context.CancelFunc)
		cause string
	}{
		{"SIGTERM then SIGKILL", func(r *claude.Run, _ context.CancelFunc) { r.Stop() }, "stopped"},
		{"SIGKILL", func(r *claude.Run, _ context.CancelFunc) { r.Kill() }, "killed"},
		{"context cancelled", func(_ *claude.Run, cancel context.CancelFunc) { cancel() }, "cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t, scenario)
			e.spec.AllowedTools = []string{"Bash"}
			// The detaching command is exactly what the Bash policy refuses
			// (setsid, $$); this test is about killing, not the policy.
			e.spec.Hook.BashUnrestricted = true
			e.spec.APITimeout = 0 // wait on the stalled turn until stopped
			toolDone := make(chan struct{})
			var once sync.Once
			e.spec.OnEvent = func(ev claude.Event) {
				if ev.User != nil {
					once.Do(func() { close(toolDone) })
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r, err := claude.Start(ctx, e.spec)
			if err != nil {
				t.Fatal(err)
			}
			sleepPID := waitPidFile(t, filepath.Join(e.ws, "sleep.pid"), 2*time.Minute)
			if st, err := readStat(sleepPID); err != nil || st.sid != sleepPID {
				t.Fatalf("sleep %d not detached into its own session: %+v %v", sleepPID, st, err)
			}
			// The tool result is out: the CLI is now on turn 2, which stalls.
			select {
			case <-toolDone:
			case <-time.After(2 * time.Minute):
				t.Fatal("no tool result")
			}
			time.Sleep(300 * time.Millisecond)
			if p := r.Progress(); p.ToolCalls["Bash"] != 1 {
				t.Fatalf("progress %+v", p)
			}
			stopAt := time.Now()
			tc.stop(r, cancel)
			o := waitOutcome(t, r, time.Minute)
			if d := time.Since(stopAt); d > 10*time.Second {
				t.Errorf("stopping took %v", d)
			}
			if o.Class != outcome.Infra || !o.Stopped || o.StopCause != tc.cause {
				t.Fatalf("outcome %s/%s stopped %v cause %q", o.Class, o.Reason, o.Stopped, o.StopCause)
			}
			pids := []int{sleepPID}
			for _, p := range r.PIDs() {
				pids = append(pids, p.PID)
			}
			assertGone(t, pids...)
			if len(o.Leftover) != 0 {
				t.Fatalf("leftover %v", o.Leftover)
			}
			// Nothing anywhere still carries the run's marker.
			if pids := pidsWithEnv(t, claude.EnvRunMarker+"="+r.Marker()); len(pids) != 0 {
				t.Fatalf("processes %v still carry the run marker", pids)
			}
		})
	}
}

func TestE2EHookPolicy(t *testing.T) {
	outside := t.TempDir()
	e := newE2E(t, fmt.Sprintf(`
tasks:
  - name: writes
    match: "e2e task"
    turns:
      - tools:
          - {name: Write, input: {file_path: %q, content: "escape\n"}}
          - {name: Write, input: {file_path: "main.go", content: "package main\n"}}
          - {name: Write, input: {file_path: "src/ok.txt", content: "allowed\n"}}
      - text: "done"
`, filepath.Join(outside, "evil.txt")))
	e.spec.Hook.AllowedPaths = []string{"src/**"}
	o, _ := e.run(t)
	if o.Class != outcome.Success {
		t.Fatalf("outcome %s/%s %q stderr %q", o.Class, o.Reason, o.Detail, o.Stderr)
	}
	if got := readFile(t, filepath.Join(e.ws, "src", "ok.txt")); got != "allowed\n" {
		t.Fatalf("allowed write: %q", got)
	}
	for _, p := range []string{filepath.Join(outside, "evil.txt"), filepath.Join(e.ws, "main.go")} {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("%s was created despite the policy", p)
		}
	}
	for _, d := range o.PermissionDenials {
		if d.ToolName != "Write" {
			t.Fatalf("denial %+v", d)
		}
	}
	if len(o.PermissionDenials) != 2 {
		t.Fatalf("permission denials %+v", o.PermissionDenials)
	}
}

// sameTools reports whether a request's tools are the ones the spec gave
// (--tools), besides the placeholder 2.1.332 adds for tools it defers
// (DeferredToolPlaceholder: nothing a worker can run, the hook denies it).
func sameTools(sent, want []string) bool {
	var got []string
	for _, n := range sent {
		if n != "DeferredToolPlaceholder" {
			got = append(got, n)
		}
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	return slices.Equal(got, want)
}
