package rush

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/runstate"
)

// TestKilledStoppedCleanedThenResumed: the coordinator killed with SIGKILL
// in the middle of an attempt (the suites' isolated mode), then zerg stop
// and zerg cleanup. Every workspace cleanup says it kept is the invoking
// user's: their own git works there (no "dubious ownership"), as the line
// says; and zerg rush --resume afterwards delivers, although cleanup
// removed the workers' state directory.
func TestKilledStoppedCleanedThenResumed(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{isolated, "subprocess"} {
		t.Run(mode, func(t *testing.T) { killStopCleanResume(t, mode) })
	}
}

func killStopCleanResume(t *testing.T, mode string) {
	p := newProject(t, func(dir string) {
		editFile(t, scenarioPath(dir), func(s string) string {
			// L1-names writes a file, then waits: the kill lands with
			// uncommitted work in its workspace.
			return strings.Replace(s, "      - text: \"Created data/names.txt with three names.\"",
				"      - delay: 6s\n        tools: [{name: Bash, input: {command: \"true\"}}]\n      - text: \"Created data/names.txt with three names.\"", 1)
		})
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string { return modeLines(mode) + s })
	})
	cmd, _ := p.startRushUntil(runstate.EvAttemptPIDs, "L1-names")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(p.home, "workspaces")); err == nil && len(namesFiles(p.home)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("L1-names never wrote its file")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if st := runstate.Replay(p.events()); st.Tasks["L1-names"].Open == nil {
		t.Fatal("the kill did not land inside L1-names's attempt")
	}
	if r := p.zerg("stop"); r.code != 0 {
		t.Fatalf("stop: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	c := p.zerg("cleanup")
	kept := regexp.MustCompile(`(?m)^kept\s+(\S+) \((.*)\)$`).FindAllStringSubmatch(c.stdout, -1)
	if len(kept) == 0 {
		t.Fatalf("cleanup kept no workspace of the interrupted attempt: the test checks nothing\n%s%s", c.stdout, c.stderr)
	}
	for _, k := range kept {
		ws, why := k[1], k[2]
		if !strings.Contains(why, "yours") {
			continue
		}
		fi, err := os.Stat(ws)
		if err != nil {
			t.Fatal(err)
		}
		if uid := fi.Sys().(*syscall.Stat_t).Uid; int(uid) != os.Getuid() {
			t.Errorf("cleanup says %s is yours, but it belongs to uid %d (you are %d)", ws, uid, os.Getuid())
		}
		g := exec.Command("git", "status", "--porcelain")
		g.Dir, g.Env = ws, append(p.env(), "GIT_CONFIG_NOSYSTEM=1")
		if out, err := g.CombinedOutput(); err != nil {
			t.Errorf("cleanup says %s is yours and git works there, but git status fails: %v\n%s", ws, err, out)
		}
	}
	r := p.zerg("rush", "demo", "--rehearse", "--resume")
	if r.code != 0 || !strings.Contains(r.stdout, "demo: DELIVERED") {
		t.Fatalf("resume after stop and cleanup: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	st := runstate.Replay(p.events())
	for id, n := range st.MergeCount {
		if n != 1 {
			t.Errorf("%s merged %d times", id, n)
		}
	}
}

// namesFiles lists the data/names.txt files in the run's workspaces.
func namesFiles(home string) []string {
	m, _ := filepath.Glob(filepath.Join(home, "workspaces", "*", "demo", "L1-names-1", "data", "names.txt"))
	return m
}
