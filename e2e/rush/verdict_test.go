package rush

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zergrush/zerg/internal/mockapi"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// writeLevel1Graph replaces the demo's graph with level 1 only, each task's
// verification `true` (a check that cannot fail, as a hasty graph has),
// and L1-docs creating two files.
func writeLevel1Graph(t *testing.T, dir string) {
	t.Helper()
	var tasks []any
	for _, tk := range []struct {
		id     string
		create []string
	}{
		{"L1-names", []string{"data/names.txt"}}, {"L1-greet", []string{"lib/greet.sh"}},
		{"L1-upper", []string{"lib/upper.sh"}}, {"L1-docs", []string{"docs/usage.md", "docs/extra.md"}},
	} {
		tasks = append(tasks, map[string]any{"id": tk.id, "title": tk.id, "level": 1,
			"files": map[string]any{"create": tk.create}, "verification": map[string]any{"command": "true"}})
	}
	b, _ := json.Marshal(map[string]any{"feature": "demo", "tasks": tasks})
	if err := os.WriteFile(filepath.Join(dir, ".zerg", "specs", "demo", "task-graph.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
		return strings.Replace(s, "task_retries: 2", "task_retries: 0", 1)
	})
}

// TestEmptyWorkIsNotDelivered: the scripted model matches no task (a
// scenario for another feature), so every worker just answers "done".
// Their verifications pass on the base (`true`), so only the attempt's
// completeness check stands between that and a delivered branch: no task
// is merged, each fails as empty_change, and zerg check warned beforehand
// that the checks cannot fail.
func TestEmptyWorkIsNotDelivered(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		writeLevel1Graph(t, dir)
		if err := os.WriteFile(scenarioPath(dir), []byte("tasks:\n  - name: other\n    match: \"Task of another feature:\"\n    turns:\n      - text: done\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	chk := p.zerg("check", "demo")
	if chk.code != 0 || strings.Count(chk.stdout, "a check that cannot fail") != 4 {
		t.Errorf("zerg check: exit %d, want 0 with 4 warnings:\n%s%s", chk.code, chk.stdout, chk.stderr)
	}
	if strict := p.zerg("check", "demo", "--strict"); strict.code != 1 {
		t.Errorf("zerg check --strict: exit %d, want 1", strict.code)
	}
	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (not delivered)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// The check just ran on the same base with the same commands: the rush
	// reuses it rather than running every command again.
	if !strings.Contains(r.stderr, "zerg: check: reused the check of") {
		t.Errorf("the rush ran the check again minutes after zerg check:\n%s", r.stderr)
	}
	evs := p.events()
	for _, e := range evs {
		if e.Type == runstate.EvLevelMerged {
			t.Errorf("a level was merged: %s", e.Data)
		}
	}
	for _, id := range []string{"L1-names", "L1-greet", "L1-upper", "L1-docs"} {
		if got := attemptReason(evs, id, 1); got != "empty_change" {
			t.Errorf("%s attempt 1: %q, want empty_change", id, got)
		}
	}
	if out, err := exec.Command("git", "-C", p.dir, "rev-parse", "--verify", "-q", run.IntegrationBranch("demo")).Output(); err == nil && strings.TrimSpace(string(out)) != p.base {
		t.Errorf("the integration branch moved to %s", out)
	}
	if !strings.Contains(r.stdout, "changed nothing") {
		t.Errorf("the report does not say the workers changed nothing:\n%s", r.stdout)
	}
	if strings.Count(r.stdout, "diagnosis: empty_change (100% sure)") != 4 {
		t.Errorf("the report does not diagnose each task as empty_change:\n%s", r.stdout)
	}
}

// TestMissingCreatedFileIsNotDelivered: L1-docs writes docs/usage.md but
// not docs/extra.md, which its task also creates: it fails as
// missing_file and the level is not merged; the others did their work.
func TestMissingCreatedFileIsNotDelivered(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) { writeLevel1Graph(t, dir) })
	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	evs := p.events()
	if got := attemptReason(evs, "L1-docs", 1); got != "missing_file" {
		t.Errorf("L1-docs attempt 1: %q, want missing_file", got)
	}
	for _, id := range []string{"L1-names", "L1-greet", "L1-upper"} {
		if got := attemptReason(evs, id, 1); got != "completed" {
			t.Errorf("%s attempt 1: %q, want completed (the control: real work passes)", id, got)
		}
	}
	if !strings.Contains(r.stdout, "docs/extra.md") {
		t.Errorf("the report does not name docs/extra.md:\n%s", r.stdout)
	}
}

