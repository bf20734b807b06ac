package claude

import (
	"math"
	"testing"
)

func TestCostUSD(t *testing.T) {
	u := Usage{InputTokens: 1_000_000, OutputTokens: 100_000, CacheCreationInputTokens: 200_000, CacheReadInputTokens: 1_000_000}
	for _, tc := range []struct {
		model string
		want  float64
	}{
		{"claude-sonnet-5", 3 + 1.5 + 0.75 + 0.3},
		{"haiku", 1 + 0.5 + 0.25 + 0.1},
		{"claude-opus-4-8[1m]", 5 + 2.5 + 1.25 + 0.5},
		{"some-new-model", 5 + 2.5 + 1.25 + 0.5}, // never understated
	} {
		if got := CostUSD(tc.model, u); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: $%.4f, want $%.4f", tc.model, got, tc.want)
		}
	}
}
