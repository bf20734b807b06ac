package attempt

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestRecordNames pins the attempt record's layout: it is a format on disk,
// read by zerg logs, the dashboard and the retries of runs written by an
// earlier zerg, so a renamed file would hide what those attempts did.
func TestRecordNames(t *testing.T) {
	runDir := "/r/.zerg/runs/f"
	rec := RecordOf(RecordsDir(runDir), "T1", 2)
	for _, c := range []struct{ got, want string }{
		{rec.Dir(), "/r/.zerg/runs/f/attempts/T1/2"},
		{rec.Prompt(), "/r/.zerg/runs/f/attempts/T1/2/prompt.md"},
		{rec.Context(), "/r/.zerg/runs/f/attempts/T1/2/context.json"},
		{rec.Stream(), "/r/.zerg/runs/f/attempts/T1/2/stream.jsonl"},
		{rec.Verify(), "/r/.zerg/runs/f/attempts/T1/2/verify.log"},
		{rec.Diff(), "/r/.zerg/runs/f/attempts/T1/2/diff.patch"},
		{rec.Diagnosis(), "/r/.zerg/runs/f/attempts/T1/2/diagnosis.json"},
		{rec.Refused(), "/r/.zerg/runs/f/attempts/T1/2/refused.json"},
		{rec.Quarantine(), "/r/.zerg/runs/f/attempts/T1/2/quarantine"},
		{rec.WorkerState(), "/r/.zerg/runs/f/attempts/T1/2/claude"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}

// TestRecordNumbers: the attempts of a task in order, numbers only (a stray
// file or a directory that is no attempt number is not an attempt).
func TestRecordNumbers(t *testing.T) {
	records := t.TempDir()
	for _, d := range []string{"T1/10", "T1/2", "T1/1", "T1/x", "T1/0"} {
		if err := os.MkdirAll(filepath.Join(records, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(records, "T1", "3"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := RecordNumbers(records, "T1")
	if err != nil || !reflect.DeepEqual(got, []int{1, 2, 10}) {
		t.Fatalf("RecordNumbers = %v, %v; want [1 2 10]", got, err)
	}
	if _, err := RecordNumbers(records, "T9"); err == nil {
		t.Fatal("a task without records listed no error")
	}
}
