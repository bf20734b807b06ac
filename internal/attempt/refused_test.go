package attempt

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/spec"
)

// TestRefusedWrites: the writes the worker's CLI refused are read against
// the task (a file it does not own, a protected one, one outside the
// workspace, an owned one refused for another reason), each once; other
// refused calls are not writes. They are on the result and in its
// record, a success stays one, and with security.refused_writes: fail
// the attempt fails as write_refused, naming them, its work on its branch.
func TestRefusedWrites(t *testing.T) {
	task := &spec.Task{ID: "T1", Title: "greet", Files: spec.Files{Create: []string{"greet.go"}}}
	for _, fail := range []bool{false, true} {
		repo, base := testRepo(t)
		dir := t.TempDir()
		ws := filepath.Join(dir, "ws")
		d := &fakeDriver{files: map[string]string{"greet.go": "package x"}, refused: []driver.Refusal{
			{Tool: "Write", Path: "test/greet_test.go"},
			{Tool: "Edit", Path: filepath.Join(ws, "test", "greet_test.go")}, // the same file, absolute
			{Tool: "Write", Path: ".github/workflows/ci.yml"},
			{Tool: "Write", Path: "/etc/passwd"},
			{Tool: "Write", Path: "greet.go", Reason: "denied: Write greet.go: a link out of the workspace"},
			{Tool: "Bash", Path: ""},
			{Tool: "Read", Path: "/root/.ssh/id_rsa"},
		}}
		in := Input{Driver: d, Repo: repo, Feature: "f", Graph: &spec.Graph{Tasks: []*spec.Task{task}}, Task: task, Number: 1,
			Base: base, Workspace: ws, Branch: "zerg/f/T1-1", Dir: filepath.Join(dir, "rec"), FailRefusedWrites: fail}
		res, err := Run(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		want := []RefusedWrite{{Path: "test/greet_test.go", Tool: "Write", Why: WhyNotOwned}, {Path: ".github/workflows/ci.yml", Tool: "Write", Why: WhyProtected},
			{Path: "/etc/passwd", Tool: "Write", Why: WhyOutside}, {Path: "greet.go", Tool: "Write", Why: "refused: Write greet.go: a link out of the workspace"}}
		if !slices.Equal(res.RefusedWrites, want) {
			t.Errorf("refused writes %+v, want %+v", res.RefusedWrites, want)
		}
		if got := ReadRefused(in.Dir); !slices.Equal(got, want) {
			t.Errorf("the record holds %+v", got)
		}
		switch {
		case !fail && (res.Class != outcome.Success || res.Reason != outcome.ReasonCompleted):
			t.Errorf("report mode: %s %s (%s), want a success", res.Class, res.Reason, res.Detail)
		case fail && (res.Class != outcome.Task || res.Reason != outcome.ReasonWriteRefused || !strings.Contains(res.Detail, "test/greet_test.go, not owned; .github/workflows/ci.yml, protected")):
			t.Errorf("fail mode: %s %s (%s)", res.Class, res.Reason, res.Detail)
		case res.Commit == "":
			t.Errorf("fail %v: the work is not on the attempt's branch", fail)
		}
	}
}