// TestCrashRecoverySandbox: in sandbox mode, the coordinator is killed
// (SIGKILL) while L1-docs's verification runs (its worker had finished)
// and while L1-names's worker still waits for the model. The resume takes
// L1-docs's finished work through the checks and commits it once, without
// running it again, and saves L1-names's unfinished work to its branch
// before running it again. Then cleanup --all leaves no cache of zerg's
// for the repository.
func TestCrashRecoverySandbox(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		editFile(t, filepath.Join(dir, ".zerg", "specs", "demo", "task-graph.json"), func(s string) string {
			return strings.Replace(s, `"grep -q greet-all docs/usage.md"`, `"sleep 4 && grep -q greet-all docs/usage.md"`, 1)
		})
		editFile(t, scenarioPath(dir), func(s string) string {
			return strings.Replace(s, "    match: \"Task L1-names:\"\n    turns:\n      - tools:", "    match: \"Task L1-names:\"\n    turns:\n      - delay: 30s\n        tools:", 1)
		})
	})
	// What an earlier zerg left: a build cache per worker user.
	old := filepath.Join(p.home, "workspaces")
	cmd, out := p.startRushUntil(runstate.EvAttemptVerifying, "L1-docs")
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	st := runstate.Replay(p.events())
	if st.Tasks["L1-docs"].Open == nil || st.Tasks["L1-names"].Open == nil {
		t.Fatalf("the kill did not land while L1-docs verified and L1-names ran:\n%s", out)
	}
	editFile(t, scenarioPath(p.dir), func(s string) string {
		return strings.Replace(s, "      - delay: 30s\n        tools:", "      - tools:", 1)
	})
	matches, _ := filepath.Glob(filepath.Join(old, "*", "demo"))
	if len(matches) != 1 {
		t.Fatalf("workspaces: %v", matches)
	}
	oldCaches := filepath.Join(filepath.Dir(matches[0]), ".caches", "zerg-worker-1", "go-build")
	os.MkdirAll(oldCaches, 0o755)
	os.WriteFile(filepath.Join(oldCaches, "entry"), []byte("cached"), 0o644)
	// A snapshot cut short after its commit: zerg's own commit of L1-docs's
	// work already on the base in the workspace (the kill can land between
	// the commit and the bundle). The resume must still make it one commit
	// on the base; stacking a second one failed the task as a workspace
	// whose history was changed.
	snapshotCommitted(t, filepath.Join(matches[0], "L1-docs-1"))

	r := p.zerg("rush", "demo", "--rehearse", "--resume")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	st = runstate.Replay(p.events())
	if d := st.Tasks["L1-docs"]; d.Attempts != 1 || st.MergeCount["L1-docs"] != 1 {
		t.Errorf("L1-docs: %d attempts, merged %d times; want its finished attempt committed once, not redone", d.Attempts, st.MergeCount["L1-docs"])
	}
	if !strings.Contains(r.stderr, "L1-docs: attempt 1 had finished") {
		t.Errorf("the resume does not say L1-docs's work was recovered:\n%s", r.stderr)
	}
	var names runstate.AttemptFinished
	for _, e := range p.events() {
		if e.Type == runstate.EvAttemptFinished && e.Task == "L1-names" && e.Attempt == 1 {
			e.Decode(&names)
		}
	}
	if names.Reason != "abandoned" || names.Commit == "" {
		t.Errorf("L1-names attempt 1: %+v, want abandoned with its work saved to its branch", names)
	}
	if leftovers := processesUnder(old); len(leftovers) > 0 {
		t.Errorf("processes left in the workspaces: %v", leftovers)
	}

	c := p.zerg("cleanup", "demo", "--all", "--force")
	if c.code != 0 {
		t.Errorf("cleanup --all --force: exit %d\n%s%s", c.code, c.stdout, c.stderr)
	}
	filepath.WalkDir(old, func(path string, d os.DirEntry, err error) error {
		if err == nil && (d.Name() == ".caches" || d.Name() == "cache" || d.Name() == "go-build") {
			t.Errorf("a cache of zerg's is left: %s", path)
		}
		return nil
	})
}

