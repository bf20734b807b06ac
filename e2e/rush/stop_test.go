package rush

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/runstate"
)

// TestStopThenResume: zerg stop ends a running rush gracefully (exit 3, the
// stop recorded, no worker process left), and --resume then delivers.
func TestStopThenResume(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		editFile(t, scenarioPath(dir), func(s string) string {
			// A slow level 1, so the stop lands while workers run.
			return strings.Replace(s, "      - tools: [{name: Write, input: {file_path: data/names.txt",
				"      - delay: 4s\n        tools: [{name: Write, input: {file_path: data/names.txt", 1)
		})
	})
	cmd, out := p.startRushUntil(runstate.EvAttemptPIDs, "L1-names")
	s := p.zerg("stop")
	if s.code != 0 || !strings.Contains(s.stdout, "stopping the coordinator of demo") {
		t.Errorf("stop: exit %d\n%s%s", s.code, s.stdout, s.stderr)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("rush after stop: %v, want exit 3\n%s", err, out.String())
	}
	evs := p.events()
	st := runstate.Replay(evs)
	if st.Stopped == nil {
		t.Error("no run_stopped event")
	}
	if left := runProcesses(evs); len(left) > 0 {
		t.Errorf("processes left after stop: %v", left)
	}
	if r := p.zerg("stop"); !strings.Contains(r.stdout, "demo is not running") {
		t.Errorf("second stop: %s", r.stdout)
	}
	r := p.zerg("rush", "demo", "--rehearse", "--resume")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	st = runstate.Replay(p.events())
	for id, n := range st.MergeCount {
		if n != 1 {
			t.Errorf("%s merged %d times", id, n)
		}
	}
	if len(st.MergeCount) != 7 {
		t.Errorf("%d tasks merged, want 7", len(st.MergeCount))
	}
}
