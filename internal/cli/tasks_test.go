package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/config"
)

// TestUnknownTaskIsNamed: retry, logs and context say the same thing of a
// task the feature does not have: exit 2, one line naming the task and the
// feature and listing its tasks; retry writes nothing to the log.
func TestUnknownTaskIsNamed(t *testing.T) {
	f := newFakeRun(t, "auth", false)
	graph := []byte(`{"feature": "auth", "tasks": [
		{"id": "T1", "title": "one", "level": 1, "files": {"create": ["a.txt"]}, "verification": {"command": "true"}},
		{"id": "T2", "title": "two", "level": 1, "files": {"create": ["b.txt"]}, "verification": {"command": "true"}}]}`)
	writeFile(t, f.paths.GraphSnapshot, graph)
	writeFile(t, filepath.Join(f.root, ".zerg", "specs", "auth", "task-graph.json"), graph)
	before, err := os.ReadFile(f.paths.Events)
	if err != nil {
		t.Fatal(err)
	}
	const want = `zerg: unknown task "NOPE" in feature auth (its tasks: T1, T2)` + "\n"
	for _, args := range [][]string{
		{"retry", "auth", "NOPE"},
		{"retry", "NOPE"},
		{"retry", "auth", "T1", "NOPE"}, // all or nothing: T1 is not requeued either
		{"logs", "auth", "NOPE"},
		{"logs", "NOPE"},
		{"context", "auth", "NOPE"},
	} {
		code, out, errOut := runZerg(t, args...)
		if code != ExitUsage || out != "" || errOut != want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", args, code, out, errOut, want)
		}
	}
	if after, _ := os.ReadFile(f.paths.Events); !bytes.Equal(before, after) {
		t.Errorf("the run log changed:\n%s", after)
	}
	// A task of the feature without attempts is still told apart.
	if code, _, errOut := runZerg(t, "logs", "auth", "T2"); code != ExitUsage || !strings.Contains(errOut, "task T2 has no attempts in the run of auth") {
		t.Errorf("logs T2: exit %d %q", code, errOut)
	}
}

// With nothing ready, the next step names what the run waits for in its
// schedule: a level under level, batches and dependencies under dag.
func TestTasksNextStepSpeaksOfTheSchedule(t *testing.T) {
	if got := sessionNext("f", config.ScheduleDAG, 0, 0); strings.Contains(got, "level") || !strings.Contains(got, "dependencies") {
		t.Errorf("dag: %q", got)
	}
	if got := sessionNext("f", config.ScheduleLevel, 0, 0); !strings.Contains(got, "a level is being checked") {
		t.Errorf("level: %q", got)
	}
	if got := sessionNext("f", config.ScheduleDAG, 2, 0); !strings.Contains(got, "start one Task subagent per task") {
		t.Errorf("fresh leases: %q", got)
	}
}
