package picture

import (
	"bytes"
	"image/color"
	"strconv"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
)

// pngDPI draws a layout unit as one pixel at 1×; 144 doubles it, so text
// stays sharp in a PR or a doc page.
const pngDPI = 144

// PNG draws a layout as the SVG does, with gonum/plot's raster canvas and
// its embedded Liberation fonts: no browser, no graphviz. Edges are
// straight here (the SVG's are curves); boxes, colours, labels and the
// critical path are the same.
func PNG(l Layout) ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseWH(vg.Length(l.W), vg.Length(l.H)), vgimg.UseDPI(pngDPI),
		vgimg.UseBackgroundColor(color.White))
	// vg's origin is bottom-left; the layout's is top-left.
	y := func(v float64) vg.Length { return vg.Length(l.H - v) }
	// Sans, as the SVG asks for; plot's default face is a serif.
	sans := font.Font{Typeface: plot.DefaultFont.Typeface, Variant: "Sans"}
	regular := font.DefaultCache.Lookup(sans, 11)
	sans.Weight = xfont.WeightBold
	bold := font.DefaultCache.Lookup(sans, 12)

	for i, lv := range l.Levels {
		c.SetColor(hex("#57606a"))
		c.FillString(bold, vg.Point{X: vg.Length(Margin + float64(i)*(BoxW+ColGap)), Y: y(Margin + 12)}, "level "+strconv.Itoa(lv))
	}
	for _, e := range l.Edges {
		stroke, width := EdgeStroke, 1.2
		if e.Critical {
			stroke, width = CriticalStroke, 2.5
		}
		c.SetColor(hex(stroke))
		c.SetLineWidth(vg.Length(width))
		var p vg.Path
		p.Move(vg.Point{X: vg.Length(e.X1), Y: y(e.Y1)})
		p.Line(vg.Point{X: vg.Length(e.X2), Y: y(e.Y2)})
		c.Stroke(p)
		// An arrow head at the dependant's side.
		var h vg.Path
		h.Move(vg.Point{X: vg.Length(e.X2), Y: y(e.Y2)})
		h.Line(vg.Point{X: vg.Length(e.X2 - 7), Y: y(e.Y2 - 3.5)})
		h.Line(vg.Point{X: vg.Length(e.X2 - 7), Y: y(e.Y2 + 3.5)})
		h.Close()
		c.Fill(h)
	}
	for _, bx := range l.Boxes {
		rect := roundRect(bx.X, bx.Y, bx.W, bx.H, 6, y)
		c.SetColor(hex(Fill(bx.Status)))
		c.Fill(rect)
		stroke, width := "#57606a", 1.0
		if bx.Critical {
			stroke, width = CriticalStroke, 3.0
		}
		c.SetColor(hex(stroke))
		c.SetLineWidth(vg.Length(width))
		c.Stroke(rect)
		c.SetColor(hex(TextColour))
		c.FillString(bold, vg.Point{X: vg.Length(bx.X + 8), Y: y(bx.Y + 18)}, Label(bx.ID))
		sub := bx.Status
		if sub == "" {
			sub = "planned"
		}
		if bx.Critical {
			sub += " · critical"
		}
		c.SetColor(hex("#3d444d"))
		c.FillString(regular, vg.Point{X: vg.Length(bx.X + 8), Y: y(bx.Y + 34)}, sub)
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// roundRect is a rectangle with rounded corners in vg's coordinates.
func roundRect(x, top, w, h, r float64, y func(float64) vg.Length) vg.Path {
	var p vg.Path
	p.Move(vg.Point{X: vg.Length(x + r), Y: y(top)})
	p.Line(vg.Point{X: vg.Length(x + w - r), Y: y(top)})
	p.Line(vg.Point{X: vg.Length(x + w), Y: y(top + r)})
	p.Line(vg.Point{X: vg.Length(x + w), Y: y(top + h - r)})
	p.Line(vg.Point{X: vg.Length(x + w - r), Y: y(top + h)})
	p.Line(vg.Point{X: vg.Length(x + r), Y: y(top + h)})
	p.Line(vg.Point{X: vg.Length(x), Y: y(top + h - r)})
	p.Line(vg.Point{X: vg.Length(x), Y: y(top + r)})
	p.Close()
	return p
}

// hex parses "#rrggbb" (the colour table's form).
func hex(s string) color.Color {
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil || len(s) != 7 {
		return color.Black
	}
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}
