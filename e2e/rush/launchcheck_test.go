package rush

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
)

// A beta no release of zerg has seen, as a later CLI would send it: the
// real CLI adds ANTHROPIC_BETAS to every request, and env.pass passes it.
const unseenBeta = "zerg-test-unseen-2099-01-01"

// TestLaunchCheckStopsTheRush: settings under which the gateway would
// refuse the CLI's own request stop the rush at its launch check, before
// any worker: one line naming the setting, the release and the fix, exit
// 2, nothing written, within seconds. gateway.max_tokens below what any
// release asks for, and gateway.strict with a beta zerg has not reviewed.
// The controls: with the fix each names, the launch check passes (zerg
// check runs it too).
func TestLaunchCheckStopsTheRush(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, config, fixed string
		want                []string
	}{
		{"gateway.max_tokens below the CLI's", "gateway:\n  max_tokens: 1000\n", "gateway:\n  max_tokens: 0\n",
			[]string{"gateway.max_tokens", "max_tokens", "above the cap of 1000", "set gateway.max_tokens in .zerg/config.yaml to at least"}},
		{"a beta under gateway.strict", "env:\n  pass: [ANTHROPIC_BETAS]\ngateway:\n  strict: true\n",
			"env:\n  pass: [ANTHROPIC_BETAS]\ngateway:\n  strict: true\n  betas: [" + unseenBeta + "]\n",
			[]string{`"` + unseenBeta + `" is not one zerg has reviewed (gateway.strict)`, `add "` + unseenBeta + `" to gateway.betas`}},
	} {
		// A project of its own per case: the control's zerg check writes
		// its record in the run's directory.
		p := newProject(t, nil)
		env := append(p.env(), "ANTHROPIC_BETAS="+unseenBeta)
		p.setConfig(c.config)
		t0 := time.Now()
		r := p.zergEnv(env, "rush", "demo", "--rehearse")
		took := time.Since(t0)
		t.Logf("%s: exit %d in %s: %s", c.name, r.code, took.Round(100*time.Millisecond), strings.TrimSpace(r.stderr))
		if r.code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s%s", c.name, r.code, r.stdout, r.stderr)
		}
		for _, w := range append(c.want, "claude 2.", claudeBin, "the CLI's own request") {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr does not say %q:\n%s", c.name, w, r.stderr)
			}
		}
		if took > time.Minute {
			t.Errorf("%s took %s; the launch check is bounded by seconds", c.name, took)
		}
		p.nothingWritten(c.name)
		p.git("reset", "-q", "--hard", "HEAD~1")

		p.setConfig(c.fixed)
		if r := p.zergEnv(env, "check", "demo"); r.code != 0 || strings.Contains(r.stderr, "refuse") || !strings.Contains(r.stdout, "the launch check: claude") {
			t.Errorf("%s, fixed: zerg check exit %d\n%s%s", c.name, r.code, r.stdout, r.stderr)
		}
	}
}

// betas2_1_197 is the gateway's allowlist before the supported range: the
// betas of the release zerg pinned then (2.1.197), the only ones it let
// through.
var betas2_1_197 = []string{"claude-code-20250219", "context-1m-2025-08-07", "context-management-2025-06-27", "effort-2025-11-24",
	"extended-cache-ttl-2025-04-11", "fallback-credit-2026-06-01", "interleaved-thinking-2025-05-14", "mid-conversation-system-2026-04-07",
	"oauth-2025-04-20", "prompt-caching-scope-2026-01-05", "structured-outputs-2025-12-15", "thinking-token-count-2026-05-13", "token-counting-2024-11-01"}

// TestLaunchCheckOldAllowlistControl: the control of the gateway's new
// policy. The release under test against the policy of before (only
// 2.1.197's betas, max_tokens capped at 64000): the newest release's own
// requests are refused, as they were in every attempt of the demo; with
// today's default policy, the same release's requests pass.
func TestLaunchCheckOldAllowlistControl(t *testing.T) {
	t.Parallel()
	worker := claude.Spec{Binary: claudeBin, FallbackModel: "haiku"}
	old, err := cliprobe.Run(context.Background(), cliprobe.Config{Worker: worker, Models: []string{"sonnet"},
		Policy: gateway.Policy{Strict: true, Reviewed: betas2_1_197, MaxTokens: 64000}})
	if err != nil {
		t.Fatal(err)
	}
	_, r := old.Refusal()
	t.Logf("claude %s against the allowlist of 2.1.197: %+v", old.Version, r)
	newer := claude.SupportOf(old.Version) == claude.NewerTested || old.Version == claude.TestedVersion
	if newer && (r == nil || !strings.Contains(r.Reason, "per-turn-control-2026-07-01") && !strings.Contains(r.Reason, "max_tokens")) {
		t.Errorf("claude %s passed the old allowlist: the control does not reproduce the refusals", old.Version)
	}
	cur, err := cliprobe.Run(context.Background(), cliprobe.Config{Worker: worker, Models: []string{"sonnet"},
		Policy: gateway.Policy{MaxTokens: gateway.DefaultMaxTokens}})
	if err != nil {
		t.Fatal(err)
	}
	if m, r := cur.Refusal(); r != nil {
		t.Errorf("claude %s with today's default policy: %s refused: %s", cur.Version, m.Model, r.Reason)
	}
	if m, why := cur.Problem(); why != "" {
		t.Errorf("claude %s: %s: %s", cur.Version, m.Model, why)
	}
}

