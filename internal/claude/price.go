package claude

import "strings"

// price is USD per million tokens of one model family.
type price struct{ input, output float64 }

// prices are the list prices the CLI itself charges with, by family; cache
// writes cost 1.25 × input and cache reads 0.1 × input.
var prices = []struct {
	family string
	p      price
}{
	{"opus", price{5, 25}},
	{"sonnet", price{3, 15}},
	{"haiku", price{1, 5}},
}

// CostUSD prices usage for a model (an alias or a full id). An unknown
// model is priced as the dearest family, so a cost is never understated.
func CostUSD(model string, u Usage) float64 {
	p := prices[0].p
	m := strings.ToLower(model)
	for _, f := range prices {
		if strings.Contains(m, f.family) {
			p = f.p
			break
		}
	}
	const perM = 1e6
	return (float64(u.InputTokens)*p.input + float64(u.OutputTokens)*p.output +
		float64(u.CacheCreationInputTokens)*p.input*1.25 + float64(u.CacheReadInputTokens)*p.input*0.1) / perM
}
