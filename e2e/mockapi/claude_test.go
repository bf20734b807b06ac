// Package mockapi_test holds the end-to-end tests of the scripted Messages
// API (internal/mockapi) with its real client: the pinned Claude Code CLI
// (tools/claude, installed by `make claude`), run as `claude -p`. They need
// no network beyond loopback and take a few seconds each; they live here,
// not in internal/mockapi, so that the unit tier starts no real CLI.
package mockapi_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/mockapi"
)

// repoRoot is the module's root, found from the package directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := fsx.ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// claudeBin finds the pinned CLI: $ZERG_CLAUDE, else
// <repo root>/tools/claude/node_modules/.bin/claude. Missing is a failure,
// not a skip: CI installs it.
func claudeBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("ZERG_CLAUDE"); p != "" {
		return p
	}
	bin := filepath.Join(repoRoot(t), "tools", "claude", "node_modules", ".bin", "claude")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("Claude Code CLI not found at %s: run `make claude` (or set ZERG_CLAUDE)", bin)
	}
	return bin
}

func newUUID(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

type cliRun struct {
	dir       string
	session   string
	events    []map[string]any
	result    map[string]any
	stderr    string
	exitCode  int
	requests  []mockapi.Request
	retries   []map[string]any // system/api_retry events
	assistant []map[string]any
}

// trimmedFlags is the lean worker configuration from claude-cli.md §1.
var trimmedFlags = []string{"--setting-sources", "", "--strict-mcp-config", "--tools", "Bash,Edit,Read,Write"}

// runClaude runs `claude -p` in a fresh directory against srv and returns
// its stream-json events. flags replace trimmedFlags when non-nil.
func runClaude(t *testing.T, srv *mockapi.Server, prompt string, flags []string) cliRun {
	t.Helper()
	bin := claudeBin(t)
	tmp := t.TempDir()
	run := cliRun{dir: filepath.Join(tmp, "work"), session: newUUID(t)}
	if err := os.MkdirAll(run.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if flags == nil {
		flags = trimmedFlags
	}
	args := []string{"-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits",
		"--session-id", run.session}
	args = append(args, flags...)
	// --allowedTools takes several values: "--" stops it from eating the prompt.
	args = append(args, "--allowedTools", "Bash(*)", "--", prompt)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = run.dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + tmp,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(tmp, "cfg"),
		"ANTHROPIC_BASE_URL=" + srv.URL(),
		"ANTHROPIC_API_KEY=test-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CLAUDE_CODE_MAX_RETRIES=2",
		"API_TIMEOUT_MS=5000",
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("claude did not finish in time; stderr: %s", stderr.String())
	}
	if ee, ok := err.(*exec.ExitError); ok {
		run.exitCode = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run claude: %v", err)
	}
	run.stderr = stderr.String()
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("stream-json line is not JSON: %q", sc.Text())
		}
		run.events = append(run.events, ev)
		switch {
		case ev["type"] == "result":
			run.result = ev
		case ev["type"] == "system" && ev["subtype"] == "api_retry":
			run.retries = append(run.retries, ev)
		case ev["type"] == "assistant":
			run.assistant = append(run.assistant, ev)
		}
	}
	if run.result == nil {
		t.Fatalf("no result event (exit %d); stderr: %s; stdout: %s", run.exitCode, run.stderr, stdout.String())
	}
	for _, r := range srv.Requests() {
		if r.SessionID == run.session {
			run.requests = append(run.requests, r)
		}
	}
	return run
}

func (r cliRun) isError() bool { return r.result["is_error"] == true }

func (r cliRun) summary() string {
	var reqs []string
	for _, q := range r.requests {
		reqs = append(reqs, fmt.Sprintf("%s t%d a%d %d %s %s", q.Kind, q.Turn, q.Attempt, q.Status, q.Answer, q.Fault))
	}
	b, _ := json.Marshal(r.result)
	return fmt.Sprintf("result %s\nrequests:\n  %s\nstderr: %s", b, strings.Join(reqs, "\n  "), r.stderr)
}

