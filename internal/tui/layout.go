package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// Bar draws a progress bar of width cells, frac of them full. It is text
// (no colour), so a bar reads the same with NO_COLOR and in a capture.
func Bar(frac float64, width int) string {
	if width <= 0 {
		return ""
	}
	frac = min(max(frac, 0), 1)
	full := int(frac*float64(width) + 0.5)
	if full == width && frac < 1 {
		full = width - 1 // a bar is full only when the work is
	}
	if full == 0 && frac > 0 {
		full = 1 // and empty only when nothing is done
	}
	return strings.Repeat("█", full) + strings.Repeat("░", width-full)
}

// Fit pads or cuts s to exactly w terminal cells, measured as a terminal
// shows them (colour codes take no cell, wide runes two): the columns of a
// table of styled cells line up only if every cell is measured this way.
func Fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if n := lipgloss.Width(s); n <= w {
		return s + strings.Repeat(" ", w-n)
	}
	return ansi.Truncate(s, w, "…")
}

// Columns lays out rows of cells: each column as wide as its widest cell
// (styled cells measured by what shows), two spaces apart, the last column
// cut to what is left of width.
func Columns(rows [][]string, width int) []string {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], lipgloss.Width(c))
		}
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		var b strings.Builder
		used := 0
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(Fit(c, max(min(widths[i], width-used), 0)))
				break
			}
			b.WriteString(Fit(c, widths[i]) + "  ")
			used += widths[i] + 2
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

// Duration prints a duration briefly: 45s, 3m05s, 1h02m.
func Duration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// Tokens prints a token count briefly: 950, 12.3k, 4.56M.
func Tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
