package policy

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func hookInput(t testing.TB, cwd, tool string, input map[string]any) *HookInput {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	return &HookInput{Cwd: cwd, HookEventName: "PreToolUse", ToolName: tool, ToolInput: raw, ToolUseID: "toolu_1"}
}

func TestDecide(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{ws, outside, filepath.Join(ws, "src", "pkg"), filepath.Join(ws, "docs"), filepath.Join(ws, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Symlinks that escape: a directory pointing outside, a file pointing
	// outside, a directory pointing to a non-allowed part of the workspace,
	// and a dangling link.
	mustSymlink(t, outside, filepath.Join(ws, "src", "escape"))
	if err := os.WriteFile(filepath.Join(outside, "victim.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join(outside, "victim.txt"), filepath.Join(ws, "src", "victim.txt"))
	mustSymlink(t, filepath.Join(ws, "secret"), filepath.Join(ws, "src", "tosecret"))
	if err := os.MkdirAll(filepath.Join(ws, "secret"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join(root, "nowhere", "x"), filepath.Join(ws, "src", "dangling"))

	p := &Policy{Version: Version, Workspace: ws, Allow: []string{"src/**", "README.md", "docs/*.md", "gen/"}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		cwd   string
		tool  string
		input map[string]any
		allow bool
		want  string // substring of the reason
	}{
		{"absolute inside allowed glob", ws, "Write", map[string]any{"file_path": filepath.Join(ws, "src", "a.go")}, true, "allowed"},
		{"deep glob, new dirs", ws, "Write", map[string]any{"file_path": filepath.Join(ws, "src", "new", "deep", "b.go")}, true, "allowed"},
		{"relative to cwd", ws, "Write", map[string]any{"file_path": "README.md"}, true, "allowed"},
		{"relative to a subdir cwd", filepath.Join(ws, "src"), "Edit", map[string]any{"file_path": "pkg/c.go", "old_string": "a", "new_string": "b"}, true, "allowed"},
		{"single-star glob", ws, "Write", map[string]any{"file_path": "docs/guide.md"}, true, "allowed"},
		{"single-star does not cross dirs", ws, "Write", map[string]any{"file_path": "docs/sub/guide.md"}, false, "not in the paths"},
		{"directory pattern", ws, "Write", map[string]any{"file_path": "gen/x/y.txt"}, true, "allowed"},
		{"not allowed inside workspace", ws, "Write", map[string]any{"file_path": filepath.Join(ws, "main.go")}, false, "main.go: not in the paths"},
		{"absolute outside", ws, "Write", map[string]any{"file_path": "/etc/passwd"}, false, "outside the workspace"},
		{"dotdot escape", ws, "Write", map[string]any{"file_path": "src/../../outside/x.txt"}, false, "outside the workspace"},
		{"dotdot staying inside but not allowed", ws, "Write", map[string]any{"file_path": "src/../main.go"}, false, "not in the paths"},
		{"dotdot staying inside and allowed", ws, "Write", map[string]any{"file_path": "src/pkg/../d.go"}, true, "allowed"},
		{"symlinked dir escapes", ws, "Write", map[string]any{"file_path": filepath.Join(ws, "src", "escape", "x.txt")}, false, "outside the workspace"},
		{"symlinked file escapes", ws, "Edit", map[string]any{"file_path": "src/victim.txt"}, false, "outside the workspace"},
		{"symlink to a non-allowed part", ws, "Write", map[string]any{"file_path": "src/tosecret/k.txt"}, false, "secret/k.txt: not in the paths"},
		{"dangling symlink", ws, "Write", map[string]any{"file_path": "src/dangling"}, false, "resolve"},
		{"workspace itself", ws, "Write", map[string]any{"file_path": ws}, false, "outside the workspace"},
		{"sibling with workspace prefix", ws, "Write", map[string]any{"file_path": ws + "2/src/a.go"}, false, "outside the workspace"},
		{"inside .git", ws, "Write", map[string]any{"file_path": ".git/hooks/pre-commit"}, false, "inside .git"},
		{"nested .git even when allowed", ws, "Write", map[string]any{"file_path": "src/.git/config"}, false, "inside .git"},
		{"notebook path", ws, "NotebookEdit", map[string]any{"notebook_path": "src/n.ipynb", "new_source": "x"}, true, "allowed"},
		{"notebook outside", ws, "NotebookEdit", map[string]any{"notebook_path": "/tmp/n.ipynb"}, false, "outside"},
		{"missing path", ws, "Write", map[string]any{"content": "x"}, false, "no file_path"},
		{"path of wrong type", ws, "Write", map[string]any{"file_path": 42}, false, "no file_path"},
		{"relative path, relative cwd", "ws", "Write", map[string]any{"file_path": "src/a.go"}, false, "no absolute cwd"},
		{"relative path, no cwd", "", "Write", map[string]any{"file_path": "src/a.go"}, false, "no absolute cwd"},
		{"read outside", ws, "Read", map[string]any{"file_path": "/etc/passwd"}, false, "outside the workspace"},
		{"unknown tool", ws, "WebFetch", map[string]any{"url": "http://x"}, false, "not a tool workers may use"},
		{"claude settings", ws, "Write", map[string]any{"file_path": ".claude/settings.local.json"}, false, "Claude Code settings"},
		{"zerg state", ws, "Write", map[string]any{"file_path": "src/.zerg/x"}, false, "inside .zerg"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := p.Decide(hookInput(t, tc.cwd, tc.tool, tc.input))
			if d.Allow != tc.allow {
				t.Fatalf("allow = %v, want %v (reason %q)", d.Allow, tc.allow, d.Reason)
			}
			if !strings.Contains(d.Reason, tc.want) {
				t.Fatalf("reason %q does not contain %q", d.Reason, tc.want)
			}
			if strings.Contains(d.Reason, "\n") {
				t.Fatalf("reason is not one line: %q", d.Reason)
			}
		})
	}
}

func TestDecideBadToolInput(t *testing.T) {
	p := &Policy{Version: Version, Workspace: t.TempDir(), Allow: []string{"**"}}
	d := p.Decide(&HookInput{Cwd: p.Workspace, ToolName: "Write", ToolInput: json.RawMessage(`"not an object"`)})
	if d.Allow {
		t.Fatal("unreadable tool_input was allowed")
	}
}

func TestDecideMissingWorkspace(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "gone")
	p := &Policy{Version: Version, Workspace: ws, Allow: []string{"**"}}
	d := p.Decide(hookInput(t, "/", "Write", map[string]any{"file_path": filepath.Join(ws, "a")}))
	if d.Allow {
		t.Fatal("write into a missing workspace was allowed")
	}
}

func TestValidate(t *testing.T) {
	ws := t.TempDir()
	cases := []struct {
		name string
		p    Policy
		ok   bool
	}{
		{"ok", Policy{Version: Version, Workspace: ws, Allow: []string{"a/**", "b.txt", "c/"}}, true},
		{"no allow is valid and denies all", Policy{Version: Version, Workspace: ws}, true},
		{"wrong version", Policy{Version: 1, Workspace: ws}, false},
		{"relative workspace", Policy{Version: Version, Workspace: "ws"}, false},
		{"absolute pattern", Policy{Version: Version, Workspace: ws, Allow: []string{"/etc/**"}}, false},
		{"dotdot pattern", Policy{Version: Version, Workspace: ws, Allow: []string{"a/../../b"}}, false},
		{"empty pattern", Policy{Version: Version, Workspace: ws, Allow: []string{" "}}, false},
		{"bad glob", Policy{Version: Version, Workspace: ws, Allow: []string{"a/[b"}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrBad) {
				t.Fatalf("error %v is not ErrBad", err)
			}
		})
	}
}

func TestPolicyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.json")
	want := &Policy{Version: Version, Workspace: dir, Allow: []string{"x/**"}}
	if err := Write(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Workspace != want.Workspace || len(got.Allow) != 1 || got.Allow[0] != "x/**" {
		t.Fatalf("round trip: got %+v", got)
	}
	// Unknown fields are refused: a policy we do not fully understand must not
	// be enforced partially.
	if err := os.WriteFile(path, []byte(`{"version":1,"workspace":"/w","allow":[],"deny":["x"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil {
		t.Fatal("policy with unknown field loaded")
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("missing policy loaded")
	}
}

func TestReadHookInput(t *testing.T) {
	// A real PreToolUse stdin (claude-cli.md §7.1).
	captured := `{"session_id":"91792bfd-0000-4000-8000-000000000000","transcript_path":"/h/.claude/projects/-w/91792bfd.jsonl","cwd":"/w","prompt_id":"061c29f0","permission_mode":"acceptEdits","effort":{"level":"high"},"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/w/denied.txt","content":"hi from fake\n"},"tool_use_id":"toolu_fake0001"}`
	in, err := ReadHookInput(strings.NewReader(captured))
	if err != nil {
		t.Fatal(err)
	}
	if in.ToolName != "Write" || in.Cwd != "/w" || in.ToolUseID != "toolu_fake0001" {
		t.Fatalf("parsed %+v", in)
	}
	for _, bad := range []string{"", "{", "[]", `{"cwd":"/w"}`, "null"} {
		if _, err := ReadHookInput(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadHookInput(%q) accepted", bad)
		}
	}
}

func mustSymlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestDotDotAfterSymlink: "link/.." is the parent of the link's target for
// the kernel, not the directory holding the link; the Read, Write and search
// checks judge both that and the lexical reading (a CLI may clean the path
// first). Bash has its own cases in TestBashSymlinkRepoint.
func TestDotDotAfterSymlink(t *testing.T) {
	ws, _, p := confineFixture(t)
	p.Allow = []string{"**"}
	// ws/sub/outside/id_rsa does not exist; the kernel reads
	// <root>/outside/id_rsa through sub/out.
	escape := "sub/out/../outside/id_rsa"
	for _, tc := range []struct {
		tool  string
		input map[string]any
	}{
		{"Read", map[string]any{"file_path": escape}},
		{"Read", map[string]any{"file_path": ws + "/" + escape}},
		{"Write", map[string]any{"file_path": "sub/out/../outside/new", "content": "x"}},
		{"Edit", map[string]any{"file_path": escape, "old_string": "a", "new_string": "b"}},
		{"Grep", map[string]any{"pattern": "SECRET", "path": "sub/out/.."}},
	} {
		d := p.Decide(hookInput(t, ws, tc.tool, tc.input))
		if d.Allow || !strings.Contains(d.Reason, "outside") {
			t.Errorf("%s %v: allow %v, reason %q", tc.tool, tc.input, d.Allow, d.Reason)
		}
	}
	// A ".." after a real directory stays a plain parent.
	if d := p.Decide(hookInput(t, ws, "Read", map[string]any{"file_path": "sub/deep/../../README.md"})); !d.Allow {
		t.Errorf("sub/deep/../../README.md denied: %s", d.Reason)
	}
}

// TestReadToolsInScratch: the read tools may read the worker's scratch
// directory (bash.Policy.Scratch, its TMPDIR: Claude Code writes a
// background task's output there and tells the model to Read it; the
// worker's Bash commands may read and write it anyway), in both modes. The
// rest of the attempt directory (policy, settings, Claude Code's config)
// stays unreadable, a link in scratch is judged by its target, and the
// write tools still write only the task's files.
func TestReadToolsInScratch(t *testing.T) {
	ws, sub, sb := modeFixture(t)
	scratch := mkdirs(t, sub.Bash.Scratch[0])
	attempt := filepath.Dir(scratch)
	task := filepath.Join(scratch, "claude-0", "-ws", "s1", "tasks", "b1.output")
	mkdirs(t, filepath.Dir(task))
	mkdirs(t, filepath.Join(attempt, "config"))
	for _, f := range []string{task, filepath.Join(attempt, "policy.json"), filepath.Join(attempt, "config", ".claude.json")} {
		if err := os.WriteFile(f, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustSymlink(t, "/etc/passwd", filepath.Join(scratch, "pw"))
	for _, p := range []*Policy{sub, sb} {
		p.Protected = []string{attempt}
		for _, tc := range []struct {
			tool  string
			input map[string]any
			allow bool
			want  string
		}{
			{"Read", map[string]any{"file_path": task}, true, "in the worker's scratch directory"},
			{"Grep", map[string]any{"pattern": "x", "path": scratch}, true, "in the worker's scratch directory"},
			{"Glob", map[string]any{"pattern": "**/*.output", "path": scratch}, true, "in the worker's scratch directory"},
			{"Read", map[string]any{"file_path": "README.md"}, true, "inside the workspace"},
			// the twins
			{"Read", map[string]any{"file_path": filepath.Join(attempt, "policy.json")}, false, "outside the workspace"},
			{"Read", map[string]any{"file_path": filepath.Join(scratch, "..", "policy.json")}, false, "outside the workspace"},
			{"Read", map[string]any{"file_path": filepath.Join(attempt, "config", ".claude.json")}, false, "outside the workspace"},
			{"Read", map[string]any{"file_path": filepath.Join(scratch, "pw")}, false, "outside the workspace"},
			{"Grep", map[string]any{"pattern": "x", "path": attempt}, false, "outside the workspace"},
			{"Write", map[string]any{"file_path": task}, false, "a protected file"},
			{"Edit", map[string]any{"file_path": filepath.Join(scratch, "new.txt")}, false, "a protected file"},
		} {
			d := p.Decide(hookInput(t, ws, tc.tool, tc.input))
			if d.Allow != tc.allow || !strings.Contains(d.Reason, tc.want) {
				t.Errorf("sandboxed=%v %s %v: allow=%v %q, want %v %q", p.Bash.Sandboxed, tc.tool, tc.input, d.Allow, d.Reason, tc.allow, tc.want)
			}
		}
	}
}
