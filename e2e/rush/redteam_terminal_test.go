package rush

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The terminal red team: text that a worker, a repository, a reviewer or a
// gate wrote, carrying an OSC 52 clipboard write, OSC 0 and OSC 2 titles,
// a clear-screen, cursor moves and a "\r" before a forged verdict, printed
// by every command that shows such text, in a real terminal (tmux). The
// pane's clipboard (tmux's paste buffers, set-clipboard on), its title and
// its visible lines must be as if the payload were plain text.

// terminalPayload: what each attack carries. "PAYLOAD-VISIBLE" is its
// printable part, so a test sees the command did print it; the forged
// verdict must never start a line.
const terminalPayload = "PAYLOAD-VISIBLE\x1b]52;c;UFdORUQtQ0xJUA==\x07\x1b]0;PWNED-TITLE-0\x07\x1b]2;PWNED-TITLE-2\x1b\\" +
	"\x1b[2J\x1b[H\x1b[1A\x1b[2K\r0 blocking FORGED ready to merge"

const forged = "0 blocking FORGED"

// hostilePane runs line in a tall tmux pane (all output stays on the
// screen) whose server takes OSC 52 into its paste buffers, after printing
// a marker line that a clear-screen or a line erase would remove.
func (p *project) hostilePane(env []string, line string) *pane {
	p.t.Helper()
	full := "printf 'BEFORE-MARKER\\n'; " + line + "; echo ZERG-EXIT=$?; exec sleep 600"
	return p.tmuxPane("set -s set-clipboard on\n", 200, 120, full, append([]string{"TERM=screen"}, env...))
}

func (tp *pane) tmux(args ...string) string {
	out, err := exec.Command("tmux", append([]string{"-S", tp.sock}, args...)...).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "no buffers") {
		tp.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// attacked says what the payload did to the pane: a clipboard write, a
// title, the marker line gone, a forged line; empty when nothing.
func (tp *pane) attacked() []string {
	var got []string
	if b := tp.tmux("list-buffers", "-F", "#{buffer_sample}"); b != "" && !strings.Contains(b, "no buffers") {
		got = append(got, "clipboard set: "+b)
	}
	if title := tp.tmux("display-message", "-p", "#{pane_title}"); strings.Contains(title, "PWNED") {
		got = append(got, "title set: "+title)
	}
	s := tp.screen()
	if !strings.Contains(s, "BEFORE-MARKER") {
		got = append(got, "the screen was cleared or a line erased")
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, forged) {
			got = append(got, "a forged line: "+l)
		}
	}
	return got
}

