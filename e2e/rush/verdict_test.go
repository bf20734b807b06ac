package rush

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zergrush/zerg/internal/run"
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
	evs := p.events()
	for _, e := range evs {
		if e.Type == run.EvLevelMerged {
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
}

// TestMissingCreatedFileIsNotDelivered: L1-docs writes docs/usage.md but
// not docs/extra.md, which its task also creates: it fails as
// missing_file and the level is not merged; the others did their work.
func TestMissingCreatedFileIsNotDelivered(t *testing.T) {
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
	cmd, out := p.startRushUntil(run.EvAttemptVerifying, "L1-docs")
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	st := run.Replay(p.events())
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

	r := p.zerg("rush", "demo", "--rehearse", "--resume")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	st = run.Replay(p.events())
	if d := st.Tasks["L1-docs"]; d.Attempts != 1 || st.MergeCount["L1-docs"] != 1 {
		t.Errorf("L1-docs: %d attempts, merged %d times; want its finished attempt committed once, not redone", d.Attempts, st.MergeCount["L1-docs"])
	}
	if !strings.Contains(r.stderr, "L1-docs: attempt 1 had finished") {
		t.Errorf("the resume does not say L1-docs's work was recovered:\n%s", r.stderr)
	}
	var names run.AttemptFinished
	for _, e := range p.events() {
		if e.Type == run.EvAttemptFinished && e.Task == "L1-names" && e.Attempt == 1 {
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
