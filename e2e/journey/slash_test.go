package journey

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/e2e/e2ebin"
)

// slashScenario scripts both sessions of /zerg:plan: the Claude Code session
// the user types the command in (matched by a line of the installed
// plan.md), which first tries two things its allowed-tools do not grant,
// then writes the idea and runs zerg plan --from it; and the session zerg
// plan itself starts ("Plan myfeature:"), which writes the requirements.
const slashScenario = `tasks:
  - name: slash-plan
    match: "zerg plan asks its questions on a terminal"
    turns:
      - tools:
          - {name: Write, input: {file_path: notes.md, content: "not allowed\n"}}
          - {name: Bash, input: {command: "touch not-allowed.txt"}}
          - {name: Write, input: {file_path: .zerg/specs/myfeature/idea.md, content: %s}}
      - tools: [{name: Bash, input: {command: "zerg plan myfeature --rehearse --from .zerg/specs/myfeature/idea.md"}}]
      - text: "zerg wrote .zerg/specs/myfeature/requirements.md."
  - name: plan
    match: "Plan myfeature:"
    turns:
      - tools: [{name: Write, input: {file_path: .zerg-draft/requirements.md, content: %s}}]
      - text: "Wrote the requirements."
`

const (
	slashIdea = "Greet each name of data/names.txt, for the ops team; done when tests/run.sh passes. Out of scope: translations.\n"
	slashReq  = "# myfeature\n\nGreet each name.\n\n## Open questions\n\n- Should an empty file print nothing?\n"
)

