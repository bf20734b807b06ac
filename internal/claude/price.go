package claude

import (
	"fmt"
	"slices"
	"strings"
)

// price is USD per million tokens of one model family.
type price struct{ input, output float64 }

// prices are the list prices the CLI itself charges with, by family, the
// dearest first; cache writes cost 1.25 × input and cache reads 0.1 ×
// input. A model is priced by its family, whatever its version
// (claude-sonnet-5-5 is a sonnet), as the CLI's aliases move to new ids.
var prices = []struct {
	family string
	p      price
}{
	{"opus", price{5, 25}},
	{"sonnet", price{3, 15}},
	{"haiku", price{1, 5}},
}

// PriceFamily is the family a model (an alias or a full id) is priced as,
// and whether zerg knows its price: an unknown model is priced as the
// dearest family, so a cost is never understated.
func PriceFamily(model string) (family string, known bool) {
	m := strings.ToLower(model)
	for _, f := range prices {
		if strings.Contains(m, f.family) {
			return f.family, true
		}
	}
	return prices[0].family, false
}

// CostUSD prices usage for a model (an alias or a full id) by its family
// (PriceFamily).
func CostUSD(model string, u Usage) float64 {
	fam, _ := PriceFamily(model)
	p := prices[0].p
	for _, f := range prices {
		if f.family == fam {
			p = f.p
		}
	}
	const perM = 1e6
	return (float64(u.InputTokens)*p.input + float64(u.OutputTokens)*p.output +
		float64(u.CacheCreationInputTokens)*p.input*1.25 + float64(u.CacheReadInputTokens)*p.input*0.1) / perM
}

// UnpricedNote names, in one line, the models of a run zerg knows no price
// for, "" when it knows them all.
func UnpricedNote(models []string) string {
	var unknown []string
	for _, m := range models {
		if _, known := PriceFamily(m); !known && m != "" && !slices.Contains(unknown, m) {
			unknown = append(unknown, m)
		}
	}
	if len(unknown) == 0 {
		return ""
	}
	p := prices[0]
	return fmt.Sprintf("zerg knows no price for %s: priced as %s, the dearest family ($%g in, $%g out per million tokens), so no cost is understated",
		strings.Join(unknown, ", "), p.family, p.p.input, p.p.output)
}
