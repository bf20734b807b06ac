package spec

import (
	"testing"
	"time"
)

// The task's timeout_seconds wins over the config's default; a task
// without one, or without a verification, gets the default.
func TestVerificationTimeout(t *testing.T) {
	def := 10 * time.Minute
	for _, c := range []struct {
		name string
		v    *Verification
		want time.Duration
	}{
		{"none", nil, def},
		{"no timeout", &Verification{Command: "go test ./..."}, def},
		{"own timeout", &Verification{Command: "go test ./...", TimeoutSeconds: 90}, 90 * time.Second},
	} {
		if got := c.v.Timeout(def); got != c.want {
			t.Errorf("%s: Timeout(%s) = %s, want %s", c.name, def, got, c.want)
		}
	}
}
