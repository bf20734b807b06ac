package diagnose

import (
	"strings"
	"testing"
)

// Every pattern the list names exists, with a class and a fix, and
// every pattern has a prior in the shipped model.
func TestPatterns(t *testing.T) {
	ids := strings.Fields(`compile_error type_error undefined_symbol import_missing dependency_missing syntax_error
		test_assertion test_panic test_timeout race_detected lint_failure format_failure network_unavailable
		offline_cache_miss permission_denied disk_full out_of_memory command_not_found toolchain_version env_var_missing
		terminal_dependent_output flaky_test no_tests_ran check_cannot_fail empty_change ownership_violation
		protected_path secret_found merge_conflict rate_limited api_unreachable auth_failed max_turns
		context_exhausted worker_crash unknown`)
	for _, id := range ids {
		p, ok := ByID(id)
		if !ok || p.Class == "" || p.Fix == "" {
			t.Errorf("pattern %s: %+v, %v", id, p, ok)
		}
	}
	if len(trained().Patterns) != len(Patterns) || len(trained().LogPrior) != len(Patterns) {
		t.Errorf("the model knows %d patterns, the package %d", len(trained().Patterns), len(Patterns))
	}
}

// zerg's own verdicts map to patterns with certainty.
func TestVerdictsFromReasons(t *testing.T) {
	for reason, want := range map[string]string{"empty_change": EmptyChange, "missing_file": EmptyChange, "ownership": OwnershipViolation,
		"secret_found": SecretFound, "rate_limit": RateLimited, "api_unreachable": APIUnreachable, "conflict": MergeConflict,
		"verification_failed": ""} {
		if got := FromReason(reason); got != want {
			t.Errorf("FromReason(%s) = %q, want %q", reason, got, want)
		}
	}
	d := Verdict(OwnershipViolation, "wrote b.txt, which task A does not own")
	if h := d.Top(); h.Pattern != OwnershipViolation || h.Confidence != 1 || h.Class != Task || h.Evidence[0] == "" {
		t.Errorf("Verdict: %+v", h)
	}
}

// Silence is no evidence: an empty output is unknown, never a pattern the
// priors favour; a diagnosis is ranked, bounded, and evidenced.
func TestDiagnoseShape(t *testing.T) {
	if h := Diagnose(Input{Output: " \n", Exit: 1}).Top(); h.Pattern != UnknownPattern || h.Class != Unknown {
		t.Errorf("empty output: %+v", h)
	}
	out := "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 3, want 4\nFAIL\nFAIL\texample.com/x\t0.01s\n"
	d := Diagnose(Input{Output: out, Command: "go test ./...", Exit: 1})
	if len(d.Hypotheses) != maxHypotheses {
		t.Fatalf("%d hypotheses, want %d", len(d.Hypotheses), maxHypotheses)
	}
	sum := 0.0
	for i, h := range d.Hypotheses {
		sum += h.Confidence
		if i > 0 && h.Confidence > d.Hypotheses[i-1].Confidence {
			t.Errorf("not most likely first: %+v", d.Hypotheses)
		}
		if len(h.Evidence) > 3 || h.Evidence == nil {
			t.Errorf("%s: evidence %q", h.Pattern, h.Evidence)
		}
	}
	if sum > 1.0001 {
		t.Errorf("confidences sum to %.3f", sum)
	}
	if top := d.Top(); top.Pattern != TestAssertion || top.Evidence[0] != "parse_test.go:12 TestParse got 3, want 4" {
		t.Errorf("top: %+v", top)
	}
	// A huge output is read at its head and tail, where tools put their
	// first complaints and their summaries.
	huge := out + strings.Repeat("noise line of a chatty build\n", 100000) + out
	if got := Diagnose(Input{Output: huge, Command: "go test ./...", Exit: 1}).Top().Pattern; got != TestAssertion {
		t.Errorf("huge output: %s", got)
	}
}
