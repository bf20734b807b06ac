package dashboard

import (
	"strconv"

	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// maxGateOutput bounds the gate output a page carries; the log itself is
// bounded as every capture is.
const maxGateOutput = 512 << 10

// GatePage is one gate run: the view's record of it and its whole output
// from the gate's log (the event's excerpt for a log from before gate
// logs were kept). The page shows the output as text, line by line.
type GatePage struct {
	Feature string            `json:"feature"`
	Index   int               `json:"index"` // from 0, in the view's gates
	Gate    runstate.GateView `json:"gate"`
	Output  string            `json:"output"`
	// FromLog is false when only the event's excerpt was there.
	FromLog   bool `json:"from_log"`
	Truncated bool `json:"truncated,omitempty"`
}

// gatePage reads the i-th gate run of a run (its place in the view's
// gates, as the overview links it); ok is false when there is none.
func gatePage(p run.Paths, index string) (GatePage, bool, error) {
	v, _, err := run.Inspect(p)
	if err != nil {
		return GatePage{}, false, err
	}
	i, err := strconv.Atoi(index)
	if err != nil || i < 0 || i >= len(v.Gates) {
		return GatePage{}, false, nil
	}
	g := v.Gates[i]
	page := GatePage{Feature: v.Feature, Index: i, Gate: g, Output: g.Output}
	if out, ok := run.ReadGateLog(p.RunDir, g.GateFinished); ok {
		page.Output, page.FromLog = out, true
	}
	if len(page.Output) > maxGateOutput {
		page.Output, page.Truncated = page.Output[len(page.Output)-maxGateOutput:], true
	}
	return page, true, nil
}
