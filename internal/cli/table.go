package cli

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/zergrush/zerg/internal/term"
)

// table lays out rows of cells as text/tabwriter does with padding 2 (each
// cell but a row's last padded to its column's width plus two spaces), but
// measures a cell by what a terminal shows. tabwriter counts the bytes of
// the ANSI colour codes paint adds as width, so a coloured cell pushed the
// rest of its row out of line with the uncoloured rows.
type table struct {
	w    io.Writer
	rows [][]string
}

func newTable(w io.Writer) *table { return &table{w: w} }

// row adds a row; cells may hold colour codes.
func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

// visibleWidth is the width of s on a terminal: its runes once escape
// sequences are removed, as tabwriter counts runes.
func visibleWidth(s string) int { return utf8.RuneCountInString(term.Clean(s)) }

// flush writes the rows.
func (t *table) flush() error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r[:max(len(r)-1, 0)] {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], visibleWidth(c))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-visibleWidth(c)+2))
			}
		}
		b.WriteByte('\n')
	}
	t.rows = nil
	_, err := io.WriteString(t.w, b.String())
	return err
}