// TestLaunchCheckSkippedTheRefusalStopsTheRun: with the launch check
// skipped (--no-check), the gateway refusing the CLI's own first request
// (gateway.max_tokens below what it asks for) is the run's settings: the
// launching stops after two attempts, no task retry is spent, and the run
// says so once with the fix. Before, each refusal was three task failures
// blamed on the worker.
func TestLaunchCheckSkippedTheRefusalStopsTheRun(t *testing.T) {
	t.Parallel()
	p := newProject(t, nil)
	p.setConfig("gateway:\n  max_tokens: 1000\n")
	r := p.zerg("rush", "demo", "--rehearse", "--no-check")
	t.Logf("exit %d\n%s", r.code, tail(r.stderr, 8))
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (the launching stopped)\n%s%s", r.code, r.stdout, r.stderr)
	}
	out := r.stdout + r.stderr
	for _, w := range []string{"the same refusal in", "the CLI's own request", "gateway.max_tokens", "no task's retries were spent"} {
		if !strings.Contains(out, w) {
			t.Errorf("the run does not say %q:\n%s", w, out)
		}
	}
	// Said once: as the launching stops, and in the run's last line.
	if n := strings.Count(r.stderr, "the same refusal in"); n > 2 {
		t.Errorf("said %d times, want once as it stops and once at the end:\n%s", n, r.stderr)
	}
	evs := p.events()
	refused, attempts := 0, 0
	for _, e := range evs {
		if e.Type != runstate.EvAttemptFinished {
			continue
		}
		attempts++
		var f runstate.AttemptFinished
		if err := e.Decode(&f); err != nil {
			t.Fatal(err)
		}
		switch {
		case f.Class == "infra" && f.Reason == outcome.ReasonCLIRefused:
			refused++
		case f.Class == "infra" && f.Reason == outcome.ReasonCancelled:
			// A retry of the first refusal, started before the second
			// came back (slower starts, as in container mode), stopped
			// with the run.
		default:
			t.Errorf("%s attempt %d: %s %s (%s), want infra %s (or %s by the stop)", e.Task, e.Attempt, f.Class, f.Reason, f.Detail, outcome.ReasonCLIRefused, outcome.ReasonCancelled)
		}
	}
	// Level 1 has four tasks and four workers: the stop comes with the
	// second refusal; the other two may have started, and one retry of
	// a refusal while those four were in flight.
	if refused < 2 || refused > 4 || attempts > 5 {
		t.Errorf("%d attempts, %d refused, want the launching stopped after 2 refusals", attempts, refused)
	}
	for id, ts := range runstate.Replay(evs).Tasks {
		if ts.Status == runstate.StatusFailed || ts.TaskFailures > 0 {
			t.Errorf("%s: %s with %d task failures; the refusal is not the task's", id, ts.Status, ts.TaskFailures)
		}
	}
}

// TestRushDeliversWithAnUnseenBeta: the CLI sends a beta no release of
// zerg has seen (ANTHROPIC_BETAS through env.pass): the demo still
// delivers 7 of 7, the beta reaches the API, and the gateway audits it as
// unreviewed; the rush says so at its start. (In container mode too: make
// test runs this file's suites again there.)
func TestRushDeliversWithAnUnseenBeta(t *testing.T) {
	t.Parallel()
	p := newProject(t, nil)
	p.setConfig("env:\n  pass: [ANTHROPIC_BETAS]\n")
	r := p.zergEnv(append(p.env(), "ANTHROPIC_BETAS="+unseenBeta), "rush", "demo", "--rehearse")
	if r.code != 0 || !strings.Contains(r.stdout, "tasks: 7 of 7 merged") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "beta "+unseenBeta) || !strings.Contains(r.stderr, "forwarded and audited") {
		t.Errorf("the rush does not name the unreviewed beta:\n%s", r.stderr)
	}
	sent := 0
	for _, m := range mockRequestHeaders(t, filepath.Join(p.dir, ".zerg", "runs", "demo")) {
		if strings.Contains(m, unseenBeta) {
			sent++
		}
	}
	if sent == 0 {
		t.Error("the beta never reached the API")
	}
	audit, err := os.ReadFile(filepath.Join(p.dir, ".zerg", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	unreviewed := 0
	for _, e := range auditRecords(t, audit) {
		if e.Type == "gateway_unreviewed" && e.Data["name"] == "beta "+unseenBeta {
			unreviewed++
		}
		if e.Type == "gateway_refused" {
			t.Errorf("refused: %v", e.Data)
		}
	}
	if unreviewed < 7 {
		t.Errorf("%d attempts audited the unreviewed beta, want every one of the 7", unreviewed)
	}
}

// mockRequestHeaders is the anthropic-beta header of each request in the
// scripted API's request log of a rehearsal.
func mockRequestHeaders(t *testing.T, runDir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(runDir, "mockapi.jsonl"))
	if err != nil {
		t.Fatalf("the scripted API's request log: %v", err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r struct {
			Headers map[string][]string `json:"headers"`
		}
		if json.Unmarshal([]byte(line), &r) == nil {
			out = append(out, strings.Join(r.Headers["Anthropic-Beta"], ","))
		}
	}
	return out
}
