package picture

import (
	"bytes"
	"fmt"
	"html"
)

// SVG draws a layout as a standalone SVG document. Every text is escaped:
// ids are restricted by the graph's checks, titles are not. Each task is a
// <g class="task"> carrying data-task and data-status, which the dashboard
// reads to link a box to its task page and tests read to check a status.
func SVG(l Layout) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="zerg-graph" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n",
		l.W, l.H, l.W, l.H)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="` + EdgeStroke + `"/></marker>` +
		`<marker id="arrow-crit" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="` + CriticalStroke + `"/></marker></defs>` + "\n")
	fmt.Fprintf(&b, `<rect width="%.0f" height="%.0f" fill="#ffffff"/>`+"\n", l.W, l.H)
	for i, lv := range l.Levels {
		x := Margin + float64(i)*(BoxW+ColGap)
		fmt.Fprintf(&b, `<text class="level" x="%.1f" y="%.1f" fill="#57606a" font-weight="bold">level %d</text>`+"\n", x, Margin+12, lv)
	}
	for _, e := range l.Edges {
		stroke, width, marker, class := EdgeStroke, 1.2, "arrow", "edge"
		if e.Critical {
			stroke, width, marker, class = CriticalStroke, 2.5, "arrow-crit", "edge critical"
		}
		mx := (e.X1 + e.X2) / 2
		fmt.Fprintf(&b, `<path class="%s" data-from="%s" data-to="%s" d="M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="none" stroke="%s" stroke-width="%.1f" marker-end="url(#%s)"/>`+"\n",
			class, esc(e.From), esc(e.To), e.X1, e.Y1, mx, e.Y1, mx, e.Y2, e.X2, e.Y2, stroke, width, marker)
	}
	for _, bx := range l.Boxes {
		stroke, width, class := "#57606a", 1.0, "task"
		if bx.Critical {
			stroke, width, class = CriticalStroke, 3.0, "task critical"
		}
		status := bx.Status
		fmt.Fprintf(&b, `<g class="%s" data-task="%s" data-status="%s">`, class, esc(bx.ID), esc(status))
		title := bx.ID
		if bx.Title != "" {
			title += ": " + bx.Title
		}
		if status != "" {
			title += " (" + status + ")"
		}
		fmt.Fprintf(&b, `<title>%s</title>`, esc(title))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="6" fill="%s" stroke="%s" stroke-width="%.1f"/>`,
			bx.X, bx.Y, bx.W, bx.H, Fill(status), stroke, width)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="%s" font-weight="bold">%s</text>`, bx.X+8, bx.Y+18, TextColour, esc(Label(bx.ID)))
		sub := status
		if sub == "" {
			sub = "planned"
		}
		if bx.Critical {
			sub += " · critical"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#3d444d" font-size="11">%s</text>`, bx.X+8, bx.Y+34, esc(sub))
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func esc(s string) string { return html.EscapeString(s) }
