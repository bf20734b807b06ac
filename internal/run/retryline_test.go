package run

import (
	"testing"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/outcome"
)

// A retry's progress line names what failed (the diagnosis and its first
// evidence), not the end of the runner's output, which for node --test is
// its summary and a suite's block.
func TestRetryLineNamesWhatFailed(t *testing.T) {
	tap := "verification `node --test` failed (exit 1): not ok 1 - CLI\n  ---\n  type: 'suite'\n  location: '/w/test/bin.test.js:4:1'\n# fail 2"
	res := attempt.Result{Class: outcome.Task, Reason: outcome.ReasonVerificationFailed, Detail: tap,
		Diagnosis: &diagnose.Hypothesis{Pattern: diagnose.TestAssertion, Confidence: 0.9,
			Evidence: []string{"test/bin.test.js:5 CLI › prints an id expected a 21-character id (expected 21, actual 2)"}}}
	if got, want := retryLine(res), "test_assertion: test/bin.test.js:5 CLI › prints an id expected a 21-character id (expected 21, actual 2)"; got != want {
		t.Errorf("retryLine = %q, want %q", got, want)
	}
	// Unsure, or zerg's own reason: the detail.
	res.Diagnosis.Confidence = 0.3
	if got := retryLine(res); got != tap {
		t.Errorf("an unsure diagnosis: %q", got)
	}
	own := attempt.Result{Class: outcome.Task, Reason: outcome.ReasonEmptyChange, Detail: "the worker changed nothing",
		Diagnosis: &diagnose.Hypothesis{Pattern: diagnose.EmptyChange, Confidence: 1, Evidence: []string{"x"}}}
	if got := retryLine(own); got != own.Detail {
		t.Errorf("zerg's own verdict: %q", got)
	}
}
