package rush

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// The run's state stays right after what people do between runs: each test
// here reproduces one of the bugs the typed core fixed, with the real CLI.

// statusJSON reads `zerg status --json`.
func (p *project) statusJSON() runstate.View {
	p.t.Helper()
	r := p.zerg("status", "--json")
	var v runstate.View
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		p.t.Fatalf("status --json: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	return v
}

// A task added to an already merged level, a failed task retried, a commit
// of the user's on the integration branch, and a resume without --rehearse:
// the new task runs, the user's commit is kept, the run stays a rehearsal,
// and it delivers with every task merged. An edit of merged work is refused
// first, with nothing written.
func TestResumeTakesGraphEditsAndKeepsUserCommits(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		editFile(t, scenarioPath(dir), func(s string) string {
			return strings.Replace(s, `match_regexp: "(?s)Task L2-shout:.*Previous attempt failed"`, `match_regexp: "never matches"`, 1)
		})
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
			return strings.Replace(s, "task_retries: 2", "task_retries: 1", 1)
		})
	})
	if r := p.zerg("rush", "demo", "--rehearse"); r.code != 1 {
		t.Fatalf("first run: exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	graph := filepath.Join(p.dir, ".zerg", "specs", "demo", "task-graph.json")
	events := filepath.Join(p.dir, ".zerg", "runs", "demo", "events.jsonl")
	original, _ := os.ReadFile(graph)

	// Refused: the files of a merged task changed.
	editFile(t, graph, func(s string) string {
		return strings.Replace(s, `"create": ["docs/usage.md"]`, `"create": ["docs/usage.md", "docs/more.md"]`, 1)
	})
	logBefore, _ := os.ReadFile(events)
	r := p.zerg("rush", "demo", "--resume")
	if r.code != 2 || !strings.Contains(r.stderr, "task L1-docs of demo is merged, but its files.create changed") {
		t.Fatalf("edit of merged work: exit %d\n%s", r.code, r.stderr)
	}
	if logAfter, _ := os.ReadFile(events); !bytes.Equal(logBefore, logAfter) {
		t.Error("a refused resume wrote to the run log")
	}
	os.WriteFile(graph, original, 0o644)

	// Taken: a task added to level 1, which is merged.
	editFile(t, graph, func(s string) string {
		return strings.Replace(s, `    {
      "id": "L1-docs"`, `    {
      "id": "L1-extra", "title": "Extra names", "level": 1,
      "files": {"create": ["data/extra.txt"]},
      "verification": {"command": "grep -qx Alan data/extra.txt"}
    },
    {
      "id": "L1-docs"`, 1)
	})
	editFile(t, scenarioPath(p.dir), func(s string) string {
		s = strings.Replace(s, `match_regexp: "never matches"`, `match_regexp: "(?s)Task L2-shout:.*Previous attempt failed"`, 1)
		return strings.Replace(s, "tasks:\n", `tasks:
  - name: extra
    match: "Task L1-extra:"
    turns:
      - tools: [{name: Write, input: {file_path: data/extra.txt, content: "Alan\n"}}]
      - text: "Added data/extra.txt."
`, 1)
	})
	// The user's own commit on the integration branch.
	wt := filepath.Join(t.TempDir(), "user")
	p.git("worktree", "add", "-q", wt, run.IntegrationBranch("demo"))
	os.WriteFile(filepath.Join(wt, "NOTES.md"), []byte("a note of the user's\n"), 0o644)
	userGit := exec.Command("git", "-c", "user.name=U", "-c", "user.email=u@example.invalid", "commit", "-qam", "x")
	userGit.Dir = wt
	exec.Command("git", "-C", wt, "add", "NOTES.md").Run()
	if out, err := userGit.CombinedOutput(); err != nil {
		t.Fatalf("user commit: %v %s", err, out)
	}
	userCommit := p.git("rev-parse", run.IntegrationBranch("demo"))
	p.git("worktree", "remove", wt)

	if r := p.zerg("retry", "L2-shout"); r.code != 0 {
		t.Fatalf("retry: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	// No --rehearse, and no API key in the environment: only a run that
	// keeps its recorded mode can go on.
	r = p.zerg("rush", "demo", "--resume")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"started as a rehearsal; it resumes with the scripted model", "1 task(s) added ([L1-extra])", "the run builds on " + userCommit[:10]} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("resume output lacks %q:\n%s", want, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "demo: DELIVERED (rehearsal)") || !strings.Contains(r.stdout, "tasks: 8 of 8 merged") {
		t.Errorf("report:\n%s", r.stdout)
	}
	files := p.integrationFiles()
	for _, f := range append([]string{"data/extra.txt", "NOTES.md"}, allDemoFiles...) {
		if !files[f] {
			t.Errorf("the integration branch lacks %s", f)
		}
	}
	p.git("merge-base", "--is-ancestor", userCommit, run.IntegrationBranch("demo"))
	v := p.statusJSON()
	if v.State != runstate.RunDelivered || len(v.Tasks) != 8 {
		t.Errorf("status: %s with %d tasks", v.State, len(v.Tasks))
	}
	for _, tv := range v.Tasks {
		if tv.Status != runstate.StatusMerged {
			t.Errorf("%s is %s", tv.ID, tv.Status)
		}
	}
	// The test edited the graph and the scenario in the working tree; zerg
	// moved neither the user's branch nor HEAD.
	if head := p.git("rev-parse", "HEAD"); head != p.base {
		t.Errorf("user's HEAD moved: %s → %s", p.base, head)
	}
}

// A coordinator killed with SIGKILL is seen as dead (its log's lock is
// free) and status --watch ends. What it leaves depends on the mode: in
// subprocess mode a command the worker ran outlives the CLI and zerg stop
// reaps it; in sandbox mode the whole sandbox dies with the coordinator.
// In subprocess mode the process mechanisms show too: with the
// parent-death signal the CLI dies with the coordinator, without it
// (ZERG_PORTABLE_PROC=1, as on macOS) it is left for zerg stop; and zerg
// stop signals through pidfds, or by kill(2) alone (strace counts).
func TestDeadCoordinatorIsSeenAndItsWorkersReaped(t *testing.T) {
	t.Parallel()
	for _, mode := range slices.Compact([]string{"subprocess", isolated}) {
		t.Run(mode, func(t *testing.T) {
			p := newProject(t, func(dir string) {
				// Through sh: from 2.1.332 on the CLI's Bash tool refuses a
				// standalone long sleep ("Blocked: standalone sleep 120").
				editFile(t, scenarioPath(dir), func(s string) string {
					return strings.Replace(s, "      - tools: [{name: Write, input: {file_path: data/names.txt",
						"      - tools: [{name: Bash, input: {command: \"sh -c 'sleep 120'\", description: \"take a while\"}}]\n      - tools: [{name: Write, input: {file_path: data/names.txt", 1)
				})
				editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
					return modeLines(mode) + s
				})
			})
			cmd, _ := p.startRushUntil(runstate.EvAttemptPIDs, "L1-names")
			for deadline := time.Now().Add(time.Minute); !strings.Contains(strings.Join(runProcesses(p.events()), " "), "sleep 120"); {
				if time.Now().After(deadline) {
					t.Fatal("the worker never ran its command")
				}
				time.Sleep(50 * time.Millisecond)
			}
			if v := p.statusJSON(); v.State != runstate.RunRunning || !v.Coordinator.Alive {
				t.Errorf("live run: state %s, coordinator %+v", v.State, v.Coordinator)
			}
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			v := p.statusJSON()
			if v.State != runstate.RunDead || v.Coordinator.Alive {
				t.Errorf("after SIGKILL: state %s, coordinator %+v", v.State, v.Coordinator)
			}
			done := make(chan result, 1)
			go func() { done <- p.zerg("status", "--watch", "--interval", "100ms") }()
			select {
			case r := <-done:
				if r.code != 0 || !strings.Contains(r.stdout, "coordinator: dead") {
					t.Errorf("status --watch: exit %d\n%s", r.code, r.stdout)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("status --watch did not end for a dead coordinator")
			}
			if mode != "subprocess" {
				// bwrap dies with its parent, the sandbox's PID 1 with bwrap,
				// and every process of the sandbox with its PID 1.
				deadline := time.Now().Add(10 * time.Second)
				for len(runProcesses(p.events())) > 0 && time.Now().Before(deadline) {
					time.Sleep(50 * time.Millisecond)
				}
				if left := runProcesses(p.events()); len(left) > 0 {
					t.Errorf("sandboxed processes outlived the coordinator: %v", left)
				}
				return
			}
			orphans := runProcesses(p.events())
			if len(orphans) == 0 {
				t.Fatal("no orphaned worker to reap: the test checks nothing")
			}
			cli := firstPIDs(t, p.events(), "L1-names")
			if portable {
				// Reaped: a parent-death signal would have been sent.
				if startTime(cli.PID) != cli.StartTime || sigkillPending(cli.PID) {
					t.Error("the CLI died with the coordinator: a parent-death signal was set on the portable path")
				}
			} else {
				for deadline := time.Now().Add(10 * time.Second); startTime(cli.PID) == cli.StartTime; time.Sleep(20 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("the CLI outlived the coordinator: no parent-death signal")
					}
				}
			}
			// pidfd_send_signal, not pidfd_open: Go's os package opens a
			// pidfd of its own process once to learn whether the kernel
			// has them, whichever path proc takes (and zergTraced leaves
			// out the null signal it sends through it).
			r, calls := p.zergTraced([]string{"pidfd_send_signal", "kill"}, "stop")
			if r.code != 0 || !strings.Contains(r.stdout, "is dead") || !strings.Contains(r.stdout, "killed") {
				t.Errorf("stop: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if portable && (calls["pidfd_send_signal"] != 0 || calls["kill"] == 0) {
				t.Errorf("zerg stop on the portable path: %v; want no pidfd_send_signal, kill(2)", calls)
			}
			if !portable && calls["pidfd_send_signal"] == 0 {
				t.Errorf("zerg stop: %v; want pidfd_send_signal (the count would not tell the portable path from this one)", calls)
			}
			if left := runProcesses(p.events()); len(left) > 0 {
				t.Errorf("workers left after stop: %v (before: %v)", left, orphans)
			}
		})
	}
}

// A killed run's workspace, then the repository deleted and created again
// at the same path: the next rush moves the stale workspaces aside (nothing
// deleted) and delivers.
func TestStaleWorkspacesOfARecreatedRepository(t *testing.T) {
	t.Parallel()
	slow := func(dir string) {
		editFile(t, scenarioPath(dir), func(s string) string {
			return strings.Replace(s, "      - tools: [{name: Write, input: {file_path: data/names.txt",
				"      - delay: 2s\n        tools: [{name: Write, input: {file_path: data/names.txt", 1)
		})
	}
	p := newProject(t, slow)
	cmd, _ := p.startRushUntil(runstate.EvAttemptPIDs, "L1-names")
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	p.zerg("stop")
	stale, _ := filepath.Glob(filepath.Join(p.home, "workspaces", "*", "demo", "L1-names-1"))
	if len(stale) != 1 {
		t.Fatalf("no workspace left by the killed run: %v", stale)
	}
	os.WriteFile(filepath.Join(stale[0], "scratch.txt"), []byte("uncommitted\n"), 0o644)

	if err := os.RemoveAll(p.dir); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(p.dir, os.DirFS(filepath.Join(repoRoot, "examples", "demo"))); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(p.dir, ".gitignore"), []byte(".zerg/runs/\n.zerg/cache/\n.zerg/audit.jsonl*\n"), 0o644)
	p.git("init", "-q", "-b", "main")
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "demo project, again")
	p.base = p.git("rev-parse", "HEAD")

	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 0 {
		t.Fatalf("rush in the recreated repository: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "moved the stale workspaces of an earlier run aside") {
		t.Errorf("no word of the stale workspaces:\n%s", r.stderr)
	}
	kept, _ := filepath.Glob(filepath.Join(p.home, "workspaces", "*", "demo.stale-*", "L1-names-1", "scratch.txt"))
	if len(kept) != 1 {
		t.Errorf("the stale workspace's files were not kept aside: %v", kept)
	}
	p.assertUserUntouched()
}

// Setup problems are found before anything is written.
func TestSetupIsCheckedBeforeAnyWrite(t *testing.T) {
	t.Parallel()
	p := newProject(t, nil)
	env := append(p.env(), "ZERG_WORKSPACES=relative/ws")
	r := p.zergEnv(env, "rush", "demo", "--rehearse")
	if r.code != 2 || !strings.Contains(r.stderr, "ZERG_WORKSPACES=relative/ws is relative") {
		t.Fatalf("relative ZERG_WORKSPACES: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(p.dir, ".zerg", "runs", "demo")); !os.IsNotExist(err) {
		t.Errorf("the run directory was written: %v", err)
	}
	if out := p.git("branch", "--list", "zerg/*"); out != "" {
		t.Errorf("branches were created: %s", out)
	}
	p.assertUserUntouched()
}
