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
		{"claude-sonnet-5-5", 3 + 1.5 + 0.75 + 0.3}, // 2.1.332's sonnet: the family's price
		{"claude-haiku-5-5", 1 + 0.5 + 0.25 + 0.1},
		{"claude-fable-5-2", 5 + 2.5 + 1.25 + 0.5}, // a family zerg has no price for: the dearest
		{"haiku", 1 + 0.5 + 0.25 + 0.1},
		{"claude-opus-4-8[1m]", 5 + 2.5 + 1.25 + 0.5},
		{"some-new-model", 5 + 2.5 + 1.25 + 0.5}, // never understated
	} {
		if got := CostUSD(tc.model, u); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: $%.4f, want $%.4f", tc.model, got, tc.want)
		}
	}
}

// A model zerg has no price for is named once, with what it is priced as.
func TestUnpricedNote(t *testing.T) {
	if n := UnpricedNote([]string{"sonnet", "claude-sonnet-5-5", "haiku", "opusplan"}); n != "" {
		t.Errorf("known models named: %q", n)
	}
	n := UnpricedNote([]string{"sonnet", "fable", "claude-fable-5-2", "fable"})
	if n != "zerg knows no price for fable, claude-fable-5-2: priced as opus, the dearest family ($5 in, $25 out per million tokens), so no cost is understated" {
		t.Errorf("note %q", n)
	}
}
