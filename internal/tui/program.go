package tui

import (
	"context"
	"errors"
	"io"

	tea "github.com/charmbracelet/bubbletea"
)

// Program is a running view.
type Program struct {
	p    *tea.Program
	done chan struct{}
	out  Outcome
	err  error
}

// Start shows the view on out (a terminal, in the alternate screen, so the
// terminal is as it was once the view ends) reading keys from in. It does
// not handle signals: in raw mode Ctrl-C is a key the view reads, and a
// SIGINT or SIGTERM from elsewhere cancels ctx as it would without a view.
func Start(ctx context.Context, cfg Config, in io.Reader, out io.Writer) *Program {
	p := &Program{done: make(chan struct{})}
	p.p = tea.NewProgram(New(cfg), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out),
		tea.WithAltScreen(), tea.WithoutSignalHandler())
	go func() {
		defer close(p.done)
		m, err := p.p.Run()
		if mm, ok := m.(Model); ok {
			p.out = mm.Outcome()
		}
		switch {
		case errors.Is(err, tea.ErrProgramKilled), errors.Is(err, context.Canceled):
			// ctx ended it: a signal, or the caller. Not the view's error.
			p.out, err = Interrupted, nil
		}
		p.err = err
	}()
	return p
}

// Done tells the view the run is over; it ends with Ended.
func (p *Program) Done() {
	select {
	case <-p.done:
	default:
		p.p.Send(Done{})
	}
}

// Ended is closed when the view has ended and restored the terminal.
func (p *Program) Ended() <-chan struct{} { return p.done }

// Wait waits for the view to end and says why.
func (p *Program) Wait() (Outcome, error) {
	<-p.done
	return p.out, p.err
}
