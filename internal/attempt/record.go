package attempt

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// Record is an attempt's record directory, <run>/attempts/<task>/<n>: zerg's
// own account of one attempt, written by the pipeline and read by zerg logs,
// the dashboard, the retry's prompt, the next tasks' context and recovery.
// Its methods are the one place that names the files in it.
type Record string

// RecordsDir is where a run keeps its attempt records: <run>/attempts.
func RecordsDir(runDir string) string { return filepath.Join(runDir, "attempts") }

// RecordOf is the record of task's attempt n in the records dir.
func RecordOf(records, task string, n int) Record {
	return Record(filepath.Join(records, task, strconv.Itoa(n)))
}

// RecordNumbers lists the attempt numbers recorded for task in the records
// dir, in order.
func RecordNumbers(records, task string) ([]int, error) {
	entries, err := os.ReadDir(filepath.Join(records, task))
	if err != nil {
		return nil, err
	}
	var nums []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && e.IsDir() && n > 0 {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	return nums, nil
}

// Dir is the record's directory.
func (r Record) Dir() string { return string(r) }

// Prompt is the prompt the worker was given, redacted.
func (r Record) Prompt() string { return r.file("prompt.md") }

// Context is the record of the prompt's context pack (what went in, what
// was cut).
func (r Record) Context() string { return r.file("context.json") }

// Prepared marks the record of an attempt whose worker was prepared ahead
// (Prepare) and not yet taken by its attempt: a workspace beside it holds
// nothing of the task.
func (r Record) Prepared() string { return r.file("prepared") }

// Stream is the worker's stream-json output.
func (r Record) Stream() string { return r.file("stream.jsonl") }

// Verify is the output of the task's verification.
func (r Record) Verify() string { return r.file("verify.log") }

// Diff is the attempt's result as a patch, redacted.
func (r Record) Diff() string { return r.file("diff.patch") }

// Diagnosis is the diagnostics engine's reading of a failure.
func (r Record) Diagnosis() string { return r.file("diagnosis.json") }

// Refused is the record of the writes the hook refused.
func (r Record) Refused() string { return r.file("refused.json") }

// Quarantine is the repository the result is snapshotted into before it is
// checked.
func (r Record) Quarantine() string { return r.file("quarantine") }

// WorkerState is the worker's private state (home, config, tmp) when the
// driver gives it no directory of its own.
func (r Record) WorkerState() string { return r.file("claude") }

func (r Record) file(name string) string { return filepath.Join(string(r), name) }