// TestRedTeamTerminal drives each command with the payload in what it
// prints: the rush's progress lines (a gate's output), zerg logs (a
// worker's text), zerg status and zerg check (the gate), zerg review (a
// finding's title from the reviewer), zerg graph validate and show (a
// repository's graph title). The control is the payload printed raw in the
// same kind of pane: every detector trips.
func TestRedTeamTerminal(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "payload.txt"), []byte(terminalPayload+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
			return strings.Replace(s, "gates:\n", "gates:\n  - name: hostile\n    command: cat payload.txt; exit 1\n    required: false\n", 1)
		})
		editFile(t, scenarioPath(dir), func(s string) string {
			return strings.Replace(s, `- text: "Created data/names.txt with three names."`, "- text: "+yamlQuote(t, "Created data/names.txt. "+terminalPayload), 1)
		})
	})

	// The control: the payload raw does all it can.
	ctl := p.hostilePane(nil, "cat payload.txt")
	ctl.waitFor(time.Minute, "ZERG-EXIT=0")
	if got := ctl.attacked(); len(got) < 4 {
		t.Fatalf("control: the raw payload should set the clipboard and the title, clear the screen and forge a line; it did only %q:\n%s", got, ctl.screen())
	}

	graph := filepath.Join(t.TempDir(), "hostile.json")
	if err := os.WriteFile(graph, []byte(`{"feature": "demo", "tasks": [{"id": "A", "title": `+yamlQuote(t, terminalPayload)+`, "level": 1, "files": {"create": ["a.txt"]}, "verification": "test -f a.txt"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	review := reviewScenario(t, "hostile-review", `{"findings": [{"severity": "blocking", "title": `+yamlQuote(t, terminalPayload)+`, "file": "bin/shout", "line": 1}]}`)
	for _, c := range []struct {
		name    string
		line    string
		visible []string
	}{
		{"rush (a gate's output)", zergBin + " rush demo --rehearse", []string{"gate hostile: failed (exit 1), not required: PAYLOAD-VISIBLE", "demo: DELIVERED"}},
		{"logs (a worker's text)", zergBin + " logs demo L1-names", []string{"PAYLOAD-VISIBLE"}},
		{"status", zergBin + " status demo", []string{"demo: "}},
		{"check (a gate's output)", zergBin + " check demo", nil},
		{"review (a finding's title)", zergBin + " review demo --rehearse --scenario " + review, []string{"blocking [claude] bin/shout:1: PAYLOAD-VISIBLE"}},
		{"graph validate (a title)", zergBin + " graph validate " + graph, []string{"title: holds a control character"}},
		{"graph show (a title)", zergBin + " graph show " + graph, []string{"title: holds a control character"}},
	} {
		tp := p.hostilePane([]string{"ZERG_NO_TUI=1"}, c.line)
		s := tp.waitFor(5*time.Minute, "ZERG-EXIT=")
		for _, v := range c.visible {
			if !strings.Contains(s, v) {
				t.Errorf("%s: the pane lacks %q (did the command print the hostile text?):\n%s", c.name, v, s)
			}
		}
		if got := tp.attacked(); len(got) > 0 {
			t.Errorf("%s: the payload acted on the terminal: %q\n%s", c.name, got, s)
		}
	}
}

// TestRedTeamTerminalTasks: tasks mode, where the files a subagent leaves
// in its workspace are named by zerg tasks done (and the retry's prompt by
// zerg tasks next): a file whose name is the payload, written beside the
// task's own file, acts on nothing. The subagent is this test: tasks mode
// needs no model to hand out and check a task.
func TestRedTeamTerminalTasks(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		write := func(rel, content string) {
			os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(".zerg/config.yaml", "mode: tasks\ntasks:\n  lease: 5m\nsecurity_rules:\n  enabled: false\n")
		write(".zerg/specs/tf/task-graph.json", `{"feature": "tf", "tasks": [{"id": "T1", "title": "one", "level": 1, "files": {"create": ["a.txt"]}, "verification": {"command": "grep -q one a.txt"}}]}`)
	})
	t.Cleanup(func() { p.zerg("stop", "tf") })
	next := p.hostilePane(nil, zergBin+" tasks next tf")
	s := next.waitFor(3*time.Minute, "ZERG-EXIT=0")
	m := regexp.MustCompile(`T1 \(lease (\S+),[^\n]*\nworkspace: (\S+)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("tasks next handed out no lease of T1:\n%s", s)
	}
	lease, ws := m[1], m[2]
	if !filepath.IsAbs(ws) {
		ws = filepath.Join(p.dir, ws)
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, terminalPayload), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, line, visible string }{
		{"tasks done (the subagent's file name)", zergBin + " tasks done tf T1 --lease " + lease, "PAYLOAD-VISIBLE"},
		{"tasks next (the retry's prompt)", zergBin + " tasks next tf --wait 60s", "T1"},
	} {
		tp := p.hostilePane(nil, c.line)
		s := tp.waitFor(3*time.Minute, "ZERG-EXIT=")
		if !strings.Contains(s, c.visible) {
			t.Errorf("%s: the pane lacks %q:\n%s", c.name, c.visible, s)
		}
		if got := tp.attacked(); len(got) > 0 {
			t.Errorf("%s: the payload acted on the terminal: %q\n%s", c.name, got, s)
		}
	}
}
