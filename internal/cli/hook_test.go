package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/policy"
	"github.com/zergrush/zerg/internal/policy/bash"
)

type panicReader struct{}

func (panicReader) Read([]byte) (int, error) { panic("boom") }

func TestHookPreToolUse(t *testing.T) {
	ws := t.TempDir()
	policyFile := filepath.Join(t.TempDir(), "policy.json")
	if err := policy.Write(policyFile, &policy.Policy{Version: policy.Version, Workspace: ws, Allow: []string{"src/**"}, Bash: bash.Policy{Allow: bash.DefaultAllow()}}); err != nil {
		t.Fatal(err)
	}
	tool := func(name string, in map[string]any) string {
		b, _ := json.Marshal(map[string]any{"session_id": "s", "cwd": ws, "hook_event_name": "PreToolUse", "tool_name": name, "tool_input": in, "tool_use_id": "toolu_2"})
		return string(b)
	}
	input := func(path string) string {
		b, _ := json.Marshal(map[string]any{
			"session_id": "s", "cwd": ws, "hook_event_name": "PreToolUse", "tool_name": "Write",
			"tool_input": map[string]any{"file_path": path, "content": "x"}, "tool_use_id": "toolu_1",
		})
		return string(b)
	}
	cases := []struct {
		name   string
		args   []string
		stdin  io.Reader
		code   int
		stderr string
	}{
		{"allowed", []string{"--policy", policyFile}, strings.NewReader(input("src/a.go")), 0, ""},
		{"outside", []string{"--policy", policyFile}, strings.NewReader(input("/etc/passwd")), 2, "/etc/passwd"},
		{"not allowed", []string{"--policy", policyFile}, strings.NewReader(input("main.go")), 2, "main.go"},
		{"bad json", []string{"--policy", policyFile}, strings.NewReader("{"), 2, "parse hook input"},
		{"empty stdin", []string{"--policy", policyFile}, strings.NewReader(""), 2, "denied"},
		{"missing policy file", []string{"--policy", filepath.Join(ws, "nope.json")}, strings.NewReader(input("src/a.go")), 2, "read policy"},
		{"no policy flag", nil, strings.NewReader(input("src/a.go")), 2, "no --policy"},
		{"unknown flag", []string{"--nope"}, strings.NewReader(input("src/a.go")), 2, "unknown flag"},
		{"panic", []string{"--policy", policyFile}, panicReader{}, 2, "internal error: boom"},
		{"read inside", []string{"--policy", policyFile}, strings.NewReader(tool("Read", map[string]any{"file_path": "src/a.go"})), 0, ""},
		{"read outside", []string{"--policy", policyFile}, strings.NewReader(tool("Read", map[string]any{"file_path": "/etc/shadow"})), 2, "/etc/shadow"},
		{"grep outside", []string{"--policy", policyFile}, strings.NewReader(tool("Grep", map[string]any{"pattern": "x", "path": "/root"})), 2, "outside the workspace"},
		{"bash curl", []string{"--policy", policyFile}, strings.NewReader(tool("Bash", map[string]any{"command": "curl http://x"})), 2, "network access"},
		{"bash ls", []string{"--policy", policyFile}, strings.NewReader(tool("Bash", map[string]any{"command": "ls -la"})), 0, ""},
		{"unknown tool", []string{"--policy", policyFile}, strings.NewReader(tool("WebFetch", map[string]any{"url": "http://x"})), 2, "not a tool"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := hookStdin
			hookStdin = tc.stdin
			defer func() { hookStdin = old }()
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), append([]string{"hook", "pre-tool-use"}, tc.args...), &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, stderr.String())
			}
			// An allow is explicit JSON, so the policy (not the CLI's own
			// prompts) decides; a deny prints nothing on stdout.
			if tc.code == 0 && !strings.Contains(stdout.String(), `"permissionDecision":"allow"`) {
				t.Fatalf("stdout %q, want an allow decision", stdout.String())
			}
			if tc.code != 0 && stdout.Len() != 0 {
				t.Fatalf("stdout %q, want nothing", stdout.String())
			}
			if tc.code == 0 && stderr.Len() != 0 {
				t.Fatalf("stderr %q on allow", stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Fatalf("stderr %q does not contain %q", stderr.String(), tc.stderr)
			}
			if tc.code != 0 && strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
				t.Fatalf("deny reason is not one line: %q", stderr.String())
			}
		})
	}
}

// A policy file that cannot be read must deny even when the workspace is
// wide open: fail closed.
func TestHookPolicyUnreadable(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(policy, []byte(`{"version":1,"workspace":"relative","allow":["**"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	old := hookStdin
	hookStdin = strings.NewReader(`{"cwd":"/","tool_name":"Write","tool_input":{"file_path":"/x"}}`)
	defer func() { hookStdin = old }()
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"hook", "pre-tool-use", "--policy", policy}, &stdout, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
}
