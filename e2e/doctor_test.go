package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/zergrush/zerg/internal/cli"
)

// TestDoctorReal: zerg doctor on this machine, which starts the pinned CLI
// for its version and probes a real sandbox: the pinned CLI and git must be
// found. Here, not in internal/cli, because the unit tier starts neither.
func TestDoctorReal(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := cli.Run(context.Background(), []string{"doctor", "--json"}, &stdout, &stderr)
	// The fields of docs/json.md this test asserts on.
	var rep struct {
		OK     bool `json:"ok"`
		Claude struct {
			Version     string `json:"version"`
			PinnedMatch *bool  `json:"pinned_match"`
		} `json:"claude"`
		Git struct {
			Found bool `json:"found"`
		} `json:"git"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("exit %d, stdout %q stderr %q: %v", code, stdout.String(), stderr.String(), err)
	}
	if code != 0 || !rep.OK {
		t.Fatalf("doctor exit %d: %s (run make claude)", code, stdout.String())
	}
	if rep.Claude.Version == "" || rep.Claude.PinnedMatch == nil || !*rep.Claude.PinnedMatch || !rep.Git.Found {
		t.Fatalf("report %s", stdout.String())
	}
}
