package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/diagnose"
)

// BenchmarkDiagnoseRunners measures the diagnosis of a failed test in the
// shape each runner prints it: node --test's TAP (a suite of passing tests
// around one failure, whose blocks the TAP reader walks) and cargo test's
// report, at a typical size and at the 64 KiB zerg reads of an output.
func BenchmarkDiagnoseRunners(b *testing.B) {
	tapOK := "    # Subtest: passes\n    ok 1 - passes\n      ---\n      duration_ms: 0.3\n      ...\n"
	tapFail := "    # Subtest: says size\n    not ok 2 - says size\n      ---\n      duration_ms: 2.5\n" +
		"      location: '/w/test/summary.test.js:6:3'\n      failureType: 'testCodeFailure'\n      error: 'the summary line'\n" +
		"      code: 'ERR_ASSERTION'\n      name: 'AssertionError'\n      expected: '50.0%'\n      actual: '200.0%'\n      ...\n"
	cargoOK := "test tests::passes ... ok\n"
	cargoFail := "test tests::kebab ... FAILED\n\nfailures:\n\n---- tests::kebab stdout ----\n\n" +
		"thread 'tests::kebab' (123) panicked at tests/cli.rs:16:5:\nkebab of max_len, got \"max_len\"\n\n" +
		"failures:\n    tests::kebab\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored\n"
	for _, r := range []struct {
		name, command, ok, fail, head, tail string
		exit                                int
	}{
		{"node-tap", "node --test dist/test/", tapOK, tapFail, "TAP version 13\n# Subtest: summarize\n", "not ok 1 - summarize\n  ---\n  type: 'suite'\n  ...\n# fail 1\n", 1},
		{"cargo-test", "cargo test --offline", cargoOK, cargoFail, "running 2 tests\n", "", 101},
	} {
		for _, size := range []int{2 << 10, 64 << 10} {
			out := r.head + strings.Repeat(r.ok, max(0, size-len(r.fail))/len(r.ok)) + r.fail + r.tail
			b.Run(fmt.Sprintf("%s/bytes=%d", r.name, len(out)), func(b *testing.B) {
				b.SetBytes(int64(len(out)))
				for b.Loop() {
					if d := diagnose.Diagnose(diagnose.Input{Output: out, Command: r.command, Exit: r.exit}); d.Top().Pattern != diagnose.TestAssertion {
						b.Fatalf("diagnosis %s", d.Top())
					}
				}
			})
		}
	}
}

// BenchmarkDiagnose measures one diagnosis: a typical failing test's
// output, and outputs long enough that only their first and last parts
// (64 KiB in all) are read.
func BenchmarkDiagnose(b *testing.B) {
	failing := "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 3, want 4\nFAIL\nFAIL\texample.com/x\t0.01s\nFAIL\n"
	for _, size := range []int{len(failing), 64 << 10, 16 << 20} {
		out := failing
		if size > len(out) {
			out = strings.Repeat("ok  \texample.com/x/pkg\t0.012s\n", size/len("ok  \texample.com/x/pkg\t0.012s\n")) + failing
		}
		b.Run(fmt.Sprintf("bytes=%d", len(out)), func(b *testing.B) {
			b.SetBytes(int64(len(out)))
			for b.Loop() {
				if d := diagnose.Diagnose(diagnose.Input{Output: out, Command: "go test ./...", Exit: 1}); d.Top().Pattern == "" {
					b.Fatal("no diagnosis")
				}
			}
		})
	}
}
