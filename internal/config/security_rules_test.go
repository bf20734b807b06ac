package config

import (
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/security"
)

// security_rules.sha256 pins the configured commit only; another commit
// has just the checksum zerg knows for it.
func TestSecurityRulesChecksum(t *testing.T) {
	def := Default().SecurityRules
	known := security.ExpectedChecksum(def.Commit, "")
	other := strings.Repeat("c", 40)
	r := SecurityRules{Commit: other, SHA256: "pinned"}
	if got := r.Checksum(other); got != "pinned" {
		t.Errorf("configured commit: %q, want the pin", got)
	}
	if got := r.Checksum(def.Commit); got != known {
		t.Errorf("zerg's default commit while another is configured: %q, want the built-in %q", got, known)
	}
	if got := r.Checksum(strings.Repeat("d", 40)); got != "" {
		t.Errorf("an unknown commit: %q, want none", got)
	}
	if got := (SecurityRules{Commit: other}).Checksum(other); got != "" {
		t.Errorf("configured commit without a pin: %q, want none", got)
	}
}
