package term

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// sigpipe receives the SIGPIPEs a coordinator is sent; nothing reads it.
// Being notified is what matters: Go kills a program that writes to a
// closed pipe on stdout or stderr unless SIGPIPE is handled
// (os/signal: "If the program is not calling Notify for SIGPIPE"). Notify
// rather than Ignore: an ignored signal stays ignored in every process the
// coordinator execs (workers, verification commands, gates), a handled one
// is reset to the default there, so their own pipelines behave as usual.
var sigpipe = make(chan os.Signal, 1)

// SurvivePipes keeps a coordinator going when the reader of its output goes
// away (zerg rush … | head): the run is the log and the branches, not what
// it prints. It handles SIGPIPE and returns stdout and stderr wrapped so
// that a write to a closed pipe neither kills the process nor fails: it is
// reported as written and dropped, as is everything after it.
func SurvivePipes(stdout, stderr io.Writer) (io.Writer, io.Writer) {
	signal.Notify(sigpipe, syscall.SIGPIPE)
	return &pipeSafe{w: stdout}, &pipeSafe{w: stderr}
}

// pipeSafe drops what is written once its reader has gone (EPIPE), and
// says every write succeeded, so no caller turns a closed pipe into a
// failed run.
type pipeSafe struct {
	w      io.Writer
	closed atomic.Bool
}

func (p *pipeSafe) Write(b []byte) (int, error) {
	if p.closed.Load() {
		return len(b), nil
	}
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.closed.Store(true)
		return len(b), nil
	}
	return n, err
}

// Unwrap is the writer underneath, for the terminal check of colour.
func (p *pipeSafe) Unwrap() io.Writer { return p.w }
