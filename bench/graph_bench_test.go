package bench

import (
	"fmt"
	"testing"

	"github.com/zergrush/zerg/internal/spec"
)

// BenchmarkValidate measures load + validation of synthetic graphs; the issue
// asks for 10,000 tasks in well under a second.
func BenchmarkValidate(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		data := spec.Synthetic(n, 100)
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if r := spec.Check(data, spec.Options{}); !r.Valid() {
					b.Fatal(r.Err())
				}
			}
		})
	}
}

// BenchmarkRelevel measures recomputing levels (ASAP, so every task moves).
func BenchmarkRelevel(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		data := spec.Synthetic(n, 100)
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, _, err := spec.Relevel(data, spec.ASAP, spec.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAnalyze measures the critical path and makespan bounds.
func BenchmarkAnalyze(b *testing.B) {
	r := spec.Check(spec.Synthetic(10000, 100), spec.Options{})
	b.ReportAllocs()
	for b.Loop() {
		spec.Analyze(r.Graph, 8)
	}
}
