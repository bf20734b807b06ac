package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
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
			Support     string `json:"support"`
		} `json:"claude"`
		Probe *struct {
			OK     bool `json:"ok"`
			Models []struct {
				Model    string `json:"model"`
				Resolved string `json:"resolved"`
			} `json:"models"`
			MaxTokens int64 `json:"max_tokens"`
		} `json:"probe"`
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
	// Under make cli-matrix and cli-compat, ZERG_CLAUDE is another release:
	// of the range, or newer.
	ok := rep.Claude.PinnedMatch != nil && *rep.Claude.PinnedMatch && rep.Claude.Support == "supported"
	if os.Getenv("ZERG_CLAUDE") != "" {
		ok = rep.Claude.Support == "supported" || rep.Claude.Support == "newer"
	}
	if rep.Claude.Version == "" || !ok || !rep.Git.Found {
		t.Fatalf("report %s", stdout.String())
	}
	// The launch probe ran the CLI through the gateway with the default
	// config's models: each alias resolved to a model id of its family.
	if rep.Probe == nil || !rep.Probe.OK || len(rep.Probe.Models) < 2 || rep.Probe.MaxTokens == 0 {
		t.Fatalf("probe %s", stdout.String())
	}
	for _, m := range rep.Probe.Models {
		if !strings.HasPrefix(m.Resolved, "claude-"+m.Model+"-") {
			t.Errorf("%s resolved to %q", m.Model, m.Resolved)
		}
	}
}
