package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
)

func TestBar(t *testing.T) {
	for _, c := range []struct {
		frac  float64
		width int
		want  string
	}{
		{0, 4, "░░░░"},
		{0.5, 4, "██░░"},
		{1, 4, "████"},
		{0.99, 4, "███░"}, // full only when done
		{0.01, 4, "█░░░"}, // empty only when nothing is
		{2, 3, "███"},
		{0.5, 0, ""},
	} {
		if got := Bar(c.frac, c.width); got != c.want {
			t.Errorf("Bar(%v, %d) = %q, want %q", c.frac, c.width, got, c.want)
		}
	}
}

// TestColumnsLineUpStyledCells: a coloured cell takes the cells it shows,
// not the bytes of its colour codes (the misaligned status columns).
func TestColumnsLineUpStyledCells(t *testing.T) {
	// The coloured cell is narrower than its column, so it is padded.
	red := "\x1b[31mok\x1b[0m"
	rows := Columns([][]string{{"TASK", "STATUS", "COST"}, {"a", red, "$1"}, {"long-task", "running", "$2"}}, 80)
	col := -1
	for _, r := range rows {
		plain := lipgloss.NewStyle().Render(stripANSI(r))
		i := strings.Index(plain, "$")
		if r == rows[0] {
			i = strings.Index(plain, "COST")
		}
		if col >= 0 && i != col {
			t.Errorf("column 3 at %d, want %d:\n%s", i, col, strings.Join(rows, "\n"))
		}
		col = i
	}
	// The control: counted as bytes, the coloured row's cell is 9 wider.
	if len(red)-lipgloss.Width(red) != 9 {
		t.Fatal("the control lost its colour codes")
	}
}

func TestFit(t *testing.T) {
	if got := Fit("abcdef", 4); lipgloss.Width(got) != 4 || !strings.HasSuffix(got, "…") {
		t.Errorf("Fit cut = %q", got)
	}
	if got := Fit("\x1b[1mab\x1b[0m", 4); lipgloss.Width(got) != 4 || !strings.HasPrefix(got, "\x1b[1m") {
		t.Errorf("Fit pad = %q", got)
	}
	if got := Fit("日本", 4); got != "日本" {
		t.Errorf("wide runes: %q", got)
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{45 * time.Second: "45s", 185 * time.Second: "3m05s", 62 * time.Minute: "1h02m"} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%s) = %q, want %q", d, got, want)
		}
	}
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
