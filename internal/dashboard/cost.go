package dashboard

import (
	"bytes"

	"github.com/zergrush/zerg/internal/picture"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// CostPage is the report zerg cost --json prints; its charts are served
// as images beside it (/api/runs/F/cost/CHART.svg).
type CostPage struct {
	Report runstate.CostReport `json:"report"`
	Charts []string            `json:"charts"`
}

func costPage(p run.Paths) (CostPage, error) {
	evs, err := events(p)
	if err != nil {
		return CostPage{}, err
	}
	return CostPage{Report: runstate.Cost(p.Feature, evs), Charts: picture.Charts()}, nil
}

// costChart draws one chart of a run's cost as SVG, as zerg cost --format
// svg --chart does.
func costChart(p run.Paths, name string) ([]byte, error) {
	evs, err := events(p)
	if err != nil {
		return nil, err
	}
	pl, err := picture.CostChart(name, runstate.Cost(p.Feature, evs), picture.SpendOf(evs))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = picture.WriteChart(&b, pl, picture.FormatSVG)
	return b.Bytes(), err
}