func loadBasic(t *testing.T) *mockapi.Server {
	t.Helper()
	// The scenario the package's unit tests validate, so both tiers script
	// the same conversations.
	sc, err := mockapi.LoadScenario(filepath.Join(repoRoot(t), "internal", "mockapi", "testdata", "basic.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv := mockapi.NewServer(sc)
	if _, err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("read %s: %v", filepath.Base(path), err)
	}
	return string(b)
}

func TestClaudeWriteReadEditBash(t *testing.T) {
	t.Parallel()
	srv := loadBasic(t)
	run := runClaude(t, srv, "please write, edit and run the greeting", nil)
	if run.isError() || run.exitCode != 0 || run.result["result"] != "All done." {
		t.Fatalf("run failed (exit %d)\n%s", run.exitCode, run.summary())
	}
	if got := readFile(t, filepath.Join(run.dir, "hello.txt")); got != "hello\n" {
		t.Errorf("hello.txt = %q, want the edited %q", got, "hello\n")
	}
	if got := readFile(t, filepath.Join(run.dir, "ran.txt")); got != "ran\n" {
		t.Errorf("ran.txt = %q (Bash did not run)", got)
	}
	// Usage: 4 tool turns at the scenario default (1000 in / 50 out) plus the
	// final turn's own numbers.
	u, _ := run.result["usage"].(map[string]any)
	if u["input_tokens"] != float64(4*1000+4321) || u["output_tokens"] != float64(4*50+123) {
		t.Errorf("result usage %v, want input %d output %d\n%s", u, 4*1000+4321, 4*50+123, run.summary())
	}
	if n := run.result["num_turns"]; n != 5.0 {
		t.Errorf("num_turns %v", n)
	}
	var turns []int
	for _, r := range run.requests {
		if r.Kind == mockapi.KindMain {
			turns = append(turns, r.Turn)
			if r.Task != "write-edit-bash" || r.Fault != "" || !r.APIKey {
				t.Errorf("request %+v", r)
			}
		}
	}
	if fmt.Sprint(turns) != "[1 2 3 4 5]" {
		t.Errorf("main request turns %v\n%s", turns, run.summary())
	}
}

func TestClaudeSurvivesFirst429And500(t *testing.T) {
	t.Parallel()
	srv := loadBasic(t)
	run := runClaude(t, srv, "please survive a 429 and a 500", nil)
	if run.isError() || run.result["result"] != "Survived." {
		t.Fatalf("run failed\n%s", run.summary())
	}
	if got := readFile(t, filepath.Join(run.dir, "survived.txt")); got != "ok\n" {
		t.Errorf("survived.txt = %q", got)
	}
	var statuses []any
	for _, r := range run.retries {
		statuses = append(statuses, r["error_status"])
	}
	if fmt.Sprint(statuses) != "[429 500]" {
		t.Errorf("api_retry statuses %v, want [429 500]\n%s", statuses, run.summary())
	}
	// retry-after: 1 is waited for (2.1.332 says 1011 ms: what it waited).
	if d, _ := run.retries[0]["retry_delay_ms"].(float64); d < 1000 || d > 2000 {
		t.Errorf("first retry delay %v ms, want retry-after's 1 s", run.retries[0]["retry_delay_ms"])
	}
}

func TestClaudeRecoversFromOneMalformedStream(t *testing.T) {
	t.Parallel()
	srv := loadBasic(t)
	run := runClaude(t, srv, "malformed once", nil)
	if run.isError() || run.result["result"] != "Recovered from a bad stream." {
		t.Fatalf("run failed\n%s", run.summary())
	}
	var kinds []string
	for _, r := range run.requests {
		kinds = append(kinds, r.Kind)
	}
	// Retried once: with the non-streaming fallback (2.1.181, 2.1.266) or
	// streaming again (2.1.332).
	if k := fmt.Sprint(kinds); k != "[main fallback]" && k != "[main main]" {
		t.Errorf("request kinds %v, want a main request then one retry\n%s", kinds, run.summary())
	}
}

func TestClaudePersistentFaultEndsInError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		prompt string
		status []any
	}{
		// "Repeated 529 Overloaded errors" carries no status before 2.1.332.
		{"always 529", []any{nil, 529.0}},
		{"always 500", []any{500.0}},
	} {
		t.Run(tc.prompt, func(t *testing.T) {
			t.Parallel()
			srv := loadBasic(t)
			run := runClaude(t, srv, tc.prompt, nil)
			if !run.isError() || !slices.Contains(tc.status, run.result["api_error_status"]) {
				t.Fatalf("want is_error with api_error_status %v\n%s", tc.status, run.summary())
			}
			if !strings.HasPrefix(fmt.Sprint(run.result["result"]), "API Error") {
				t.Errorf("result text %q", run.result["result"])
			}
			if n := len(run.requests); n != 3 { // CLAUDE_CODE_MAX_RETRIES=2 → 3 attempts
				t.Errorf("%d requests, want 3\n%s", n, run.summary())
			}
		})
	}
}

// TestClaudeTrimmedPromptIsSmall measures the first main request with the
// lean worker flags against the CLI's defaults (no --tools): tool schemas
// dominate the prompt, so trimming must cut it to under half (2.1.197: to
// 15 %; 2.1.332: to 35 %, its system prompt is longer and its default tools
// fewer).
func TestClaudeTrimmedPromptIsSmall(t *testing.T) {
	t.Parallel()
	srv := mockapi.NewServer(nil)
	if _, err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	first := func(run cliRun) mockapi.Request {
		for _, r := range run.requests {
			if r.Kind == mockapi.KindMain {
				return r
			}
		}
		t.Fatalf("no main request\n%s", run.summary())
		return mockapi.Request{}
	}
	trimmed := first(runClaude(t, srv, "say done", nil))
	def := first(runClaude(t, srv, "say done", []string{}))
	t.Logf("first main request: trimmed %d bytes ≈ %d tokens (%d tools); default %d bytes ≈ %d tokens (%d tools)",
		trimmed.BodyBytes, trimmed.TokenEstimate, trimmed.Tools, def.BodyBytes, def.TokenEstimate, def.Tools)
	// Four tools (--tools), and 2.1.332's placeholder for deferred tools.
	var named []string
	for _, n := range trimmed.ToolNames {
		if n != "DeferredToolPlaceholder" {
			named = append(named, n)
		}
	}
	if len(named) != 4 {
		t.Errorf("trimmed request has the tools %v, want 4", trimmed.ToolNames)
	}
	if 2*trimmed.BodyBytes >= def.BodyBytes || 2*trimmed.TokenEstimate >= def.TokenEstimate {
		t.Errorf("trimmed request (%d bytes) is not under half the default one (%d bytes)", trimmed.BodyBytes, def.BodyBytes)
	}
}
