package journey

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// tasksGraph: three tasks on level 1 and one on level 2, each creating one
// file its verification checks.
const tasksGraph = `{"feature": "tf", "tasks": [
 {"id": "T1", "title": "one", "level": 1, "files": {"create": ["a.txt"]}, "verification": {"command": "grep -q one a.txt"}},
 {"id": "T2", "title": "two", "level": 1, "files": {"create": ["b.txt"]}, "verification": {"command": "grep -q two b.txt"}},
 {"id": "T3", "title": "three", "level": 1, "files": {"create": ["c.txt"]}, "verification": {"command": "grep -q three c.txt"}},
 {"id": "T4", "title": "four", "level": 2, "dependencies": ["T1", "T2", "T3"], "files": {"create": ["d.txt"]}, "verification": {"command": "grep -q four d.txt"}}]}
`

// tasksConfig: a short lease so that an unreported task comes back within
// the test (long enough that T3's first lease outlives the session's first
// four turns on a loaded machine: the scripted session cannot adapt to an
// earlier expiry), and a gate every level's merge goes through.
const tasksConfig = `mode: tasks
tasks:
  lease: 20s
retry:
  infra_backoff_initial: 2s
gates:
  - name: files
    command: "test -f a.txt && test -f b.txt && test -f c.txt"
    required: true
security_rules:
  enabled: false
`

// tasksScenario scripts the user's session (matched by a line of the
// installed rush.md) and its subagents (matched by the prompts the session
// gives them). The scripted model reads only the leases zerg tasks next
// printed (captures: each is a secret only the session and its task's
// prompt hold), so the session's turns follow the one order the protocol
// allows: zerg tasks next blocks until there is something new to hand out. T2's first subagent
// tries to write a file its task does not own: zerg's hook denies the
// Write, and the same file written through Bash (which a user's permission
// rule allows and no hook can attribute) fails the attempt at commit. T3's
// first lease is never reported (its subagent is never started) and expires.
const tasksScenario = `tasks:
  - name: session
    match: "this session runs the workers as subagents"
    turns:
      - tools: [{name: Bash, input: {command: "zerg tasks next tf --json", description: "tasks ready now"}}]
      - tools:
          - {name: Agent, input: {description: "T1", subagent_type: general-purpose, run_in_background: false, prompt: "Task T1: one. Workspace .zerg/tasks/tf/T1-1"}}
          - {name: Agent, input: {description: "T2", subagent_type: general-purpose, run_in_background: false, prompt: "Task T2: two. Workspace .zerg/tasks/tf/T2-1"}}
      - tools:
          - {name: Bash, input: {command: "zerg tasks done tf T1 --lease {{lease}}", description: "report T1"}, captures: {lease: '"lease": "(T1-1-[0-9a-f]{32})"'}}
          - {name: Bash, input: {command: "zerg tasks done tf T2 --lease {{lease}}", description: "report T2"}, captures: {lease: '"lease": "(T2-1-[0-9a-f]{32})"'}}
      - tools: [{name: Bash, input: {command: "zerg tasks next tf --json", description: "tasks ready now"}}]
      - tools: [{name: Agent, input: {description: "T2 again", subagent_type: general-purpose, run_in_background: false, prompt: "Task T2: two, again. Workspace .zerg/tasks/tf/T2-2"}}]
      - tools: [{name: Bash, input: {command: "zerg tasks done tf T2 --lease {{lease}}", description: "report T2"}, captures: {lease: '"lease": "(T2-2-[0-9a-f]{32})"'}}]
      - tools: [{name: Bash, input: {command: "zerg tasks next tf --json", description: "tasks ready now"}}]
      - tools: [{name: Agent, input: {description: "T3 again", subagent_type: general-purpose, run_in_background: false, prompt: "Task T3: three, again. Workspace .zerg/tasks/tf/T3-2"}}]
      - tools:
          - {name: Bash, input: {command: "zerg tasks done tf T3 --lease {{lease}}", description: "report the expired lease"}, captures: {lease: '"lease": "(T3-1-[0-9a-f]{32})"'}}
          - {name: Bash, input: {command: "zerg tasks done tf T3 --lease {{lease}}", description: "report T3"}, captures: {lease: '"lease": "(T3-2-[0-9a-f]{32})"'}}
      - tools: [{name: Bash, input: {command: "zerg tasks next tf --json", description: "tasks ready now"}}]
      - tools: [{name: Agent, input: {description: "T4", subagent_type: general-purpose, run_in_background: false, prompt: "Task T4: four. Workspace .zerg/tasks/tf/T4-1"}}]
      - tools: [{name: Bash, input: {command: "zerg tasks done tf T4 --lease {{lease}}", description: "report T4"}, captures: {lease: '"lease": "(T4-1-[0-9a-f]{32})"'}}]
      - tools: [{name: Bash, input: {command: "zerg tasks next tf --json", description: "the run's end"}}]
      - text: "zerg delivered tf."
  - name: t1
    match: "Task T1: one."
    turns:
      - tools: [{name: Write, input: {file_path: .zerg/tasks/tf/T1-1/a.txt, content: "one\n"}}]
      - text: "Wrote a.txt."
  - name: t2-again
    match: "Task T2: two, again."
    turns:
      - tools: [{name: Write, input: {file_path: .zerg/tasks/tf/T2-2/b.txt, content: "two\n"}}]
      - text: "Wrote b.txt."
  - name: t2
    match: "Task T2: two."
    turns:
      - tools:
          - {name: Write, input: {file_path: .zerg/tasks/tf/T2-1/b.txt, content: "two\n"}}
          - {name: Write, input: {file_path: .zerg/tasks/tf/T2-1/notes.txt, content: "not T2's file\n"}}
      - tools: [{name: Bash, input: {command: "printf 'not T2s file' > .zerg/tasks/tf/T2-1/notes.txt", description: "write notes"}}]
      - text: "Wrote b.txt and notes."
  - name: t3-again
    match: "Task T3: three, again."
    turns:
      - tools: [{name: Write, input: {file_path: .zerg/tasks/tf/T3-2/c.txt, content: "three\n"}}]
      - text: "Wrote c.txt."
  - name: t4
    match: "Task T4: four."
    turns:
      - tools: [{name: Write, input: {file_path: .zerg/tasks/tf/T4-1/d.txt, content: "four\n"}}]
      - text: "Wrote d.txt."
`

