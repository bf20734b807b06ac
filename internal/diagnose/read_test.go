package diagnose

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func TestClassWords(t *testing.T) {
	for c, want := range map[Class]string{
		Task:        "the task's own problem: a retry told this can fix it",
		Environment: "the environment's problem: every worker meets it, no retry fixes it",
		API:         "the model API's or the worker process's problem",
		"":          "no known pattern fits",
	} {
		if got := c.Words(); got != want {
			t.Errorf("%q.Words() = %q, want %q", c, got, want)
		}
	}
}

// TestReadOutput: an output is diagnosed as Diagnose would; an empty one is
// ErrEmpty naming where it came from; a read error names it too.
func TestReadOutput(t *testing.T) {
	out := "--- FAIL: TestX (0.00s)\n    x_test.go:12: got 1, want 2\nFAIL\n"
	d, err := ReadOutput(strings.NewReader(out), "stdin", 1<<20, Input{Command: "go test ./..."}, "")
	want := Diagnose(Input{Output: out, Command: "go test ./..."})
	if err != nil || d.Top().Pattern != want.Top().Pattern {
		t.Fatalf("ReadOutput: %+v %v, want %s", d.Top(), err, want.Top().Pattern)
	}
	_, err = ReadOutput(strings.NewReader(" \n\t\n"), "out.txt", 1<<20, Input{}, "")
	if !errors.Is(err, ErrEmpty) || err.Error() != "out.txt is empty: nothing to diagnose" {
		t.Errorf("empty: %v", err)
	}
	_, err = ReadOutput(iotest.ErrReader(errors.New("boom")), "stdin", 1<<20, Input{}, "")
	if err == nil || err.Error() != "read stdin: boom" {
		t.Errorf("read error: %v", err)
	}
	// Only the first limit bytes are read: space first is empty.
	if _, err := ReadOutput(strings.NewReader("    FAIL"), "stdin", 4, Input{}, ""); !errors.Is(err, ErrEmpty) {
		t.Errorf("limit: %v", err)
	}
}

// TestReadFile: a diagnosis with hypotheses is read; a missing, broken or
// empty one is not.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	b, _ := json.Marshal(Diagnosis{Hypotheses: []Hypothesis{{Pattern: "test_failure", Confidence: 0.9}}})
	os.WriteFile(good, b, 0o644)
	if d, ok := ReadFile(good); !ok || d.Top().Pattern != "test_failure" {
		t.Errorf("good: %+v %v", d, ok)
	}
	os.WriteFile(filepath.Join(dir, "broken.json"), []byte("{"), 0o644)
	os.WriteFile(filepath.Join(dir, "empty.json"), []byte(`{"hypotheses":[]}`), 0o644)
	for _, name := range []string{"missing.json", "broken.json", "empty.json"} {
		if _, ok := ReadFile(filepath.Join(dir, name)); ok {
			t.Errorf("%s read as a diagnosis", name)
		}
	}
}
