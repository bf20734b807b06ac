package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/textx"
)

// styles are the view's lipgloss styles. Without colour (NO_COLOR, a dumb
// terminal) they render plain text: the renderer's profile is Ascii.
type styles struct {
	bold, dim, red, green, yellow, sel lipgloss.Style
}

func newStyles(color bool) styles {
	r := lipgloss.NewRenderer(nil)
	if color {
		r.SetColorProfile(termenv.ANSI)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	s := r.NewStyle()
	return styles{
		bold: s.Bold(true), dim: s.Faint(true),
		red: s.Foreground(lipgloss.Color("1")), green: s.Foreground(lipgloss.Color("2")),
		yellow: s.Foreground(lipgloss.Color("3")), sel: s.Reverse(true),
	}
}

// View renders the model.
func (m Model) View() string {
	if m.pager != nil {
		head := m.st.bold.Render(fmt.Sprintf("log of %s", m.pagerOf)) +
			m.st.dim.Render(fmt.Sprintf("  %3.0f%%  ↑/↓ pgup/pgdn scroll · q/esc back", 100*m.pager.ScrollPercent()))
		return head + "\n" + m.pager.View()
	}
	var lines []string
	add := func(s ...string) { lines = append(lines, s...) }
	if !m.polled {
		add("zerg: reading the run…")
		if m.err != nil {
			add(clean(m.err.Error()))
		}
		return strings.Join(lines, "\n")
	}
	v, now := m.view, m.cfg.Now()
	add(m.header(v, now))
	done, total := RunFraction(v)
	add(fmt.Sprintf("tasks   %s  %d/%d merged", Bar(frac(done, total), barWidth(m.width)), done, total))
	if g := m.governor(v, now); g != "" {
		add(g)
	}
	add("")
	add(m.st.bold.Render("levels"))
	for _, l := range v.Levels {
		n := 0
		for _, t := range v.Tasks {
			if t.Level == l.Level && finished(t.Status) {
				n++
			}
		}
		add(fmt.Sprintf("  level %d  %s  %d/%d  %s", l.Level, Bar(LevelFraction(l, v.Tasks), barWidth(m.width)), n, len(l.Tasks), m.levelState(l)))
	}
	add("")
	add(m.workers(v, now)...)
	if p := m.failures(v); len(p) > 0 {
		add("")
		add(p...)
	}
	if m.cfg.Recent != nil {
		if r := m.cfg.Recent(); len(r) > 0 {
			add("")
			add(m.st.bold.Render("recent"))
			for _, l := range r {
				add("  " + Fit(clean(l), max(m.width-2, 10)))
			}
		}
	}
	// The footer always shows: what is above is cut to the height.
	foot := m.footer()
	if max := m.height - len(foot); max > 0 && len(lines) > max {
		lines = lines[:max]
	}
	for i, l := range lines {
		lines[i] = Fit(l, m.width)
	}
	return strings.Join(append(lines, foot...), "\n")
}

func (m Model) header(v runstate.View, now time.Time) string {
	parts := []string{m.st.bold.Render("zerg " + v.Feature), m.stateWord(v)}
	if !v.StartedAt.IsZero() {
		end := now
		if v.State != runstate.RunRunning {
			end = v.StartedAt.Add(time.Duration(v.DurationMS) * time.Millisecond)
		}
		parts = append(parts, Duration(end.Sub(v.StartedAt)))
	}
	if v.Workers > 0 {
		parts = append(parts, fmt.Sprintf("%d workers", v.Workers))
	}
	if v.Schedule == config.ScheduleDAG {
		// Levels below are the graph's depth, not merge units.
		parts = append(parts, fmt.Sprintf("dag, %d merged batches", v.Batches))
	}
	parts = append(parts, fmt.Sprintf("$%.4f", v.CostUSD), Tokens(v.Tokens+runningTokens(v))+" tokens")
	if v.State == runstate.RunRunning {
		if left, ok := ETA(v, now); ok {
			parts = append(parts, "ETA "+Duration(left))
		} else {
			parts = append(parts, "ETA —")
		}
	}
	return strings.Join(parts, " · ")
}

// runningTokens is what running attempts used so far (the run's Tokens
// counts finished attempts).
func runningTokens(v runstate.View) int64 {
	var n int64
	for _, t := range v.Tasks {
		if t.Running != nil {
			n += t.Running.Tokens
		}
	}
	return n
}

func (m Model) stateWord(v runstate.View) string {
	s := string(v.State)
	if v.State == runstate.RunDelivered && v.RefusedWrites > 0 {
		s += fmt.Sprintf(" with %d refused write(s)", v.RefusedWrites)
	}
	if v.Rehearsal {
		s += " (rehearsal)"
	}
	switch {
	case v.State == runstate.RunDelivered && v.RefusedWrites > 0:
		return m.st.yellow.Render(s)
	case v.State == runstate.RunDelivered:
		return m.st.green.Render(s)
	case v.State == runstate.RunRunning:
		return m.st.yellow.Render(s)
	case v.State == runstate.RunNotDelivered || v.State == runstate.RunDead:
		return m.st.red.Render(s)
	}
	return s
}

func (m Model) levelState(l runstate.LevelView) string {
	switch l.State {
	case "merged":
		return m.st.green.Render(l.State)
	case "failed":
		return m.st.red.Render(l.State + ": " + textx.OneLine(clean(l.Reason)))
	case "running":
		return m.st.yellow.Render(l.State)
	}
	return l.State
}

// governor is the launch governor's line: breaker, backpressure zone,
// rate-limit pauses, a usage-limit wait.
func (m Model) governor(v runstate.View, now time.Time) string {
	g := v.Governor
	if g == nil {
		if v.RateLimitPauses == 0 && v.BreakerOpens == 0 {
			return ""
		}
		return fmt.Sprintf("breaker opened %d× · rate-limit pauses %d", v.BreakerOpens, v.RateLimitPauses)
	}
	breaker := g.Breaker
	switch g.Breaker {
	case "open":
		breaker = m.st.red.Render("OPEN")
		if !g.OpenUntil.IsZero() {
			breaker += fmt.Sprintf(" for %s", Duration(g.OpenUntil.Sub(now)))
		}
	case "half_open", "half-open":
		breaker = m.st.yellow.Render(g.Breaker)
	}
	zone := g.Zone
	switch g.Zone {
	case "red":
		zone = m.st.red.Render(zone)
	case "yellow":
		zone = m.st.yellow.Render(zone)
	}
	line := fmt.Sprintf("workers %d of %d · breaker %s · backpressure %s · rate-limit pauses %d", g.Running, g.Limit, breaker, zone, v.RateLimitPauses)
	if !g.PausedUntil.IsZero() && g.PausedUntil.After(now) {
		line += " · " + m.st.yellow.Render("launches paused "+Duration(g.PausedUntil.Sub(now)))
	}
	if w := v.ResetWait; w != nil {
		line += " · " + m.st.yellow.Render("waiting for the usage limit to reset at "+clean(w.Until))
	}
	return line
}

// workers is one row per running attempt.
func (m Model) workers(v runstate.View, now time.Time) []string {
	rows := [][]string{{"  TASK", "ATTEMPT", "ELAPSED", "LAST TOOL", "TURNS", "TOKENS", "COST"}}
	for _, t := range v.Tasks {
		r := t.Running
		if r == nil {
			continue
		}
		tool := r.LastTool
		if tool == "" {
			tool = "—"
		}
		if t.Status == runstate.StatusVerifying {
			tool = "(verifying)"
		}
		rows = append(rows, []string{m.mark(t.ID) + t.ID, fmt.Sprint(r.Attempt), Duration(now.Sub(r.Started)), clean(tool),
			fmt.Sprint(r.Turns), Tokens(r.Tokens), fmt.Sprintf("$%.4f", t.CostUSD)})
	}
	out := []string{m.st.bold.Render(fmt.Sprintf("workers (%d running)", len(rows)-1))}
	if len(rows) == 1 {
		return append(out, m.st.dim.Render("  none running"))
	}
	cols := Columns(rows, m.width)
	cols[0] = m.st.dim.Render(cols[0])
	for i, t := range rows[1:] {
		if strings.HasPrefix(t[0], "> ") {
			cols[i+1] = m.st.sel.Render(cols[i+1])
		}
	}
	return append(out, cols...)
}

// mark is the selection marker of a row.
func (m Model) mark(id string) string {
	if id == m.sel {
		return "> "
	}
	return "  "
}

// failures lists the failing tasks with the reason and the diagnosis.
func (m Model) failures(v runstate.View) []string {
	ps := problems(v)
	if len(ps) == 0 {
		return nil
	}
	out := []string{m.st.bold.Render(fmt.Sprintf("failures (%d)", len(ps)))}
	w := max(m.width-6, 20)
	for _, t := range ps {
		line := fmt.Sprintf("%s%s %s after %d attempt(s)", m.mark(t.ID), t.ID, m.st.red.Render("FAILED"), t.Attempts)
		if t.Status != runstate.StatusFailed {
			// Failed before; a retry is running or waiting.
			line = fmt.Sprintf("%s%s failed %d time(s), now %s", m.mark(t.ID), t.ID, max(t.TaskFailures, 1), t.Status)
		}
		if d := firstNonEmpty(t.Detail, t.Reason); d != "" {
			line += ": " + textx.OneLine(clean(d))
		}
		out = append(out, line)
		if h := t.Diagnosis; h != nil {
			d := fmt.Sprintf("diagnosis: %s (%.0f%% sure)", h.Pattern, 100*h.Confidence)
			if len(h.Evidence) > 0 {
				d += ": " + textx.OneLine(clean(h.Evidence[0]))
			}
			out = append(out, "    "+Fit(d, w))
			if h.Fix != "" {
				out = append(out, "    "+Fit("fix: "+textx.OneLine(clean(h.Fix)), w))
			}
		}
	}
	return out
}

func (m Model) footer() []string {
	var keys string
	switch {
	case m.confirm:
		keys = m.st.yellow.Render("stop the run? it can be resumed (zerg rush --resume)  y/n")
	case m.cfg.Mode == ModeRush:
		keys = "↑/↓ select · l log · s stop the run · ctrl-c stop the run · q close the view (the run goes on)"
	default:
		keys = "↑/↓ select · l log · s stop the run · q/ctrl-c quit the watch (the run goes on)"
	}
	out := []string{""}
	if m.stopping != "" {
		out = append(out, m.st.yellow.Render(m.stopping))
	}
	if m.err != nil {
		out = append(out, m.st.dim.Render("(last read failed: "+textx.OneLine(clean(m.err.Error()))+")"))
	}
	return append(out, m.st.dim.Render(Fit(keys, m.width)))
}

// clean keeps what workers and gates wrote from moving the cursor.
func clean(s string) string { return term.Clean(s) }

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func frac(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// barWidth is the bars' width for a terminal width.
func barWidth(width int) int { return min(max(width/4, 10), 40) }
