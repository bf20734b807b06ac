// Package rush holds the end-to-end tests of `zerg rush`: a built zerg
// binary, the real pinned Claude Code CLI and the scripted Messages API, on a
// copy of the bundled demo project.
package rush

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/proc"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"

	"github.com/zergrush/zerg/e2e/e2ebin"
)

var (
	zergBin   string
	claudeBin string
	repoRoot  string
	// isolated is the mode the suites' isolated rushes run in: sandbox, or
	// container when ZERG_E2E_ISOLATION=container (make test runs the rush,
	// resilience, state and sandbox red-team suites once more that way, in
	// containers of the image make container-image builds).
	isolated = cmp.Or(os.Getenv("ZERG_E2E_ISOLATION"), "sandbox")
	// portable is ZERG_PORTABLE_PROC=1: zerg's process handling runs on
	// the paths macOS runs (no pidfd, parent-death signal or subreaper).
	// make test runs the crash, stop and resume suites once more so, in
	// subprocess mode (ZERG_E2E_ISOLATION=subprocess), what macOS runs.
	portable = os.Getenv(proc.EnvPortable) == "1"
)

// testImage is the container mode's image of the suites.
const testImage = "localhost/zerg-test:bookworm"

// modeLines are the config lines that select mode (and its image).
func modeLines(mode string) string {
	if mode == "container" {
		return "mode: container\ncontainer:\n  image: " + testImage + "\n"
	}
	return "mode: " + mode + "\n"
}

// applyIsolation gives a project whose config names no mode the suites'
// isolated mode, as its default would be sandbox.
func applyIsolation(t *testing.T, dir string) {
	t.Helper()
	if isolated == "sandbox" {
		return
	}
	editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
		if regexp.MustCompile(`(?m)^mode:`).MatchString(s) {
			return s
		}
		return strings.TrimRight(s, "\n") + "\n" + modeLines(isolated)
	})
}

func TestMain(m *testing.M) {
	e2ebin.Main(m, "e2e/rush", func(t e2ebin.Tools) {
		repoRoot, zergBin, claudeBin = t.Root, t.Zerg, t.Claude
	})
}

// project is a copy of the demo project in its own git repository.
type project struct {
	t    *testing.T
	dir  string
	home string
	base string // the user's HEAD before the run
}

// newProject copies examples/demo, lets mutate change it, and commits it.
func newProject(t *testing.T, mutate func(dir string)) *project {
	t.Helper()
	tmp := e2ebin.Traversable(t, t.TempDir())
	p := &project{t: t, dir: filepath.Join(tmp, "repo"), home: filepath.Join(tmp, "home")}
	if err := os.CopyFS(p.dir, os.DirFS(filepath.Join(repoRoot, "examples", "demo"))); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(p.home, 0o755)
	if err := os.WriteFile(filepath.Join(p.dir, ".gitignore"), []byte(".zerg/runs/\n.zerg/cache/\n.zerg/audit.jsonl*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(p.dir)
	}
	applyIsolation(t, p.dir)
	p.git("init", "-q", "-b", "main")
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "demo project")
	p.base = p.git("rev-parse", "HEAD")
	return p
}

func (p *project) env() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + p.home,
		"ZERG_CLAUDE=" + claudeBin,
		"ZERG_WORKSPACES=" + filepath.Join(p.home, "workspaces"),
		"NO_COLOR=1",
		"LANG=C.UTF-8",
		proc.EnvPortable + "=" + os.Getenv(proc.EnvPortable),
	}
}

