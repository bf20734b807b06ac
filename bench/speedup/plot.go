package main

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// plotWalls draws each graph's rush wall time against the worker count, one
// line per schedule, with the single session's wall time as a flat line.
func plotWalls(path string, runs []shapeRun) error {
	p := plot.New()
	p.Title.Text = "zerg rush vs one claude -p session (wall time)"
	p.X.Label.Text = "workers"
	p.Y.Label.Text = "seconds"
	var lines []any
	for _, r := range runs {
		bySchedule := map[string]plotter.XYs{}
		var order []string
		maxW := 1
		for _, x := range r.Rushes {
			if x.Skipped != "" {
				continue
			}
			if _, ok := bySchedule[x.Schedule]; !ok {
				order = append(order, x.Schedule)
			}
			bySchedule[x.Schedule] = append(bySchedule[x.Schedule], plotter.XY{X: float64(x.Workers), Y: x.Wall.Seconds()})
			maxW = max(maxW, x.Workers)
		}
		for _, s := range order {
			lines = append(lines, fmt.Sprintf("%s zerg %s", r.Shape.Name, s), bySchedule[s])
		}
		lines = append(lines, r.Shape.Name+" one session", plotter.XYs{{X: 1, Y: r.Single.Wall.Seconds()}, {X: float64(maxW), Y: r.Single.Wall.Seconds()}})
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	// From zero, so that the gap between the lines reads as the real one.
	p.Y.Min = 0
	p.Y.Max *= 1.05
	p.Legend.Top = false
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}
