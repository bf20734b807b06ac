package journey

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// redTeamTasksGraph: two tasks of one level, each with its own file.
const redTeamTasksGraph = `{"feature": "rt", "tasks": [
 {"id": "T1", "title": "one", "level": 1, "files": {"create": ["a.txt"]}, "verification": {"command": "grep -q one a.txt"}},
 {"id": "T2", "title": "two", "level": 1, "files": {"create": ["b.txt"]}, "verification": {"command": "grep -q two b.txt"}}]}
`

// TestRedTeamTasksLeases: a tasks-mode subagent (T1's, with the session's
// rights, as every subagent has) writes into T2's workspace and reports T2
// with everything it can see or guess: the workspace's name (T2-1, the
// lease of an older zerg), the files on the board, the leases zerg tasks
// next lists as working. None is T2's lease: every report is refused (exit
// 2, without the open lease's token in the answer), and T2 is committed
// only when the session reports it with the lease it was handed, with the
// content T2's own subagent wrote. Issue 35: the lease was <task>-<n>, and
// a subagent got its content committed as another task.
//
// The control is the session's own report: the lease zerg tasks next
// printed commits T2, so the refusals are of the attack, not of the path.
func TestRedTeamTasksLeases(t *testing.T) {
	p := slashProject(t)
	write := func(rel, content string) { // relative to the repository, or absolute
		t.Helper()
		f := rel
		if !filepath.IsAbs(f) {
			f = filepath.Join(p.dir, rel)
		}
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".zerg/config.yaml", "mode: tasks\ntasks:\n  lease: 5m\nsecurity_rules:\n  enabled: false\n")
	write(".zerg/specs/rt/task-graph.json", redTeamTasksGraph)
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "the rt feature")
	t.Cleanup(func() { p.zerg("stop", "rt") })

	// The session: the level's leases, each with its token.
	next := p.zerg("tasks", "next", "rt", "--json")
	var rep struct {
		Tasks []struct {
			Task, Lease, Workspace, Prompt string
		}
	}
	if err := json.Unmarshal([]byte(next.stdout), &rep); err != nil || len(rep.Tasks) != 2 {
		t.Fatalf("zerg tasks next: %v\n%s", err, next)
	}
	lease := map[string]string{}
	ws := map[string]string{}
	for _, l := range rep.Tasks {
		lease[l.Task], ws[l.Task] = l.Lease, l.Workspace
		if !strings.Contains(l.Prompt, "This task's lease is "+l.Lease+":") {
			t.Errorf("%s's prompt does not name its lease:\n%s", l.Task, l.Prompt)
		}
	}
	for task, l := range lease {
		if !regexp.MustCompile(`^` + task + `-1-[0-9a-f]{32}$`).MatchString(l) {
			t.Errorf("%s's lease %q is not <task>-<n>-<128 random bits>", task, l)
		}
	}
	if strings.Contains(rep.Tasks[0].Prompt, lease[rep.Tasks[1].Task]) || strings.Contains(rep.Tasks[1].Prompt, lease[rep.Tasks[0].Task]) {
		t.Fatal("a task's prompt holds another task's lease")
	}

	// T1's subagent turns on T2: its file, then every report it can make.
	write(filepath.Join(ws["T2"], "b.txt"), "evil, and two\n")
	seen := p.zerg("tasks", "next", "rt", "--json", "--wait", "0").stdout
	board := filepath.Join(p.dir, ".zerg", "runs", "rt", "tasks")
	entries, err := os.ReadDir(board)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(board, e.Name()))
		seen += "\n" + e.Name() + "\n" + string(b)
	}
	if strings.Contains(seen, lease["T2"]) {
		t.Errorf("T2's lease is where another subagent can read it")
	}
	// Its own lease too: T1's subagent holds it.
	guesses := append([]string{"T2-1", "T2-0", "T2-2", filepath.Base(ws["T2"]), lease["T1"]},
		regexp.MustCompile(`[0-9A-Za-z_-]{16,}`).FindAllString(seen, -1)...)
	slices.Sort(guesses)
	guesses = slices.Compact(guesses)
	for _, g := range guesses {
		r := p.zerg("tasks", "done", "rt", "T2", "--lease", g, "--wait", "0")
		if r.code != 2 || !strings.Contains(r.stderr, "is not open") {
			t.Fatalf("a report of T2 with %q: %s", g, r)
		}
		if strings.Contains(r.stdout+r.stderr, lease["T2"]) {
			t.Fatalf("the refusal of %q shows T2's lease: %s", g, r)
		}
	}
	t.Logf("%d reports of T2 with what another subagent could see, every one refused", len(guesses))
	if st := p.zerg("status", "rt", "--json"); !strings.Contains(st.stdout, `"status": "running"`) || strings.Contains(st.stdout, `"status": "committed"`) {
		t.Fatalf("T2 moved on a refused report: %s", st)
	}

	// T2's own subagent and the session: its lease commits it, with its
	// content; T1 the same.
	write(filepath.Join(ws["T2"], "b.txt"), "two\n")
	write(filepath.Join(ws["T1"], "a.txt"), "one\n")
	for _, task := range []string{"T1", "T2"} {
		if r := p.zerg("tasks", "done", "rt", task, "--lease", lease[task]); r.code != 0 || !strings.Contains(r.stdout, task+": committed as") {
			t.Fatalf("control: the session's report of %s: %s", task, r)
		}
	}
	var end string
	for range 5 {
		if end = p.zerg("tasks", "next", "rt", "--json").stdout; strings.Contains(end, `"state": "delivered"`) {
			break
		}
	}
	if !strings.Contains(end, `"state": "delivered"`) {
		t.Fatalf("not delivered: %s", end)
	}
	if got := p.git("show", "zerg/rt/integration:b.txt"); got != "two" {
		t.Errorf("T2's committed b.txt is %q, want its own subagent's", got)
	}
}