// TestKeptWorkspaceIsYours: a sandboxed attempt whose result zerg refuses
// (a key in a file) keeps its workspace for a person: handed back, so
// their own git works there, with the worker's .git/config set aside; zerg
// cleanup says why it is kept.
func TestKeptWorkspaceIsYours(t *testing.T) {
	t.Parallel()
	key := "sk-ant-api03-" + strings.Repeat("Qw3rTy7Ui9Op", 7) + "ZxCvBnMaSdF-AA"
	p := newProject(t, func(dir string) {
		editFile(t, scenarioPath(dir), func(s string) string {
			return strings.Replace(s, `      - text: "Wrote docs/usage.md."`,
				"      - tools: [{name: Write, input: {file_path: docs/key.txt, content: \"KEY="+key+"\\n\"}}]\n      - text: \"Wrote docs/usage.md.\"", 1)
		})
		editFile(t, filepath.Join(dir, ".zerg", "specs", "demo", "task-graph.json"), func(s string) string {
			return strings.Replace(s, `"create": ["docs/usage.md"]`, `"create": ["docs/usage.md", "docs/key.txt"]`, 1)
		})
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
			return strings.Replace(s, "task_retries: 2", "task_retries: 0", 1)
		})
	})
	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 1 || attemptReason(p.events(), "L1-docs", 1) != "secret_found" {
		t.Fatalf("exit %d, L1-docs %q; want its key refused\n%s\n%s", r.code, attemptReason(p.events(), "L1-docs", 1), r.stdout, r.stderr)
	}
	kept, _ := filepath.Glob(filepath.Join(p.home, "workspaces", "*", "demo", "L1-docs-1"))
	if len(kept) != 1 {
		t.Fatalf("kept workspaces: %v", kept)
	}
	ws := kept[0]
	if out, err := exec.Command("git", "-C", ws, "status", "--short").CombinedOutput(); err != nil {
		t.Errorf("git status in the kept workspace, as the user who ran zerg: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "config.worker")); err != nil {
		t.Errorf("the worker's .git/config was not set aside: %v", err)
	}
	c := p.zerg("cleanup", "demo")
	if !strings.Contains(c.stdout, ws) || !strings.Contains(c.stdout, "zerg refused to commit it") || !strings.Contains(c.stdout, "git works there") {
		t.Errorf("cleanup does not say why it keeps %s:\n%s%s", ws, c.stdout, c.stderr)
	}
}

// upperTest is L1-upper's verification in TestDiagnosisGuidesTheRetry: a
// test that names itself and says what it got and wanted when it fails.
const upperTest = `. ./lib/upper.sh && out=$(echo 'ada 42' | upper) && if [ "$out" != 'ADA 42' ]; then echo "--- FAIL: test_upper_keeps_digits"; echo "    upper('ada 42') = '$out', want 'ADA 42'"; exit 1; fi`

// guidedRetry: L1-upper's first answer drops digits. Its fix is
// scripted to come only when the prompt carries the failing test's name
// and message (what the test got, which only its output says: the prompt
// shows the verification command too), as a model needs them to find the
// bug.
const guidedRetry = `  - name: upper-fixed
    match_regexp: "(?s)Task L1-upper:.*test_upper_keeps_digits.*= 'ADA ', want 'ADA 42'"
    turns:
      - tools: [{name: Write, input: {file_path: lib/upper.sh, content: "upper() {\n  tr '[:lower:]' '[:upper:]'\n}\n"}}]
      - text: "upper keeps digits now."
  - name: upper
    match: "Task L1-upper:"
    turns:
      - tools: [{name: Write, input: {file_path: lib/upper.sh, content: "upper() {\n  tr -cd '[:alpha:] ' | tr '[:lower:]' '[:upper:]'\n}\n"}}]
      - text: "Added upper to lib/upper.sh."
`

