package picture

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/runstate"
)

func TestCostImageFormats(t *testing.T) {
	r := runstate.CostReport{Feature: "demo",
		Tasks:  []runstate.CostLine{{Name: "L1-a", CostUSD: 0.02, Projected: &runstate.Range{Expected: 0.03}}, {Name: "L2-b", CostUSD: 0.05}},
		Levels: []runstate.CostLine{{Name: "level 1", CostUSD: 0.02}, {Name: "level 2", CostUSD: 0.05}},
		Models: []runstate.CostLine{{Name: "claude-sonnet", CostUSD: 0.07}}}
	s := Spend{Points: []SpendPoint{{}, {At: time.Minute, USD: 0.02}, {At: 2 * time.Minute, USD: 0.07}},
		Projected: &runstate.Range{Low: 0.02, Expected: 0.05, High: 0.1}}
	var svg, png bytes.Buffer
	if err := WriteCostImage(&svg, r, s, FormatSVG); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "Cost per task", "Spending over time", "L2-b"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if err := WriteCostImage(&png, r, s, FormatPNG); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")) {
		t.Error("not a PNG")
	}
	if err := WriteCostImage(&png, r, s, FormatDOT); err == nil {
		t.Error("a DOT chart was accepted")
	}
}

// A run with no attempts yet still draws every chart.
func TestCostChartsEmpty(t *testing.T) {
	for _, name := range Charts() {
		p, err := CostChart(name, runstate.CostReport{}, Spend{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := WriteChart(&bytes.Buffer{}, p, FormatSVG); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// The bar charts leave room above the tallest bar, actual or projected,
// for the legend in their top corner.
func TestBarChartsLeaveTheLegendRoom(t *testing.T) {
	r := runstate.CostReport{Models: []runstate.CostLine{{Name: "sonnet", CostUSD: 0.07, Projected: &runstate.Range{Expected: 0.10}}}}
	p, err := CostChart(ChartModels, r, Spend{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Max < 0.10*1.4 {
		t.Errorf("y axis ends at %.3f: the legend would sit on a bar of 0.10", p.Y.Max)
	}
}
