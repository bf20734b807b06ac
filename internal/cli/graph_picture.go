package cli

import (
	"github.com/zergrush/zerg/internal/picture"
	"github.com/zergrush/zerg/internal/spec"
)

// graphPicture draws a plan (no run: no statuses) as the dashboard does.
func graphPicture(g *spec.Graph, f picture.Format) ([]byte, error) {
	l := picture.Place(picture.FromGraph(g, nil))
	switch f {
	case picture.FormatDOT:
		return picture.DOT(g.Feature, l), nil
	case picture.FormatPNG:
		return picture.PNG(l)
	}
	return picture.SVG(l), nil
}
