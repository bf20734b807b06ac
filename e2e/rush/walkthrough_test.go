package rush

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// TestRushWarnings: a rehearsal warns, one line each, and goes on to
// deliver: of a scenario task that matches no prompt of the run (here one
// for a task the graph does not have; the scenario's review task, for zerg
// review, is no warning), and of a dirty working tree: the run starts from
// HEAD (the committed state), and a changed file a task owns is named with
// its task. The delivered file is the worker's, and the user's uncommitted
// one is left as it was. (One rush for both: each costs seconds.)
func TestRushWarnings(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		editFile(t, scenarioPath(dir), func(s string) string {
			return strings.Replace(s, "\ntasks:\n", "\ntasks:\n  - name: stale\n    match: \"Task L9-gone:\"\n    turns: [{text: done}]\n", 1)
		})
	})
	mine := "greet() { echo mine; }\n"
	if err := os.MkdirAll(filepath.Join(p.dir, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, "lib", "greet.sh"), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	editFile(t, filepath.Join(p.dir, "README.md"), func(s string) string { return s + "\nan edit\n" })
	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var warnings []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(l, "zerg: warning: ") && (strings.Contains(l, "scenario") || strings.Contains(l, "uncommitted")) {
			warnings = append(warnings, l)
		}
	}
	dirty := "zerg: warning: the working tree has uncommitted changes (2 files) and the run starts from HEAD (" + p.base[:10] +
		", the committed state), not from the working tree: tasks of demo own 1 of them: lib/greet.sh (L1-greet);"
	stale := `zerg: warning: .zerg/specs/demo/scenario.yaml: task "stale" (match "Task L9-gone:") matches no task of demo's graph`
	if len(warnings) != 2 || !strings.HasPrefix(warnings[0], dirty) || !strings.HasPrefix(warnings[1], stale) {
		t.Errorf("warnings:\n%s\nwant two, starting:\n%s\n%s", strings.Join(warnings, "\n"), dirty, stale)
	}
	if got := p.git("show", run.IntegrationBranch("demo")+":lib/greet.sh"); strings.Contains(got, "mine") {
		t.Errorf("the delivered lib/greet.sh is the uncommitted one:\n%s", got)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "lib", "greet.sh")); string(b) != mine {
		t.Errorf("the user's lib/greet.sh changed: %q", b)
	}
}

// TestRushPipedIntoHead: zerg rush … 2>&1 | head -1 does not kill the
// coordinator when head exits, after the first progress line and before
// any worker starts: the run goes on to its end, exits 0 and delivers, and
// its log is whole.
func TestRushPipedIntoHead(t *testing.T) {
	t.Parallel()
	p := newProject(t, nil)
	rc := filepath.Join(t.TempDir(), "rc")
	cmd := exec.Command("sh", "-c", `{ "$ZERG" rush demo --rehearse 2>&1; echo $? > "$RC"; } | head -1`)
	cmd.Dir = p.dir
	cmd.Env = append(p.env(), "ZERG="+zergBin, "RC="+rc)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Count(string(out), "\n") != 1 {
		t.Errorf("head printed %q", out)
	}
	if b, err := os.ReadFile(rc); err != nil || strings.TrimSpace(string(b)) != "0" {
		t.Fatalf("zerg rush exit status %q (%v), want 0: the coordinator died with its reader", b, err)
	}
	v := p.statusJSON()
	if v.State != runstate.RunDelivered || v.Coordinator.Alive || v.Rejected != 0 {
		t.Errorf("status: %s, coordinator %+v, %d rejected events", v.State, v.Coordinator, v.Rejected)
	}
	for _, tv := range v.Tasks {
		if tv.Status != runstate.StatusMerged {
			t.Errorf("%s is %s", tv.ID, tv.Status)
		}
	}
	if evs := p.events(); evs[len(evs)-1].Type != runstate.EvRunFinished {
		t.Errorf("the log ends with %s, not run_finished", evs[len(evs)-1].Type)
	}
	files := p.integrationFiles()
	for _, f := range allDemoFiles {
		if !files[f] {
			t.Errorf("%s missing from the integration branch", f)
		}
	}
}
