package run

import (
	"slices"
	"testing"

	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/spec"
)

// Every attempt's policy follows the CLI where the config leaves it to:
// max_tokens 0 is what the launch check saw asked for, never below the
// tested range's; a cap the config sets stays; the aliases accept what the
// CLI resolved them to; gateway.strict passes through.
func TestGatewayPolicyFollowsTheLaunchCheck(t *testing.T) {
	cfg := config.Default()
	probe := &cliprobe.Report{MaxTokens: 256000, Models: []cliprobe.ModelReport{{Model: "sonnet", Resolved: []string{"claude-sonnet-6"}}}}
	for _, c := range []struct {
		name      string
		maxTokens int
		probe     *cliprobe.Report
		want      int64
	}{
		{"no launch check", 0, nil, gateway.DefaultMaxTokens},
		{"a CLI asking more", 0, probe, 256000},
		{"a CLI asking less", 0, &cliprobe.Report{MaxTokens: 32000}, gateway.DefaultMaxTokens},
		{"the config's cap", 64000, probe, 64000},
	} {
		cfg.Gateway.MaxTokens = c.maxTokens
		if got := driver.GatewayPolicy(cfg, c.probe, nil).MaxTokens; got != c.want {
			t.Errorf("%s: max_tokens %d, want %d", c.name, got, c.want)
		}
	}
	cfg.Gateway.Strict = true
	p := driver.GatewayPolicy(cfg, probe, nil)
	p.Models = []string{"sonnet"}
	if !p.Strict || !p.ModelAllowed("claude-sonnet-6") || p.ModelAllowed("claude-opus-6") {
		t.Errorf("policy %+v", p)
	}
}

// The launch check probes each model the run's workers use, once.
func TestRunModels(t *testing.T) {
	cfg := config.Default()
	cfg.Models.Fallback = "haiku"
	g := &spec.Graph{Tasks: []*spec.Task{
		{ID: "a", Files: spec.Files{Create: []string{"a.go"}}},
		{ID: "b", Files: spec.Files{Create: []string{"docs/b.md"}}},
		{ID: "c", Model: "opus", Files: spec.Files{Create: []string{"c.go"}}},
		{ID: "d", Files: spec.Files{Create: []string{"d.go"}}},
	}}
	if got := RunModels(cfg, g); !slices.Equal(got, []string{"sonnet", "haiku", "opus"}) {
		t.Errorf("models %v", got)
	}
	if got := RunModels(cfg, nil); !slices.Equal(got, []string{"sonnet", "haiku"}) {
		t.Errorf("models without a graph %v", got)
	}
}
