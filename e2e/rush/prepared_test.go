package rush

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/runstate"
)

// preparedCLIs are the running processes of CLIs waiting for their prompt
// (zerg's prepared workers: --input-format stream-json) whose arguments
// name a path under root.
func preparedCLIs(root string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmd, "--input-format stream-json") && strings.Contains(cmd, root) {
			found = append(found, e.Name()+": "+cmd)
		}
	}
	return found
}

// In sandbox mode the level schedule prepares the next level's workers
// while a level thinks, and the attempts that run take them: the demo
// delivers, and its later levels' first attempts ran on prepared workers.
// Control: no attempt of level 1 can have (nothing runs before it).
func TestPreparedWorkersRunTheNextLevels(t *testing.T) {
	t.Parallel()
	if isolated != "sandbox" {
		t.Skipf("workers are prepared in sandbox mode only; this run's isolated mode is %s", isolated)
	}
	p := newProject(t, nil)
	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 0 {
		t.Fatalf("rush: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	prepared := map[string]bool{}
	for _, e := range p.events() {
		if e.Type != runstate.EvAttemptFinished {
			continue
		}
		var af runstate.AttemptFinished
		if err := e.Decode(&af); err != nil {
			t.Fatal(err)
		}
		if af.Phases != nil && af.Phases.Prepared {
			prepared[e.Task] = true
		}
	}
	for task := range prepared {
		if strings.HasPrefix(task, "L1-") {
			t.Errorf("control: %s of level 1 ran on a prepared worker", task)
		}
	}
	for _, task := range []string{"L2-greet-all", "L3-tests"} {
		if !prepared[task] {
			t.Errorf("%s did not run on a prepared worker (prepared: %v)", task, prepared)
		}
	}
	if left := preparedCLIs(p.home); len(left) > 0 {
		t.Errorf("prepared CLIs left after the run: %v", left)
	}
}

// A prepared worker that no attempt takes (its level never runs: level 1
// fails) leaves nothing behind: no process, no workspace, no worker state,
// no attempt record, no gateway socket. Control: while level 1 ran, the
// next level's workers were there, waiting.
func TestUnusedPreparedWorkerLeavesNothing(t *testing.T) {
	t.Parallel()
	if isolated != "sandbox" {
		t.Skipf("workers are prepared in sandbox mode only; this run's isolated mode is %s", isolated)
	}
	p := newProject(t, func(dir string) {
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
			return strings.Replace(s, "task_retries: 2", "task_retries: 0", 1)
		})
		// L1-docs thinks for a while, then writes nothing: its task fails,
		// and so level 1.
		editFile(t, filepath.Join(dir, ".zerg", "specs", "demo", "scenario.yaml"), func(s string) string {
			old := `      - tools: [{name: Write, input: {file_path: docs/usage.md, content: "# Usage\n\n- ` + "`sh bin/greet-all`" + ` greets every name in data/names.txt.\n- ` + "`sh bin/shout`" + ` prints them upper-cased.\n"}}]
      - text: "Wrote docs/usage.md."`
			if !strings.Contains(s, old) {
				t.Fatal("the demo scenario's L1-docs turns changed: update this test")
			}
			return strings.Replace(s, old, "      - delay: 8s\n        text: \"Nothing to write.\"", 1)
		})
	})
	// zerg's temporary directory of its own, for its gateway sockets: the
	// worker users pass through it, as through /tmp.
	tmp := filepath.Join(p.home, "tmp")
	if err := os.Mkdir(tmp, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o711); err != nil {
		t.Fatal(err)
	}
	env := append(p.env(), "TMPDIR="+tmp)
	seen := make(chan []string, 1)
	stop := make(chan struct{})
	go func() {
		var most []string
		defer func() { seen <- most }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if now := preparedCLIs(p.home); len(now) > len(most) {
				most = now
			}
		}
	}()
	r := p.zergEnv(env, "rush", "demo", "--rehearse")
	close(stop)
	waiting := <-seen
	if r.code == 0 || !strings.Contains(r.stdout, "L1-docs FAILED") {
		t.Fatalf("want level 1 to fail on L1-docs: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if len(waiting) < 2 {
		t.Fatalf("control: %d prepared workers were seen waiting during level 1, want level 2's two: %v", len(waiting), waiting)
	}
	if left := preparedCLIs(p.home); len(left) > 0 {
		t.Errorf("prepared CLIs still running after the run: %v", left)
	}
	workspaces, _ := filepath.Glob(filepath.Join(p.home, "workspaces", "*", "demo", "L2-*"))
	state, _ := filepath.Glob(filepath.Join(p.home, "workspaces", "*", "demo", "_state", "L2-*"))
	if workspaces = append(workspaces, state...); len(workspaces) > 0 {
		t.Errorf("level 2's workspaces or worker state are still there: %v", workspaces)
	}
	records, _ := filepath.Glob(filepath.Join(p.dir, ".zerg", "runs", "demo", "attempts", "L2-*"))
	if len(records) > 0 {
		t.Errorf("level 2's attempt records are still there: %v", records)
	}
	sockets, _ := filepath.Glob(filepath.Join(tmp, "zerg-gw-*"))
	if len(sockets) > 0 {
		t.Errorf("gateway socket directories are still there: %v", sockets)
	}
}