// TestDiagnosisGuidesTheRetry: L1-upper's first attempt fails its test.
// The retry's prompt carries the diagnosis, the failing test's name and
// message and the failed diff, so the scripted model fixes the bug and the
// run delivers. The control: the prompt a blind retry sends (the first
// prompt again, or with the old "failed: verification_failed, fix that"
// line) gets the same wrong answer from the same script.
func TestDiagnosisGuidesTheRetry(t *testing.T) {
	t.Parallel()
	var sc *mockapi.Scenario
	p := newProject(t, func(dir string) {
		editFile(t, filepath.Join(dir, ".zerg", "specs", "demo", "task-graph.json"), func(s string) string {
			q, _ := json.Marshal(upperTest)
			return strings.Replace(s, `". ./lib/upper.sh && [ \"$(echo hi | upper)\" = HI ]"`, string(q), 1)
		})
		editFile(t, scenarioPath(dir), func(s string) string {
			i := strings.Index(s, "  - name: upper\n")
			j := strings.Index(s, "  - name: docs\n")
			return s[:i] + guidedRetry + "\n" + s[j:]
		})
		var err error
		if sc, err = mockapi.LoadScenario(scenarioPath(dir)); err != nil {
			t.Fatal(err)
		}
	})
	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (delivered by the guided retry)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	evs := p.events()
	if got := attemptReason(evs, "L1-upper", 1); got != "verification_failed" {
		t.Fatalf("L1-upper attempt 1: %q, want verification_failed", got)
	}
	if got := attemptReason(evs, "L1-upper", 2); got != "completed" {
		t.Fatalf("L1-upper attempt 2: %q, want completed", got)
	}
	read := func(n int) string {
		b, err := os.ReadFile(filepath.Join(p.dir, ".zerg", "runs", "demo", "attempts", "L1-upper", fmt.Sprint(n), "prompt.md"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	first, retry := read(1), read(2)
	for _, want := range []string{"Diagnosis: ", "test_upper_keeps_digits", "= 'ADA ', want 'ADA 42'", "tr -cd", "starts from the base again"} {
		if !strings.Contains(retry, want) {
			t.Errorf("the retry prompt lacks %q", want)
		}
	}
	fixed, wrong := sc.Tasks[findTask(t, sc, "upper-fixed")], sc.Tasks[findTask(t, sc, "upper")]
	if !fixed.Matches(retry) {
		t.Errorf("the retry prompt does not get the fix")
	}
	// The control: blind retries get the wrong answer again.
	oldTail := first + "\n## Previous attempt failed\nAn earlier attempt of this task failed: verification_failed: exit status 1\nFix that this time.\n"
	for name, blind := range map[string]string{"the same prompt": first, "the old retry line": oldTail} {
		if fixed.Matches(blind) || !wrong.Matches(blind) {
			t.Errorf("control: a blind retry with %s would get the fix; the test proves nothing", name)
		}
	}
	// What broke is said where a person looks.
	d := p.zerg("diagnose", "demo", "L1-upper", "--attempt", "1", "--json")
	if d.code != 0 || !strings.Contains(d.stdout, `"hypotheses"`) || !strings.Contains(d.stdout, "test_upper_keeps_digits") {
		t.Errorf("zerg diagnose demo L1-upper --attempt 1: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	if l := p.zerg("logs", "demo", "L1-upper"); !strings.Contains(l.stdout, "-- diagnosis: ") {
		t.Errorf("zerg logs shows no diagnosis:\n%s", l.stdout)
	}
}

func findTask(t *testing.T, sc *mockapi.Scenario, name string) int {
	t.Helper()
	for i, tk := range sc.Tasks {
		if tk.Name == name {
			return i
		}
	}
	t.Fatalf("no scenario task %s", name)
	return -1
}

// snapshotCommitted commits everything in the sandboxed workspace ws as
// zerg's snapshot does (same identity and message), as the workspace's
// owner: what a snapshot cut short after its commit leaves.
func snapshotCommitted(t *testing.T, ws string) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(ws, &st); err != nil {
		t.Fatalf("the workspace of L1-docs: %v", err)
	}
	git := []string{"setpriv", fmt.Sprintf("--reuid=%d", st.Uid), fmt.Sprintf("--regid=%d", st.Gid), "--clear-groups",
		"env", "HOME=" + ws, "git", "-C", ws, "-c", "safe.directory=*", "-c", "core.hooksPath=/dev/null",
		"-c", "user.name=zerg", "-c", "user.email=zerg@localhost", "-c", "commit.gpgSign=false"}
	for _, args := range [][]string{{"add", "-A", "."}, {"commit", "-q", "--no-verify", "--allow-empty", "-m", "attempt"}} {
		if out, err := exec.Command(git[0], append(git[1:], args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v in %s: %v\n%s", args, ws, err, out)
		}
	}
}
