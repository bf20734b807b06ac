package driver

import (
	"encoding/json"
	"testing"
)

// An agent that uses its own key enforces the coordinator's policy whole:
// gateway.strict and what the launch check learnt travel with the job.
func TestClusterPolicyTravels(t *testing.T) {
	in := ClusterPolicy{Models: []string{"sonnet"}, Resolved: map[string][]string{"sonnet": {"claude-sonnet-5-5"}},
		MaxTokens: 128000, Betas: []string{"x-2027-01-01"}, Strict: true, BudgetUSD: 2}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out ClusterPolicy
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	g := out.gateway()
	if !g.Strict || g.MaxTokens != 128000 || g.Resolved["sonnet"][0] != "claude-sonnet-5-5" || g.TaskUSD != 2 || g.Betas[0] != "x-2027-01-01" {
		t.Errorf("policy after the trip: %+v", g)
	}
}
