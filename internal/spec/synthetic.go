package spec

import (
	"fmt"
	"strings"
)

// Synthetic returns a valid task graph of n tasks, perLevel tasks per level,
// each task depending on one task of the level below and owning one file. It
// feeds scale tests and benchmarks.
func Synthetic(n, perLevel int) []byte {
	if perLevel < 1 {
		perLevel = 1
	}
	var b strings.Builder
	b.Grow(n * 300)
	b.WriteString(`{"feature":"synthetic","tasks":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		level := i/perLevel + 1
		deps := "[]"
		if level > 1 {
			deps = fmt.Sprintf(`["T%d"]`, i-perLevel)
		}
		fmt.Fprintf(&b, `{"id":"T%d","title":"task %d","level":%d,"dependencies":%s,`+
			`"files":{"create":["pkg/f%d.go"],"modify":[],"read":["README.md"]},`+
			`"verification":{"command":"test -f pkg/f%d.go","timeout_seconds":30},"estimate_minutes":%d}`,
			i, i, level, deps, i, i, 1+i%7)
	}
	b.WriteString("]}")
	return []byte(b.String())
}
