package cli

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// TestPipeSafe: after survivePipes, a write to a pipe whose reader has gone
// says it succeeded and so do the ones after it (term.SurvivePipes tests
// the rest).
func TestPipeSafe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	a := &app{stdout: w, stderr: w}
	a.survivePipes()
	if n, err := a.stdout.Write([]byte("one\n")); n != 4 || err != nil {
		t.Fatalf("open pipe: %d %v", n, err)
	}
	r.Close()
	for i := 0; i < 2; i++ {
		if n, err := a.stdout.Write([]byte("two\n")); n != 4 || err != nil {
			t.Fatalf("closed pipe, write %d: %d %v; want it dropped without an error", i+1, n, err)
		}
	}
}

// TestRushOutputSurvivesAClosedPipe: a rush whose report cannot be written
// still exits with the run's own status: here a dry run (exit 0) whose
// stdout reader has gone.
func TestRushOutputSurvivesAClosedPipe(t *testing.T) {
	f := newFakeRun(t, "other", false)
	writeFile(t, f.root+"/.zerg/specs/auth/task-graph.json", []byte(`{"feature": "auth", "tasks": [
		{"id": "T1", "title": "one", "level": 1, "files": {"create": ["a.go"]}, "verification": {"command": "test -f a.go"}}]}`))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r.Close()
	var errb bytes.Buffer
	if code := Run(context.Background(), []string{"rush", "auth", "--dry-run", "--json"}, w, &errb); code != ExitOK {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}
