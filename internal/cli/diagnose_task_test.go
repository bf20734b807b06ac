package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/diagnose"
)

// TestDiagnoseTaskWhoseLastAttemptPassed: zerg diagnose TASK, when the
// last attempt succeeded, shows the last diagnosed one and says so (exit
// 0), --attempt of the one that passed names the attempts that have a
// diagnosis (exit 2), and a task none of whose attempts failed is said so
// (exit 0), not bad input.
func TestDiagnoseTaskWhoseLastAttemptPassed(t *testing.T) {
	f := newFakeRun(t, "demo", true)
	d := diagnose.Verdict(diagnose.EmptyChange, "the worker changed nothing")
	writeFile(t, f.paths.Attempt("T1", 1).Diagnosis(), []byte(jsonLine(t, d)))
	writeFile(t, filepath.Join(f.paths.AttemptDir("T1", 2), "prompt.md"), []byte("Task T1: x\n"))
	writeFile(t, filepath.Join(f.paths.AttemptDir("T2", 1), "prompt.md"), []byte("Task T2: x\n"))

	code, out, errs := runZerg(t, "diagnose", "demo", "T1")
	if code != ExitOK || !strings.Contains(out, "empty_change") ||
		!strings.Contains(errs, "attempt 2 of T1 has no diagnosis") || !strings.Contains(errs, "this is attempt 1, the last diagnosed (--attempt 1)") {
		t.Errorf("diagnose demo T1: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	code, _, errs = runZerg(t, "diagnose", "demo", "T1", "--attempt", "2")
	if code != ExitUsage || !strings.Contains(errs, "diagnosed: --attempt 1") {
		t.Errorf("diagnose demo T1 --attempt 2: exit %d\nstderr: %s", code, errs)
	}
	code, out, errs = runZerg(t, "diagnose", "demo", "T2")
	if code != ExitOK || out != "" || !strings.Contains(errs, "T2 has no diagnosed attempt (1 attempt; the last, 1, succeeded") {
		t.Errorf("diagnose demo T2: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
}
