package tui

import (
	"time"

	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/zergrush/zerg/internal/runstate"
)

// Mode is who shows the view: the rush itself, or a watcher.
type Mode int

const (
	// ModeRush: the view runs in the coordinator's process. Stopping
	// the run is the caller's (it cancels the run's context).
	ModeRush Mode = iota
	// ModeWatch: zerg status --watch in another process. Its Ctrl-C
	// ends only the watch; s asks the coordinator to stop (zerg stop).
	ModeWatch
)

// Outcome is why the view ended.
type Outcome int

const (
	// Ended: the run is no longer running (or the rush said it is done).
	Ended Outcome = iota
	// Detached: q; the run goes on without the view.
	Detached
	// Interrupted: Ctrl-C. In a rush the caller stops the run (resumable);
	// in a watch only the watch ends.
	Interrupted
	// StopRun: s, confirmed, in a rush: the caller stops the run.
	StopRun
)

// Config is what the view reads and does.
type Config struct {
	Mode Mode
	// Poll reads the run's view. It runs off the UI's goroutine and never
	// inside the coordinator's.
	Poll func() (runstate.View, error)
	// Log is a task's log as zerg logs prints it, for the pager.
	Log func(task string) string
	// Stop asks the coordinator to stop (watch mode; rush mode ends the
	// view with StopRun instead). It may take seconds: it runs off the
	// UI's goroutine.
	Stop func() error
	// Recent is the run's latest progress lines (rush mode; may be nil).
	Recent func() []string
	// Interval between polls; 250ms when 0.
	Interval time.Duration
	// Color: the styles colour (false with NO_COLOR).
	Color bool
	// Now is the clock (tests fix it).
	Now func() time.Time
}

// Done tells a running view that the rush is over: it ends with Ended.
type Done struct{}

type (
	tickMsg struct{}
	viewMsg struct {
		v   runstate.View
		err error
	}
	logMsg struct {
		task, text string
	}
	stopMsg struct{ err error }
)

// Model is the bubbletea model of the view.
type Model struct {
	cfg      Config
	st       styles
	view     runstate.View
	polled   bool
	err      error
	width    int
	height   int
	sel      string // the selected task's id
	confirm  bool   // s pressed: asking y/n
	stopping string
	pager    *viewport.Model
	pagerOf  string
	outcome  Outcome
}

// New returns the view's model.
func New(cfg Config) Model {
	if cfg.Interval <= 0 {
		cfg.Interval = 250 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return Model{cfg: cfg, st: newStyles(cfg.Color), width: 100, height: 40}
}

// Outcome is why the view ended.
func (m Model) Outcome() Outcome { return m.outcome }

// LastView is the run as the view last saw it.
func (m Model) LastView() (runstate.View, bool) { return m.view, m.polled }

func (m Model) Init() tea.Cmd { return m.poll() }

func (m Model) poll() tea.Cmd {
	return func() tea.Msg {
		v, err := m.cfg.Poll()
		return viewMsg{v, err}
	}
}

func (m Model) tick() tea.Cmd {
	return tea.Tick(m.cfg.Interval, func(time.Time) tea.Msg { return tickMsg{} })
}

func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		if m.pager != nil {
			m.pager.Width, m.pager.Height = msg.Width, max(msg.Height-2, 1)
		}
		return m, nil
	case tickMsg:
		return m, m.poll()
	case viewMsg:
		if msg.err != nil {
			// A log being rotated or read half-written: keep the last
			// view, say so, try again.
			m.err = msg.err
			return m, m.tick()
		}
		m.view, m.polled, m.err = msg.v, true, nil
		m.sel = keepSelection(m.sel, selectable(m.view))
		if m.cfg.Mode == ModeWatch && !watching(m.view) {
			m.outcome = Ended
			return m, tea.Quit
		}
		return m, m.tick()
	case Done:
		m.outcome = Ended
		return m, tea.Quit
	case logMsg:
		vp := viewport.New(m.width, max(m.height-2, 1))
		vp.SetContent(msg.text)
		m.pager, m.pagerOf = &vp, msg.task
		return m, nil
	case stopMsg:
		if msg.err != nil {
			m.stopping = "stop failed: " + msg.err.Error()
		}
		return m, nil
	case tea.KeyMsg:
		return m.key(msg)
	}
	return m, nil
}

// key handles a key press.
func (m Model) key(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	if k.Type == tea.KeyCtrlC {
		m.outcome = Interrupted
		return m, tea.Quit
	}
	if m.pager != nil {
		switch k.String() {
		case "q", "esc", "l", "enter":
			m.pager = nil
			return m, nil
		}
		vp, cmd := m.pager.Update(k)
		m.pager = &vp
		return m, cmd
	}
	if m.confirm {
		m.confirm = false
		if k.String() != "y" && k.String() != "Y" {
			return m, nil
		}
		if m.cfg.Mode == ModeRush {
			m.outcome = StopRun
			return m, tea.Quit
		}
		m.stopping = "stopping the run…"
		stop := m.cfg.Stop
		return m, func() tea.Msg {
			if stop == nil {
				return stopMsg{}
			}
			return stopMsg{stop()}
		}
	}
	switch k.String() {
	case "q":
		m.outcome = Detached
		return m, tea.Quit
	case "s":
		if m.view.State == runstate.RunRunning {
			m.confirm = true
		}
	case "up", "k":
		m.sel = move(m.sel, selectable(m.view), -1)
	case "down", "j", "tab":
		m.sel = move(m.sel, selectable(m.view), +1)
	case "l", "enter":
		if m.sel != "" && m.cfg.Log != nil {
			task, log := m.sel, m.cfg.Log
			return m, func() tea.Msg { return logMsg{task, log(task)} }
		}
	}
	return m, nil
}

// watching: a watch goes on while the run runs, or is starting (a log
// without events yet whose coordinator holds it), as zerg status --watch.
func watching(v runstate.View) bool {
	return v.State == runstate.RunRunning || (v.State == runstate.RunNotStarted && v.Coordinator.Alive)
}

// selectable is the tasks a person can pick: the running ones, then the
// failing ones, in the order the view shows them.
func selectable(v runstate.View) []string {
	var ids []string
	for _, t := range v.Tasks {
		if t.Running != nil {
			ids = append(ids, t.ID)
		}
	}
	for _, t := range problems(v) {
		if t.Running == nil {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

// problems is the tasks that failed, for good or before a retry.
func problems(v runstate.View) []runstate.TaskView {
	var out []runstate.TaskView
	for _, t := range v.Tasks {
		if finished(t.Status) {
			continue
		}
		if t.Status == runstate.StatusFailed || t.Status == runstate.StatusRetryWait || t.Diagnosis != nil || (t.TaskFailures > 0 && t.Detail != "") {
			out = append(out, t)
		}
	}
	return out
}

// keepSelection keeps sel while it is pickable, else picks the first.
func keepSelection(sel string, ids []string) string {
	for _, id := range ids {
		if id == sel {
			return sel
		}
	}
	if len(ids) > 0 {
		return ids[0]
	}
	return ""
}

// move moves the selection by d, wrapping around.
func move(sel string, ids []string, d int) string {
	if len(ids) == 0 {
		return ""
	}
	i := 0
	for j, id := range ids {
		if id == sel {
			i = j
		}
	}
	return ids[(i+d+len(ids))%len(ids)]
}
