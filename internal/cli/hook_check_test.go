package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/run"
)

// hookCheckFixture is a workspace and a graph whose task T1 owns src/a.go
// and the docs/ directory and is verified by `go test ./...`.
func hookCheckFixture(t *testing.T) (ws, graph string) {
	t.Helper()
	ws = t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	graph = filepath.Join(t.TempDir(), "task-graph.json")
	g := `{"feature":"f","tasks":[
	  {"id":"T1","title":"one","level":1,"files":{"create":["src/a.go","docs/"],"modify":[],"read":[]},"verification":{"command":"go test ./..."}},
	  {"id":"T2","title":"two","level":1,"files":{"create":["src/b.go"],"modify":[],"read":[]},"verification":{"command":"go vet ./..."}}]}`
	if err := os.WriteFile(graph, []byte(g), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws, graph
}

func hookCall(tool string, input map[string]any, cwd string) string {
	m := map[string]any{"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input}
	if cwd != "" {
		m["cwd"] = cwd
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func runHookCheckCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	old := hookStdin
	hookStdin = strings.NewReader(stdin)
	defer func() { hookStdin = old }()
	var out, errb bytes.Buffer
	code = Run(context.Background(), append([]string{"hook", "check"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestHookCheckDecisions(t *testing.T) {
	ws, graph := hookCheckFixture(t)
	calls := strings.Join([]string{
		hookCall("Write", map[string]any{"file_path": "src/a.go", "content": "x"}, ws),
		"",
		hookCall("Write", map[string]any{"file_path": "docs/deep/x.md", "content": "x"}, ws),
		hookCall("Edit", map[string]any{"file_path": "src/b.go", "old_string": "a", "new_string": "b"}, ws),
		hookCall("Bash", map[string]any{"command": "curl -s https://example.com"}, ws),
		hookCall("Bash", map[string]any{"command": "go test ./..."}, ""), // no cwd: the workspace
		hookCall("Read", map[string]any{"file_path": "/etc/passwd"}, ws),
		"not json",
		"   ",
		hookCall("WebFetch", map[string]any{"url": "https://example.com"}, ws),
	}, "\n") // no newline after the last call: it is read all the same
	want := map[string][]string{
		config.ModeSubprocess: {"allow", "allow", "deny", "deny", "allow", "deny", "deny", "deny"},
		// The sandbox is the boundary for commands, but what reaches
		// outside it (curl) is refused in both modes, so the model knows.
		config.ModeSandbox: {"allow", "allow", "deny", "deny", "allow", "deny", "deny", "deny"},
	}
	reasons := []string{"", "", "src/b.go", "curl", "", "/etc/passwd", "parse hook input", "WebFetch"}
	for mode, decisions := range want {
		t.Run(mode, func(t *testing.T) {
			code, stdout, stderr := runHookCheckCLI(t, calls, "--graph", graph, "--task", "T1", "--mode", mode, "--workspace", ws)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			if len(lines) != len(decisions) {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), len(decisions), stdout)
			}
			for i, l := range lines {
				dec, reason, _ := strings.Cut(l, "\t")
				if dec != decisions[i] {
					t.Errorf("call %d: %q, want %s", i+1, l, decisions[i])
				}
				if dec == "allow" && reason != "" {
					t.Errorf("call %d: allow with a reason: %q", i+1, l)
				}
				if dec == "deny" && (!strings.Contains(reason, reasons[i]) || strings.HasPrefix(reason, "denied")) {
					t.Errorf("call %d: reason %q, want one naming %q", i+1, reason, reasons[i])
				}
			}

			// --json: the same decisions, with the tool and every reason.
			code, stdout, _ = runHookCheckCLI(t, calls, "--graph", graph, "--task", "T1", "--mode", mode, "--workspace", ws, "--json")
			if code != 0 {
				t.Fatalf("--json: exit %d", code)
			}
			var tools []string
			for i, l := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
				var got hookCheckLine
				if err := json.Unmarshal([]byte(l), &got); err != nil {
					t.Fatalf("--json line %d %q: %v", i+1, l, err)
				}
				if got.Decision != decisions[i] || got.Reason == "" {
					t.Errorf("--json line %d: %+v, want %s with a reason", i+1, got, decisions[i])
				}
				tools = append(tools, got.Tool)
			}
			if wantTools := []string{"Write", "Write", "Edit", "Bash", "Bash", "Read", "", "WebFetch"}; !slices.Equal(tools, wantTools) {
				t.Errorf("--json tools %q, want %q", tools, wantTools)
			}
		})
	}
}

// The defaults: sandbox mode, the current directory as the workspace.
func TestHookCheckDefaults(t *testing.T) {
	ws, graph := hookCheckFixture(t)
	t.Chdir(ws)
	// python3 -c is no rule of subprocess mode: allowed, it is sandbox mode.
	in := hookCall("Bash", map[string]any{"command": "python3 -c 'print(1)'"}, ws) + "\n" +
		hookCall("Write", map[string]any{"file_path": filepath.Join(ws, "src/a.go"), "content": "x"}, ws) + "\n"
	code, stdout, stderr := runHookCheckCLI(t, in, "--graph", graph, "--task", "T1")
	if code != 0 || stdout != "allow\nallow\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want two allows (sandbox mode, workspace = cwd)", code, stdout, stderr)
	}
	// A relative --workspace is taken from the current directory.
	t.Chdir(filepath.Dir(ws))
	code, stdout, stderr = runHookCheckCLI(t, in, "--graph", graph, "--task", "T1", "--workspace", filepath.Base(ws))
	if code != 0 || stdout != "allow\nallow\n" {
		t.Fatalf("relative --workspace: exit %d, stdout %q, stderr %q; want two allows", code, stdout, stderr)
	}
}

// What hook check prints is what pre-tool-use enforces with the policy an
// attempt of the task gets.
func TestHookCheckMatchesPreToolUse(t *testing.T) {
	ws, graph := hookCheckFixture(t)
	r, err := run.LoadGraph(graph, run.GraphLoad{})
	if err != nil {
		t.Fatal(err)
	}
	task := r.Graph.Task("T2")
	zerg, err := claude.ZergBinary()
	if err != nil {
		t.Fatal(err)
	}
	calls := []string{
		hookCall("Write", map[string]any{"file_path": "src/b.go", "content": "x"}, ws),
		hookCall("Write", map[string]any{"file_path": "src/a.go", "content": "x"}, ws),
		hookCall("Bash", map[string]any{"command": "go vet ./..."}, ws),
		hookCall("Bash", map[string]any{"command": "go test ./..."}, ws),
		hookCall("Bash", map[string]any{"command": "git push"}, ws),
		hookCall("Grep", map[string]any{"pattern": "x", "path": "/root"}, ws),
		hookCall("TodoWrite", map[string]any{"todos": []any{}}, ws),
	}
	for _, mode := range config.Modes {
		if mode == config.ModeTasks {
			continue // no worker hook: the session's own (TestHookCheckUsageErrors)
		}
		att := filepath.Join(t.TempDir(), "attempt")
		if err := os.Mkdir(att, 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := attempt.CheckPolicy(config.Default(), mode, task, ws, att, zerg); err != nil {
			t.Fatal(err)
		}
		_, checked, _ := runHookCheckCLI(t, strings.Join(calls, "\n"), "--graph", graph, "--task", "T2", "--mode", mode, "--workspace", ws)
		lines := strings.Split(strings.TrimSuffix(checked, "\n"), "\n")
		if len(lines) != len(calls) {
			t.Fatalf("%s: %d decisions for %d calls", mode, len(lines), len(calls))
		}
		var allows, denies int
		for i, c := range calls {
			old := hookStdin
			hookStdin = strings.NewReader(c)
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), []string{"hook", "pre-tool-use", "--policy", filepath.Join(att, "policy.json")}, &stdout, &stderr)
			hookStdin = old
			dec, reason, _ := strings.Cut(lines[i], "\t")
			switch {
			case code == 0 && dec == "allow":
				allows++
			case code == 2 && dec == "deny" && strings.TrimSpace(stderr.String()) == "denied: "+reason:
				denies++
			default:
				t.Errorf("%s call %d: pre-tool-use exit %d %q, check %q", mode, i+1, code, stderr.String(), lines[i])
			}
		}
		if allows == 0 || denies == 0 {
			t.Errorf("%s: %d allows, %d denies; the calls should show both", mode, allows, denies)
		}
	}
}

// hook check reads the project's config the way zerg rush does: the
// .zerg/config.yaml of the repository the graph is in, or --config; its
// worker_policy, toolchains.off and mode shape the policy.
func TestHookCheckConfig(t *testing.T) {
	repo := t.TempDir()
	for _, d := range []string{".git", ".zerg", "src"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for f, body := range map[string]string{
		"go.mod":            "module x\n",
		"mise.toml":         "[tasks.test]\nrun = 'go test ./...'\n",
		"Makefile":          "all:\n",
		"task-graph.json":   `{"feature":"f","tasks":[{"id":"T1","title":"one","level":1,"files":{"create":["src/a.go"],"modify":[],"read":[]},"verification":{"command":"go test ./..."}}]}`,
		".zerg/config.yaml": "version: 1\nmode: subprocess\nworker_policy:\n  allow_commands: [bd]\n  deny_commands: [make, gofmt]\ntoolchains:\n  off: [mise]\n",
	} {
		if err := os.WriteFile(filepath.Join(repo, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	graph := filepath.Join(repo, "task-graph.json")
	calls := strings.Join([]string{
		hookCall("Bash", map[string]any{"command": "bd show x-1"}, repo),   // allow_commands
		hookCall("Bash", map[string]any{"command": "make all"}, repo),      // deny_commands beats the make toolchain
		hookCall("Bash", map[string]any{"command": "gofmt -l src"}, repo),  // deny_commands beats the verification's toolchain
		hookCall("Bash", map[string]any{"command": "mise run test"}, repo), // toolchains.off
		hookCall("Bash", map[string]any{"command": "go vet ./..."}, repo),  // the go toolchain
		hookCall("Bash", map[string]any{"command": "bd sync"}, repo),       // allowed bd still cannot reach outside
		hookCall("Bash", map[string]any{"command": "python3 -c 1"}, repo),  // no rule (and subprocess mode, from the config)
	}, "\n")
	code, stdout, stderr := runHookCheckCLI(t, calls, "--graph", graph, "--task", "T1", "--workspace", repo)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		dec, _, _ := strings.Cut(l, "\t")
		got = append(got, dec)
	}
	want := []string{"allow", "deny", "deny", "deny", "allow", "deny", "deny"}
	if !slices.Equal(got, want) {
		t.Fatalf("decisions %q, want %q:\n%s", got, want, stdout)
	}
	if !strings.Contains(stdout, "worker_policy.deny_commands") || !strings.Contains(stdout, "bd sync is not allowed") {
		t.Errorf("reasons should name the deny list and what bd sync reaches:\n%s", stdout)
	}

	// --mode wins over the config's; deny_commands hold in sandbox mode too.
	code, stdout, _ = runHookCheckCLI(t, calls, "--graph", graph, "--task", "T1", "--workspace", repo, "--mode", "sandbox")
	if code != 0 || !strings.HasPrefix(stdout, "allow\ndeny\tBash `make all`: make is not allowed (worker_policy.deny_commands)\n") {
		t.Fatalf("sandbox mode: exit %d\n%s", code, stdout)
	}
	if lines := strings.Split(stdout, "\n"); lines[6] != "allow" {
		t.Errorf("sandbox mode allows python3 (the sandbox bounds it): %q", lines[6])
	}

	// --config names another file; relative to the current directory.
	other := filepath.Join(repo, "other.yaml")
	if err := os.WriteFile(other, []byte("version: 1\nmode: subprocess\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(repo)
	_, stdout, _ = runHookCheckCLI(t, calls, "--graph", graph, "--task", "T1", "--workspace", repo, "--config", "other.yaml")
	if !strings.HasPrefix(stdout, "deny\tBash `bd show x-1`: bd show is not an allowed command\nallow\nallow\nallow\n") {
		t.Errorf("--config other.yaml: the defaults' worker_policy and toolchains:\n%s", stdout)
	}
	code, _, stderr = runHookCheckCLI(t, calls, "--graph", graph, "--task", "T1", "--workspace", repo, "--config", "nope.yaml")
	if code != ExitUsage || !strings.Contains(stderr, "nope.yaml") {
		t.Errorf("missing --config: exit %d, stderr %q", code, stderr)
	}
}

func TestHookCheckUsageErrors(t *testing.T) {
	ws, graph := hookCheckFixture(t)
	invalid := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(invalid, []byte(`{"feature":"f","tasks":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A task owning a protected path never starts an attempt: hook check
	// loads the graph as rush does (before, without the protected paths).
	protected := filepath.Join(t.TempDir(), "protected.json")
	if err := os.WriteFile(protected, []byte(`{"feature":"f","tasks":[{"id":"T1","title":"one","level":1,"files":{"create":[".github/workflows/ci.yml"]}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(ws, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no graph", []string{"--task", "T1"}, "needs --graph"},
		{"no task", []string{"--graph", graph}, "needs --task"},
		{"bad mode", []string{"--graph", graph, "--task", "T1", "--mode", "tasks"}, "--mode tasks"},
		{"unknown task", []string{"--graph", graph, "--task", "T9"}, `no task "T9" (its tasks: T1, T2)`},
		{"missing graph", []string{"--graph", filepath.Join(ws, "nope.json"), "--task", "T1"}, "nope.json"},
		{"invalid graph", []string{"--graph", invalid, "--task", "T1"}, "invalid task graph (1 error"},
		{"graph owning a protected path", []string{"--graph", protected, "--task", "T1"}, `is protected by ".github/workflows/**"`},
		{"missing workspace", []string{"--graph", graph, "--task", "T1", "--workspace", filepath.Join(ws, "nope")}, "is not a directory"},
		{"workspace is a file", []string{"--graph", graph, "--task", "T1", "--workspace", notDir}, "is not a directory"},
		{"unknown flag", []string{"--graph", graph, "--task", "T1", "--nope"}, "unknown flag"},
		{"argument", []string{"--graph", graph, "--task", "T1", "extra"}, "unknown command"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runHookCheckCLI(t, hookCall("Read", map[string]any{"file_path": "x"}, ws)+"\n", tc.args...)
			if code != ExitUsage || stdout != "" {
				t.Fatalf("exit %d, stdout %q; want exit 2 and nothing", code, stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("stderr %q, want one line containing %q", stderr, tc.want)
			}
		})
	}
}
