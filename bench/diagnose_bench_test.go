package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/diagnose"
)

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