// TestTasksModeThroughClaude: /zerg:rush FEATURE --mode tasks typed into the
// real Claude Code CLI (claude -p), the model scripted: the session hands
// the tasks zerg tasks next gives it to Agent subagents and reports each
// with zerg tasks done; zerg checks and commits every result as in every
// mode and merges both levels through a gate. A subagent that writes
// outside its task's files fails that attempt at commit (the task is
// handed out again and delivered), and a lease never reported expires: the
// task comes back with a new lease and the old one is refused.
//
// The control removes the Edit rule for the workspaces from the installed
// rush.md: the subagents' writes are denied, and nothing is delivered.
func TestTasksModeThroughClaude(t *testing.T) {
	t.Run("delivered", func(t *testing.T) { tasksModeThroughClaude(t, false) })
	t.Run("control-without-the-edit-rule", func(t *testing.T) { tasksModeThroughClaude(t, true) })
}

func tasksModeThroughClaude(t *testing.T, dropEdit bool) {
	p := slashProject(t)
	write := func(rel, content string) {
		t.Helper()
		f := filepath.Join(p.dir, rel)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A user who lets Claude run printf: the hook cannot tell whose
	// command it is, so the commit checks must catch what it writes.
	settingsFile := filepath.Join(p.dir, ".claude", "settings.json")
	var settings map[string]any
	if err := json.Unmarshal([]byte(p.read(settingsFile)), &settings); err != nil {
		t.Fatalf("zerg init's %s: %v", settingsFile, err)
	}
	settings["permissions"] = map[string]any{"allow": []string{"Bash(printf:*)"}}
	b, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	write(".claude/settings.json", string(b))
	write(".zerg/config.yaml", tasksConfig)
	write(".zerg/specs/tf/task-graph.json", tasksGraph)
	write(".zerg/specs/tf/scenario.yaml", tasksScenario)
	if dropEdit {
		f := filepath.Join(p.dir, ".claude", "commands", "zerg", "rush.md")
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cut := strings.Replace(string(b), " Edit(.zerg/tasks/*/*/**),", "", 1)
		if cut == string(b) {
			t.Fatalf("rush.md has no Edit(.zerg/tasks/*/*/**) rule:\n%s", b)
		}
		if err := os.WriteFile(f, []byte(cut), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "the tf feature")
	t.Cleanup(func() { p.zerg("stop", "tf") })

	url := p.mockAPI(filepath.Join(p.dir, ".zerg", "specs", "tf", "scenario.yaml"))
	start := time.Now()
	events := p.claudeEvents(url, "/zerg:rush tf --mode tasks")
	t.Logf("the session took %s", time.Since(start).Round(time.Second))
	results := toolResults(events)
	if dropEdit {
		denied := strings.Join(denials(t, events), "\n")
		if !strings.Contains(denied, "Write "+filepath.Join(p.dir, ".zerg/tasks/tf/T1-1/a.txt")) {
			t.Errorf("control: the subagent's write was not denied; denials:\n%s", denied)
		}
		if strings.Contains(results, "T1: committed as") || strings.Contains(results, `"state": "delivered"`) {
			t.Errorf("control: delivered without the subagents' writes; tool results:\n%s", results)
		}
		return
	}
	// No permission was refused; the hook's denial of T2's write reaches
	// the subagent as the tool's error (below), and from 2.1.266 on the
	// result lists it among its denials too.
	hookDenied := "Write " + filepath.Join(p.dir, ".zerg/tasks/tf/T2-1/notes.txt")
	if d := slices.DeleteFunc(denials(t, events), func(s string) bool { return s == hookDenied }); len(d) > 0 {
		t.Fatalf("the session's tools were denied: %v\ntool results:\n%s", d, results)
	}
	for _, want := range []string{
		"task T2 owns only b.txt; notes.txt is not its file", // the hook
		"T1: committed as",
		"T2: refused (ownership)",                          // the first subagent of T2 wrote notes.txt
		"of T3 is not open (its open lease is attempt 2's", // T3-1's, expired, handed out again as T3-2
		"T3: committed as",
		"T4: committed as",
		`"state": "delivered"`,
	} {
		if !strings.Contains(results, want) {
			t.Errorf("the session did not see %q; tool results:\n%s", want, results)
		}
	}

	// The deliverable: every task's file, nothing else, each task merged
	// once, through the gate on both levels.
	files := p.git("ls-tree", "-r", "--name-only", "zerg/tf/integration")
	for _, f := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		if !strings.Contains(files+"\n", f+"\n") {
			t.Errorf("%s is not on the integration branch:\n%s", f, files)
		}
	}
	if strings.Contains(files, "notes.txt") {
		t.Errorf("the file T2 does not own reached the integration branch")
	}
	log := p.git("log", "--format=%s", "zerg/tf/integration")
	for _, task := range []string{"T1: one", "T2: two", "T3: three", "T4: four"} {
		if n := strings.Count(log+"\n", "Merge "+task+"\n"); n != 1 {
			t.Errorf("%s was merged %d times:\n%s", task, n, log)
		}
	}
	st := p.zerg("status", "tf", "--json")
	var v struct {
		State string `json:"state"`
		Gates []struct {
			Exit int `json:"exit"`
		} `json:"gates"`
		Tasks []struct {
			ID       string `json:"id"`
			Status   string `json:"status"`
			Attempts int    `json:"attempts"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(st.stdout), &v); err != nil {
		t.Fatalf("zerg status --json: %v\n%s", err, st)
	}
	if v.State != "delivered" {
		t.Errorf("state %q, want delivered\n%s", v.State, st.stdout)
	}
	attempts := map[string]int{}
	for _, task := range v.Tasks {
		attempts[task.ID] = task.Attempts
		if task.Status != "merged" {
			t.Errorf("%s is %s, want merged", task.ID, task.Status)
		}
	}
	if attempts["T1"] != 1 || attempts["T2"] != 2 || attempts["T3"] != 2 || attempts["T4"] != 1 {
		t.Errorf("attempts %v, want T1:1 T2:2 T3:2 T4:1", attempts)
	}
	if len(v.Gates) < 2 {
		t.Errorf("%d gate runs, want one per level", len(v.Gates))
	}
	for _, g := range v.Gates {
		if g.Exit != 0 {
			t.Errorf("a gate failed: %s", st.stdout)
		}
	}
	// The coordinator ends by itself once it delivered.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := exec.Command("pgrep", "-f", "zerg rush tf --mode tasks").Output()
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the coordinator still runs: %s", out)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
}