// slashProject is an empty repository after a real zerg init: the slash
// commands installed, committed, and the scenario for both sessions.
func slashProject(t *testing.T) *project {
	t.Helper()
	tmp := e2ebin.Traversable(t, t.TempDir())
	p := &project{t: t, dir: filepath.Join(tmp, "repo"), home: filepath.Join(tmp, "home"), tmp: tmp}
	for _, d := range []string{p.home, filepath.Join(p.dir, ".zerg")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(p.dir, ".zerg", "config.yaml"), []byte("security_rules:\n  enabled: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, "README.md"), []byte("A project.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("init", "-q", "-b", "main")
	if r := p.zerg("init"); r.code != 0 {
		t.Fatalf("zerg init: %s", r)
	}
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "zerg init")
	spec := filepath.Join(p.dir, ".zerg", "specs", "myfeature")
	if err := os.MkdirAll(spec, 0o755); err != nil {
		t.Fatal(err)
	}
	scenario := fmt.Sprintf(slashScenario, yamlString(t, slashIdea), yamlString(t, slashReq))
	if err := os.WriteFile(filepath.Join(spec, "scenario.yaml"), []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// mockAPI starts zerg mockapi serve with the scenario and returns its URL.
func (p *project) mockAPI(scenario string) string {
	p.t.Helper()
	cmd := exec.Command(zergBin, "mockapi", "serve", "--scenario", scenario)
	cmd.Dir = p.dir
	cmd.Env = p.env()
	out, err := cmd.StdoutPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		p.t.Fatalf("zerg mockapi serve: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(line)
}

// claudeEvents runs the real pinned CLI in the project, as a user of
// Claude Code would with `claude -p PROMPT`, against the scripted API, and
// returns its stream-json events.
func (p *project) claudeEvents(url, prompt string) []map[string]any {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claudeBin, "-p", prompt, "--output-format", "stream-json", "--verbose")
	cmd.Dir = p.dir
	// zerg (the model's Bash runs it) is on PATH, as for a user.
	cmd.Env = append(p.env(), "PATH="+filepath.Dir(zergBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ANTHROPIC_BASE_URL="+url, "ANTHROPIC_API_KEY=sk-test", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Run(); err != nil {
		p.t.Fatalf("claude -p %q: %v\n%s\n%s", prompt, err, so.String(), se.String())
	}
	var events []map[string]any
	for _, line := range strings.Split(so.String(), "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil {
			events = append(events, ev)
		}
	}
	return events
}

// denials are the permission_denials of the result event: "Tool input".
func denials(t *testing.T, events []map[string]any) []string {
	t.Helper()
	for _, ev := range events {
		if ev["type"] != "result" {
			continue
		}
		var out []string
		ds, _ := ev["permission_denials"].([]any)
		for _, d := range ds {
			m, _ := d.(map[string]any)
			in, _ := m["tool_input"].(map[string]any)
			arg, _ := in["command"].(string)
			if fp, ok := in["file_path"].(string); ok {
				arg = fp
			}
			out = append(out, fmt.Sprintf("%v %s", m["tool_name"], arg))
		}
		return out
	}
	t.Fatalf("no result event in %d events", len(events))
	return nil
}

// toolResults are the texts of the tool results the CLI sent back.
func toolResults(events []map[string]any) string {
	var b strings.Builder
	for _, ev := range events {
		if ev["type"] != "user" {
			continue
		}
		msg, _ := ev["message"].(map[string]any)
		parts, _ := msg["content"].([]any)
		for _, part := range parts {
			m, _ := part.(map[string]any)
			if s, ok := m["content"].(string); ok {
				b.WriteString(s + "\n")
			}
		}
	}
	return b.String()
}

// TestSlashPlanThroughClaude: /zerg:plan (and /z:plan) typed into the real
// Claude Code CLI with no terminal (claude -p), the model scripted: the
// session writes the idea file and runs zerg plan --from it under the
// command's own allowed-tools, and requirements.md is written. What the
// allowed-tools do not grant (a write elsewhere, another command) is
// denied. The control removes the Edit rule from the installed plan.md: the
// idea cannot be written, and no requirements.md appears.
func TestSlashPlanThroughClaude(t *testing.T) {
	for _, tc := range []struct {
		name, prompt string
		dropEdit     bool
	}{
		{"zerg-plan", "/zerg:plan myfeature --rehearse", false},
		{"z-plan", "/z:plan myfeature --rehearse", false},
		{"control-without-the-edit-rule", "/zerg:plan myfeature --rehearse", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := slashProject(t)
			if tc.dropEdit {
				f := filepath.Join(p.dir, ".claude", "commands", "zerg", "plan.md")
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				cut := strings.Replace(string(b), " Edit(.zerg/specs/*/idea.md),", "", 1)
				if cut == string(b) {
					t.Fatalf("plan.md has no Edit(.zerg/specs/*/idea.md) rule:\n%s", b)
				}
				if err := os.WriteFile(f, []byte(cut), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			url := p.mockAPI(filepath.Join(p.dir, ".zerg", "specs", "myfeature", "scenario.yaml"))
			events := p.claudeEvents(url, tc.prompt)
			denied := strings.Join(denials(t, events), "\n")
			results := toolResults(events)
			for _, gone := range []string{"notes.md", "not-allowed.txt"} {
				if _, err := os.Stat(filepath.Join(p.dir, gone)); err == nil {
					t.Errorf("%s was written: allowed-tools grant more than the command needs", gone)
				}
			}
			for _, want := range []string{"Write " + filepath.Join(p.dir, "notes.md"), "Bash touch not-allowed.txt"} {
				if !strings.Contains(denied, want) {
					t.Errorf("not denied: %s; denials:\n%s", want, denied)
				}
			}
			idea := filepath.Join(p.dir, ".zerg", "specs", "myfeature", "idea.md")
			req := filepath.Join(p.dir, ".zerg", "specs", "myfeature", "requirements.md")
			if tc.dropEdit {
				if !strings.Contains(denied, "Write "+idea) {
					t.Errorf("control: the idea was not denied; denials:\n%s", denied)
				}
				if _, err := os.Stat(req); err == nil {
					t.Errorf("control: requirements.md was written without the idea")
				}
				return
			}
			if strings.Contains(denied, "idea.md") || strings.Contains(denied, "zerg plan") {
				t.Fatalf("the command's own steps were denied:\n%s\ntool results:\n%s", denied, results)
			}
			if got := p.read(idea); got != slashIdea {
				t.Errorf("idea.md:\n%s", got)
			}
			if got := p.read(req); got != slashReq {
				t.Errorf("requirements.md:\n%s\ntool results:\n%s", got, results)
			}
			if !strings.Contains(results, "wrote .zerg/specs/myfeature/requirements.md") || !strings.Contains(results, "open questions (1):") {
				t.Errorf("zerg plan's report is not in the session:\n%s", results)
			}
		})
	}
}
