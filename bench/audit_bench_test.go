package bench

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/zergrush/zerg/internal/security"
)

// BenchmarkAuditRecord measures one audit record appended to a log that
// already holds n entries: a record reads the log's end, not the log, so
// its cost does not grow with the log (it re-read the whole log before).
func BenchmarkAuditRecord(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "audit.jsonl")
			a, err := security.OpenAudit(path)
			if err != nil {
				b.Fatal(err)
			}
			fields := map[string]any{"path": "src/some/file.go", "kind": "protected", "detail": "changed"}
			for range n {
				if err := a.Record(security.AuditCommitRefused, fields); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				if err := a.Record(security.AuditCommitRefused, fields); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