func (p *project) git(args ...string) string {
	p.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=t@example.invalid"}, args...)...)
	cmd.Dir = p.dir
	cmd.Env = append(p.env(), "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

type result struct {
	code           int
	stdout, stderr string
}

func (p *project) zerg(args ...string) result {
	p.t.Helper()
	return p.zergEnv(p.env(), args...)
}

// zergEnv runs zerg with the given environment (e2ebin.Command: a zerg
// that could not start, or ran past five minutes, fails the test).
func (p *project) zergEnv(env []string, args ...string) result {
	p.t.Helper()
	r := e2ebin.Command(p.t, 5*time.Minute, p.dir, env, zergBin, args...)
	return result{code: r.Code, stdout: r.Stdout, stderr: r.Stderr}
}

func (p *project) events() []eventlog.Event {
	p.t.Helper()
	evs, err := eventlog.Read(filepath.Join(p.dir, ".zerg", "runs", "demo", "events.jsonl"))
	if err != nil {
		p.t.Fatal(err)
	}
	return evs
}

func (p *project) integrationFiles() map[string]bool {
	files := map[string]bool{}
	for _, f := range strings.Split(p.git("ls-tree", "-r", "--name-only", run.IntegrationBranch("demo")), "\n") {
		files[f] = true
	}
	return files
}

// assertUserUntouched: the user's branch and working tree are as before.
func (p *project) assertUserUntouched() {
	p.t.Helper()
	if head := p.git("rev-parse", "HEAD"); head != p.base {
		p.t.Errorf("user's HEAD moved: %s → %s", p.base, head)
	}
	if b := p.git("symbolic-ref", "--short", "HEAD"); b != "main" {
		p.t.Errorf("user's branch changed to %s", b)
	}
	if st := p.git("status", "--porcelain"); st != "" {
		p.t.Errorf("user's working tree changed:\n%s", st)
	}
}

func editFile(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(edit(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
}

func scenarioPath(dir string) string {
	return filepath.Join(dir, ".zerg", "specs", "demo", "scenario.yaml")
}

var allDemoFiles = []string{"data/names.txt", "lib/greet.sh", "lib/upper.sh", "docs/usage.md", "bin/greet-all", "bin/shout", "tests/run.sh"}

var (
	refTreeOnce sync.Once
	refTree     string
)

// deliverable lists the integration branch's files with their blob ids,
// leaving out .zerg/ (the tests edit the committed scenario).
func (p *project) deliverable() string {
	var keep []string
	for _, l := range strings.Split(p.git("ls-tree", "-r", run.IntegrationBranch("demo")), "\n") {
		if !strings.Contains(l, "\t.zerg/") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// referenceTree is the integration tree of an uninterrupted demo run.
func referenceTree(t *testing.T) string {
	refTreeOnce.Do(func() {
		p := newProject(t, nil)
		if r := p.zerg("rush", "demo", "--rehearse"); r.code != 0 {
			t.Fatalf("reference run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		refTree = p.deliverable()
	})
	if refTree == "" {
		t.Fatal("no reference tree")
	}
	return refTree
}

// TestRushDeliversDemo: 3 levels, 4 tasks at once in level 1, level 2 reading
// level 1's files, a verification that fails once and passes on retry, a gate
// on every merged head. Everything lands on the integration branch; the
// user's branch and working tree are untouched; exit 0.
func TestRushDeliversDemo(t *testing.T) {
	t.Parallel()
	p := newProject(t, nil)
	r := p.zerg("rush", "demo", "--rehearse", "--workers", "4")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "demo: DELIVERED (rehearsal)") || !strings.Contains(r.stdout, "tasks: 7 of 7 merged") {
		t.Errorf("report:\n%s", r.stdout)
	}
	files := p.integrationFiles()
	for _, f := range allDemoFiles {
		if !files[f] {
			t.Errorf("integration branch lacks %s", f)
		}
	}
	// Level 2 used level 1's files: its command works on the merged head.
	if got := p.git("show", run.IntegrationBranch("demo")+":bin/greet-all"); !strings.Contains(got, "data/names.txt") {
		t.Errorf("bin/greet-all: %s", got)
	}
	p.assertUserUntouched()

	evs := p.events()
	st := runstate.Replay(evs)
	// The retry: L2-shout failed verification once, then passed.
	var shout []runstate.AttemptFinished
	level1Started, firstLevel1Finish := 0, -1
	for i, e := range evs {
		if e.Type == runstate.EvAttemptFinished && e.Task == "L2-shout" {
			var d runstate.AttemptFinished
			e.Decode(&d)
			shout = append(shout, d)
		}
		if e.Type == runstate.EvAttemptStarted && strings.HasPrefix(e.Task, "L1-") && firstLevel1Finish < 0 {
			level1Started++
		}
		if e.Type == runstate.EvAttemptFinished && strings.HasPrefix(e.Task, "L1-") && firstLevel1Finish < 0 {
			firstLevel1Finish = i
		}
	}
	if len(shout) != 2 || shout[0].Class != "task" || shout[0].Reason != "verification_failed" || shout[1].Class != "success" {
		t.Errorf("L2-shout attempts: %+v", shout)
	}
	if level1Started != 4 {
		t.Errorf("%d level-1 attempts started before the first finished, want 4 at once", level1Started)
	}
	// The gate ran on each merged head and passed.
	if len(st.Gates) != 3 {
		t.Fatalf("gates: %+v", st.Gates)
	}
	for _, g := range st.Gates {
		if g.Exit != 0 || g.Head != st.Merged[g.Level].Head {
			t.Errorf("gate %+v", g)
		}
	}
	for id, n := range st.MergeCount {
		if n != 1 {
			t.Errorf("%s merged %d times", id, n)
		}
	}
	if st.Finished == nil || !st.Finished.Delivered {
		t.Errorf("run_finished: %+v", st.Finished)
	}

	// Run as root, the workers ran as the unprivileged worker user: their
	// private HOME belongs to it.
	if os.Geteuid() == 0 {
		homes, _ := filepath.Glob(filepath.Join(p.home, "workspaces", "*", "demo", "_state", "L1-names-1", "home"))
		if len(homes) != 1 {
			t.Fatalf("worker HOME of L1-names not found: %v", homes)
		}
		fi, err := os.Stat(homes[0])
		if err != nil {
			t.Fatal(err)
		}
		if uid := fi.Sys().(*syscall.Stat_t).Uid; uid == 0 {
			t.Error("the worker ran as root")
		}
	}

	// After the run: status from the log, logs of the retried task, a second
	// rush refused, cleanup of merged branches, and the explicit merge.
	s := p.zerg("status", "--json")
	var status struct {
		State string `json:"state"`
		Tasks []struct {
			ID       string `json:"id"`
			Status   string `json:"status"`
			Attempts int    `json:"attempts"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(s.stdout), &status); err != nil || status.State != "delivered" || len(status.Tasks) != 7 {
		t.Errorf("status --json: %v %+v\n%s", err, status, s.stdout)
	}
	if l := p.zerg("logs", "L2-shout"); l.code != 0 || !strings.Contains(l.stdout, "== L2-shout attempt 2") || !strings.Contains(l.stdout, "Write {\"file_path\":\"bin/shout\"") {
		t.Errorf("logs: exit %d\n%s%s", l.code, l.stdout, l.stderr)
	}
	if again := p.zerg("rush", "demo", "--rehearse"); again.code != 2 || !strings.Contains(again.stderr, "--resume") {
		t.Errorf("second rush: exit %d %s", again.code, again.stderr)
	}
	if c := p.zerg("cleanup", "demo"); c.code != 0 || !strings.Contains(c.stdout, "removed branch zerg/demo/task/L2-shout/2") {
		t.Errorf("cleanup: exit %d\n%s%s", c.code, c.stdout, c.stderr)
	}
	if strings.Contains(p.git("branch", "--list", "zerg/demo/task/*"), "L2-shout/2") {
		t.Error("merged attempt branch not removed")
	}
	if left, _ := filepath.Glob(filepath.Join(p.home, "workspaces", "*", "demo")); len(left) != 0 {
		t.Errorf("cleanup left the feature's workspace directory %v", left)
	}
	if m := p.zerg("merge", "demo", "--into", "main"); m.code != 0 || !strings.Contains(m.stdout, "fast-forwarded") {
		t.Errorf("merge: exit %d\n%s%s", m.code, m.stdout, m.stderr)
	}
	if p.git("rev-parse", "main") != st.Head {
		t.Error("main is not at the integration head after zerg merge")
	}
	if _, err := os.Stat(filepath.Join(p.dir, "bin", "shout")); err != nil {
		t.Error("the merge did not update the checked-out working tree")
	}
}

// TestRushNotDelivered: a task that never passes fails the run (exit 1); the
// report names it; the integration branch holds only the levels that passed.
func TestRushNotDelivered(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		editFile(t, scenarioPath(dir), func(s string) string {
			return strings.Replace(s, `match_regexp: "(?s)Task L2-shout:.*Previous attempt failed"`, `match_regexp: "never matches"`, 1)
		})
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
			return strings.Replace(s, "task_retries: 2", "task_retries: 1", 1)
		})
	})
	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"demo: NOT DELIVERED", "L2-shout FAILED (level 2, 2 attempt(s)): verification `sh bin/shout | grep -qx LINUS` failed", "L3-tests BLOCKED", "level 2: failed"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, r.stdout)
		}
	}
	files := p.integrationFiles()
	for _, f := range []string{"data/names.txt", "lib/greet.sh", "lib/upper.sh", "docs/usage.md"} {
		if !files[f] {
			t.Errorf("level-1 file %s missing", f)
		}
	}
	for _, f := range []string{"bin/greet-all", "bin/shout", "tests/run.sh"} {
		if files[f] {
			t.Errorf("%s is on the integration branch, but its level did not pass", f)
		}
	}
	st := runstate.Replay(p.events())
	if p.git("rev-parse", run.IntegrationBranch("demo")) != st.Merged[1].Head {
		t.Error("integration branch is not at the level-1 merge")
	}
	p.assertUserUntouched()
}

// TestOwnershipViolation: a worker that changes a file it does not own fails
// its task with a message naming the file; a Write outside its files is
// denied by the hook before it happens.
func TestOwnershipViolation(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		editFile(t, scenarioPath(dir), func(s string) string {
			return strings.Replace(s, `      - text: "Wrote docs/usage.md."`,
				`      - tools:
          - {name: Write, input: {file_path: lib/greet.sh, content: "hijacked\n"}}
          - {name: Bash, input: {command: "echo sneaky >> README.md", description: "edit a file I do not own"}}
      - text: "Wrote docs/usage.md."`, 1)
		})
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
			return strings.Replace(s, "task_retries: 2", "task_retries: 0", 1)
		})
	})
	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "L1-docs FAILED") || !strings.Contains(r.stdout, "changed README.md, which task L1-docs does not own") {
		t.Errorf("report:\n%s", r.stdout)
	}
	// The hook denied the Write: the attempt's diff never touched lib/greet.sh.
	evs := p.events()
	for _, e := range evs {
		if e.Type == runstate.EvAttemptFinished && e.Task == "L1-docs" {
			var d runstate.AttemptFinished
			e.Decode(&d)
			for _, c := range d.Changed {
				if c == "lib/greet.sh" {
					t.Error("a denied Write reached lib/greet.sh")
				}
			}
		}
	}
	stream, _ := os.ReadFile(filepath.Join(p.dir, ".zerg", "runs", "demo", "attempts", "L1-docs", "1", "stream.jsonl"))
	if !bytes.Contains(stream, []byte("lib/greet.sh")) || !bytes.Contains(stream, []byte(`"permission_denials":[{`)) {
		t.Error("the stream shows no denied Write of lib/greet.sh")
	}
	if p.integrationFiles()["README.md"] && p.git("show", run.IntegrationBranch("demo")+":README.md") != p.git("show", "HEAD:README.md") {
		t.Error("README.md changed on the integration branch")
	}
	// Both decisions are in the hash-chained audit log, which verifies.
	audit, err := os.ReadFile(filepath.Join(p.dir, ".zerg", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"type":"hook_denied","task":"L1-docs"`, `"file_path":"lib/greet.sh"`, `"type":"ownership_violation","task":"L1-docs"`, `"README.md"`} {
		if !bytes.Contains(audit, []byte(want)) {
			t.Errorf("audit log lacks %s:\n%s", want, audit)
		}
	}
	if v := p.zerg("audit", "verify"); v.code != 0 {
		t.Errorf("audit verify: exit %d %s%s", v.code, v.stdout, v.stderr)
	}
}

// TestProtectedPaths: security.protected_paths holds in both modes. L1-docs
// owns docs/*.md and also writes docs/extra.md, which is protected: the
// hook refuses its Write at once (audited), and when a script of its own
// writes the file anyway the attempt fails at commit as a forbidden change,
// named in the report and in the audit log, and nothing of it reaches the
// integration branch. The control is
// TestRushDeliversDemo: the same task, unprotected, is merged.
func TestProtectedPaths(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"subprocess", isolated} {
		t.Run(mode, func(t *testing.T) {
			p := newProject(t, func(dir string) {
				editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
					return strings.Replace(s, "task_retries: 2", "task_retries: 0", 1) +
						modeLines(mode) + "security:\n  protected_paths: [docs/extra.md]\n"
				})
				editFile(t, filepath.Join(dir, ".zerg", "specs", "demo", "task-graph.json"), func(s string) string {
					return strings.Replace(s, `"files": {"create": ["docs/usage.md"]`, `"files": {"create": ["docs/*.md"]`, 1)
				})
				editFile(t, scenarioPath(dir), func(s string) string {
					// First the Write tool, which the hook refuses at once;
					// then a script of the task's own that writes the file
					// where no hook looks: the commit check refuses that.
					return strings.Replace(s, `      - text: "Wrote docs/usage.md."`,
						`      - tools: [{name: Write, input: {file_path: docs/extra.md, content: "more\n"}}]
      - tools: [{name: Write, input: {file_path: docs/gen.md, content: "printf 'more\\n' > docs/extra.md\n"}}]
      - tools: [{name: Bash, input: {command: "sh docs/gen.md"}}]
      - text: "Wrote docs/usage.md."`, 1)
				})
			})
			r := p.zerg("rush", "demo", "--rehearse")
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "L1-docs FAILED") || !strings.Contains(r.stdout, `docs/extra.md (protected: added; "docs/extra.md" is protected)`) {
				t.Errorf("report:\n%s", r.stdout)
			}
			if ts := runstate.Replay(p.events()).Task("L1-docs"); ts.Reason != "forbidden_change" {
				t.Errorf("L1-docs: %+v, want reason forbidden_change", ts)
			}
			if files := p.integrationFiles(); files["docs/extra.md"] || files["docs/usage.md"] {
				t.Error("L1-docs's work reached the integration branch")
			}
			audit, err := os.ReadFile(filepath.Join(p.dir, ".zerg", "audit.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(audit, []byte(`"type":"commit_refused","task":"L1-docs"`)) || !bytes.Contains(audit, []byte(`"path":"docs/extra.md"`)) {
				t.Errorf("audit log lacks the refusal:\n%s", audit)
			}
			if !bytes.Contains(audit, []byte(`"type":"hook_denied","task":"L1-docs"`)) {
				t.Errorf("audit log lacks the hook's denial of the Write:\n%s", audit)
			}
		})
	}
}

// TestGraphOwningAProtectedPath: a task that owns a protected path could
// never pass, so the graph is refused before anything runs: rush and graph
// validate exit 2 naming the task and the path, and rush writes nothing.
func TestGraphOwningAProtectedPath(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
			return s + "security:\n  protected_paths: [\"docs/**\"]\n"
		})
	})
	want := `task L1-docs: files.create[0]: "docs/usage.md" is protected by "docs/**"`
	for _, args := range [][]string{{"rush", "demo", "--rehearse"}, {"graph", "validate", "demo"}, {"rush", "demo", "--dry-run"}} {
		r := p.zerg(args...)
		if r.code != 2 || !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("zerg %s: exit %d, want 2 naming %q\n%s%s", strings.Join(args, " "), r.code, want, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(p.dir, ".zerg", "runs", "demo")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("rush wrote a run directory: %v", err)
	}
}

// TestClaudeBehindASymlink: the CLI reached through a linked directory
// (node_modules linked from another checkout) runs in the sandbox, where
// only the directories zerg binds exist and the link's own relative target
// would not resolve: zerg starts the resolved file.
func TestClaudeBehindASymlink(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string { return s + modeLines(isolated) })
	})
	real, err := filepath.EvalSymlinks(filepath.Dir(filepath.Dir(claudeBin)))
	if err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(filepath.Dir(p.dir), "linked", "node_modules")
	if err := os.MkdirAll(filepath.Dir(linked), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, linked); err != nil {
		t.Fatal(err)
	}
	env := p.env()
	for i, kv := range env {
		if strings.HasPrefix(kv, "ZERG_CLAUDE=") {
			env[i] = "ZERG_CLAUDE=" + filepath.Join(linked, ".bin", "claude")
		}
	}
	if r := p.zergEnv(env, "rush", "demo", "--rehearse"); r.code != 0 || !strings.Contains(r.stdout, "demo: DELIVERED") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestKillCoordinatorAndResume: SIGKILL `zerg rush` in the middle of a level,
// then --resume: the integration tree is identical to an uninterrupted run's
// and no task is merged twice.
func TestKillCoordinatorAndResume(t *testing.T) {
	t.Parallel()
	want := referenceTree(t)
	p := newProject(t, func(dir string) {
		// Slow level 2 down so the kill lands while its workers run.
		editFile(t, scenarioPath(dir), func(s string) string {
			return strings.Replace(s, "      - tools:\n          - {name: Read, input: {file_path: data/names.txt}}",
				"      - delay: 3s\n        tools:\n          - {name: Read, input: {file_path: data/names.txt}}", 1)
		})
	})
	cmd, _ := p.startRushUntil(runstate.EvAttemptPIDs, "L2-greet-all")
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	st := runstate.Replay(p.events())
	if _, merged := st.Merged[2]; merged || st.Tasks["L2-greet-all"].Open == nil {
		t.Fatalf("the kill did not land inside level 2: %+v", st.Merged)
	}

	r := p.zerg("rush", "demo", "--rehearse", "--resume")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := p.deliverable(); got != want {
		t.Errorf("resumed integration branch differs from the uninterrupted run's:\n%s\nwant:\n%s", got, want)
	}
	st = runstate.Replay(p.events())
	for _, id := range []string{"L1-names", "L1-greet", "L1-upper", "L1-docs", "L2-greet-all", "L2-shout", "L3-tests"} {
		if st.MergeCount[id] != 1 {
			t.Errorf("%s merged %d times", id, st.MergeCount[id])
		}
	}
	// Level 1 was merged before the kill and not run again.
	if st.Tasks["L1-names"].Attempts != 1 {
		t.Errorf("L1-names ran %d attempts, want 1", st.Tasks["L1-names"].Attempts)
	}
	abandoned := 0
	for _, e := range p.events() {
		var d runstate.AttemptFinished
		if e.Type == runstate.EvAttemptFinished && e.Decode(&d) == nil && d.Reason == "abandoned" {
			abandoned++
		}
	}
	if abandoned == 0 {
		t.Error("no attempt recorded as abandoned by the crash")
	}
	p.assertUserUntouched()
	// Nothing is left running in the workspaces.
	if leftovers := processesUnder(filepath.Join(p.home, "workspaces")); len(leftovers) > 0 {
		t.Errorf("processes left running in workspaces: %v", leftovers)
	}
}

// startRushUntil starts `zerg rush demo --rehearse` in the background and
// returns once its log has an event of type typ for task; the output
// collects stdout and stderr.
func (p *project) startRushUntil(typ, task string) (*exec.Cmd, *bytes.Buffer) {
	p.t.Helper()
	cmd := exec.Command(zergBin, "rush", "demo", "--rehearse")
	cmd.Dir, cmd.Env = p.dir, p.env()
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	events := filepath.Join(p.dir, ".zerg", "runs", "demo", "events.jsonl")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		evs, _ := eventlog.Read(events)
		if hasEvent(evs, typ, task) {
			return cmd, out
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			p.t.Fatalf("no %s event for %s:\n%s", typ, task, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func hasEvent(evs []eventlog.Event, typ, task string) bool {
	for _, e := range evs {
		if e.Type == typ && e.Task == task {
			return true
		}
	}
	return false
}

// processesUnder lists live processes whose cwd is inside dir.
func processesUnder(dir string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if !e.IsDir() || strings.Trim(e.Name(), "0123456789") != "" {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err == nil && strings.HasPrefix(cwd, dir) {
			cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			out = append(out, e.Name()+":"+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return out
}
