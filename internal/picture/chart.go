package picture

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"

	"github.com/zergrush/zerg/internal/runstate"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Format is a picture's file format.
type Format string

const (
	FormatSVG Format = "svg"
	FormatPNG Format = "png"
	FormatDOT Format = "dot"
)

// Chart names, as zerg cost --chart and the dashboard's cost page take them.
const (
	ChartTasks  = "tasks"
	ChartLevels = "levels"
	ChartModels = "models"
	ChartTime   = "time"
)

// Charts lists the cost charts, in the order the all-in-one image tiles them.
func Charts() []string { return []string{ChartTasks, ChartLevels, ChartModels, ChartTime} }

var (
	actualColour    = color.RGBA{R: 0x1f, G: 0x6f, B: 0xeb, A: 0xff}
	projectedColour = color.RGBA{R: 0xb0, G: 0xb7, B: 0xc3, A: 0xff}
	rangeColour     = color.RGBA{R: 0xc2, G: 0x18, B: 0x5b, A: 0xff}
)

// CostChart builds one of the charts of a run's cost.
func CostChart(name string, r runstate.CostReport, s Spend) (*plot.Plot, error) {
	switch name {
	case ChartTasks:
		return barChart("Cost per task", r.Tasks)
	case ChartLevels:
		return barChart("Cost per level", r.Levels)
	case ChartModels:
		return barChart("Cost per model", r.Models)
	case ChartTime:
		return timeChart(s)
	}
	return nil, fmt.Errorf("no chart %q; charts: tasks, levels, models, time", name)
}

// barChart is actual dollars next to the projected expected ones, one pair
// of bars per line.
func barChart(title string, lines []runstate.CostLine) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "USD"
	p.Y.Min = 0
	actual, projected := make(plotter.Values, len(lines)), make(plotter.Values, len(lines))
	names := make([]string, len(lines))
	for i, l := range lines {
		actual[i] = l.CostUSD
		if l.Projected != nil {
			projected[i] = l.Projected.Expected
		}
		names[i] = l.Name
	}
	if len(lines) == 0 {
		// An empty chart still draws: a run without attempts yet.
		actual, projected, names = plotter.Values{0}, plotter.Values{0}, []string{"(none yet)"}
	}
	w := vg.Points(10)
	a, err := plotter.NewBarChart(actual, w)
	if err != nil {
		return nil, err
	}
	a.Color, a.LineStyle.Width, a.Offset = actualColour, 0, -w/2
	pr, err := plotter.NewBarChart(projected, w)
	if err != nil {
		return nil, err
	}
	pr.Color, pr.LineStyle.Width, pr.Offset = projectedColour, 0, w/2
	p.Add(a, pr)
	p.Legend.Add("actual", a)
	p.Legend.Add("projected (expected)", pr)
	p.Legend.Top = true
	// The legend sits in the plot's top right corner: headroom above the
	// tallest bar keeps it off the bars.
	if top := max(maxOf(actual), maxOf(projected)); top > 0 {
		p.Y.Max = top * legendHeadroom
	}
	p.NominalX(names...)
	if len(names) > 4 {
		p.X.Tick.Label.Rotation = math.Pi / 5
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	return p, nil
}

// legendHeadroom is how far above the tallest bar a bar chart's axis goes:
// room for its two-line legend.
const legendHeadroom = 1.45

func maxOf(vs plotter.Values) float64 {
	m := 0.0
	for _, v := range vs {
		m = math.Max(m, v)
	}
	return m
}

// timeChart is the spending so far over the run's time, against the
// projection's expected total and its high end.
func timeChart(s Spend) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Spending over time"
	p.X.Label.Text = "minutes since start"
	p.Y.Label.Text = "USD"
	p.Y.Min, p.X.Min = 0, 0
	xys := make(plotter.XYs, 0, len(s.Points)+1)
	for _, pt := range s.Points {
		xys = append(xys, plotter.XY{X: pt.At.Minutes(), Y: pt.USD})
	}
	if len(xys) == 0 {
		xys = append(xys, plotter.XY{})
	}
	end := math.Max(xys[len(xys)-1].X, 0.1)
	line, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	line.StepStyle = plotter.PostStep
	line.Color, line.Width = actualColour, vg.Points(2)
	p.Add(line)
	p.Legend.Add("actual", line)
	if pr := s.Projected; pr != nil {
		for _, h := range []struct {
			label string
			v     float64
			dash  []vg.Length
		}{{"projected (expected)", pr.Expected, nil}, {"projected (high)", pr.High, []vg.Length{vg.Points(4), vg.Points(3)}}} {
			hl, err := plotter.NewLine(plotter.XYs{{X: 0, Y: h.v}, {X: end, Y: h.v}})
			if err != nil {
				return nil, err
			}
			hl.Color, hl.Dashes = rangeColour, h.dash
			p.Add(hl)
			p.Legend.Add(h.label, hl)
		}
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.X.Max = end
	// Headroom for the legend above the highest line (the projection's
	// high end sits at the top otherwise, under the legend).
	top := xys[len(xys)-1].Y
	if pr := s.Projected; pr != nil {
		top = math.Max(top, pr.High)
	}
	if top > 0 {
		p.Y.Max = top * legendHeadroom
	}
	return p, nil
}

// Size of one chart; the all-in-one image tiles four.
const (
	chartW = 6 * vg.Inch
	chartH = 3.5 * vg.Inch
)

// WriteChart renders one plot as SVG or PNG.
func WriteChart(w io.Writer, p *plot.Plot, f Format) error {
	return writeTiles(w, []*plot.Plot{p}, 1, f)
}

// WriteCostImage renders the four cost charts tiled two by two: what
// zerg cost --format writes when no --chart is named.
func WriteCostImage(w io.Writer, r runstate.CostReport, s Spend, f Format) error {
	var ps []*plot.Plot
	for _, name := range Charts() {
		p, err := CostChart(name, r, s)
		if err != nil {
			return err
		}
		ps = append(ps, p)
	}
	return writeTiles(w, ps, 2, f)
}

func writeTiles(w io.Writer, ps []*plot.Plot, cols int, f Format) error {
	rows := (len(ps) + cols - 1) / cols
	width, height := chartW*vg.Length(cols), chartH*vg.Length(rows)
	var c vg.CanvasWriterTo
	switch f {
	case FormatSVG:
		c = vgsvg.New(width, height)
	case FormatPNG:
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(pngDPI),
			vgimg.UseBackgroundColor(color.White))}
	default:
		return fmt.Errorf("no chart format %q; formats: svg, png", f)
	}
	dc := draw.New(c)
	if f == FormatSVG {
		// vgsvg leaves the background transparent.
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(8), PadY: vg.Points(8),
		PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(6)}
	for i, p := range ps {
		p.Draw(tiles.At(dc, i%cols, i/cols))
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
