package claude

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zergrush/zerg/internal/proc"
)

// Run is one launched worker process. Its methods are safe for concurrent use.
type Run struct {
	spec   Spec
	cmd    *exec.Cmd
	tree   *proc.Tree
	st     *state
	stderr *tailBuffer
	marker string
	start  time.Time
	// stdin takes the prompt of a run started with PromptLater (Send).
	stdin io.WriteCloser
	sent  sync.Once

	mu        sync.Mutex
	stopCause string // first cause the driver signalled for
	finishing bool   // the CLI was reaped; halt has nothing left to stop

	killers sync.WaitGroup // terminate goroutines
	stopBg  chan struct{}  // ends the tracker and the watchdog
	bg      sync.WaitGroup
	done    chan struct{}
	outcome Outcome
}

// Isolation makes the process that runs argv in dir with env, in a
// driver's isolation.
type Isolation interface {
	Command(ctx context.Context, argv []string, dir string, env []string) (*exec.Cmd, error)
}

// Start launches a worker for spec and returns at once. Cancelling ctx stops
// the run like Stop. The caller must call Wait (or wait on Done) to release
// its resources. Errors are about the spec or the launch itself; everything
// that happens after the process started is reported by Wait's Outcome.
func Start(ctx context.Context, spec Spec) (*Run, error) {
	s, err := spec.normalize()
	if err != nil {
		return nil, err
	}
	if err := s.prepare(); err != nil {
		return nil, err
	}
	r := &Run{
		spec:   s,
		stderr: newTailBuffer(s.StderrLimit),
		marker: newMarker(),
		stopBg: make(chan struct{}),
		done:   make(chan struct{}),
	}
	pr, pw := io.Pipe()
	var cmd *exec.Cmd
	if s.Isolation != nil {
		c, err := s.Isolation.Command(ctx, append([]string{s.Binary}, s.args()...), s.Workdir, s.env(os.Getenv, r.marker))
		if err != nil {
			pw.Close()
			return nil, fmt.Errorf("%w: %v", ErrBadSpec, err)
		}
		cmd = c
	} else {
		cmd = exec.CommandContext(ctx, s.Binary, s.args()...)
		cmd.Dir = s.Workdir
		cmd.Env = s.env(os.Getenv, r.marker)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	switch {
	case s.PromptLater:
		in, err := cmd.StdinPipe()
		if err != nil {
			pw.Close()
			return nil, fmt.Errorf("start claude: %w", err)
		}
		r.stdin = in
	case s.promptOnStdin():
		cmd.Stdin = strings.NewReader(s.Prompt)
	} // else nil: /dev/null, so the CLI does not wait 3 s for stdin
	cmd.Stdout = pw
	cmd.Stderr = r.stderr
	if u := s.RunAs; u != nil && s.Isolation == nil && (u.UID != os.Geteuid() || u.GID != os.Getegid()) {
		// Groups empty: root's supplementary groups must not follow the
		// worker. Go sets Pdeathsig after the switch, so it survives it; we
		// stay root and can still signal and reap the whole tree.
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(u.UID), Gid: uint32(u.GID), Groups: []uint32{}}
	}
	cmd.Cancel = func() error {
		r.halt("cancelled", s.KillGrace)
		return nil
	}
	// Bounds Wait when a detached grandchild keeps our stdout pipe open.
	cmd.WaitDelay = s.KillGrace + 5*time.Second
	r.start = time.Now()
	r.st = newState(r.start)
	// In a process group of its own, killed with us (Pdeathsig), tracked
	// with everything it starts (internal/proc).
	tree, err := proc.Start(cmd, treeOptions(r.marker, s.Workdir, s.AttemptDir), -1)
	if err != nil {
		pw.Close()
		return nil, fmt.Errorf("start claude: %w", err)
	}
	r.cmd = cmd
	r.tree = tree

	readerDone := make(chan struct{})
	go r.read(pr, readerDone)
	r.bg.Add(1)
	go r.track()
	if s.IdleTimeout > 0 && !s.PromptLater {
		r.bg.Add(1)
		go r.watchdog(s.IdleTimeout)
	}
	go r.wait(pw, readerDone)
	return r, nil
}

// startedAt is when the run started, or was given its prompt (Send).
func (r *Run) startedAt() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.start
}

// Send gives a run started with PromptLater its prompt, as the one user
// message of a stream-json input, and closes its stdin: the CLI then works
// on it as on a prompt in argv and ends with its result. The idle watchdog
// starts now, the wait before it being zerg's. An empty prompt sends
// nothing and closes stdin, so an unused worker ends.
func (r *Run) Send(prompt string) error {
	if r.stdin == nil {
		return errors.New("send the prompt: the run was started with its prompt")
	}
	err := errors.New("send the prompt: it was sent already")
	r.sent.Do(func() {
		err = nil
		if prompt != "" {
			line, merr := json.Marshal(map[string]any{"type": "user",
				"message": map[string]any{"role": "user", "content": prompt}})
			if merr != nil {
				err = merr
			} else if _, werr := r.stdin.Write(append(line, '\n')); werr != nil {
				err = fmt.Errorf("send the prompt: %w", werr)
			}
			// Under mu: wait() sets finishing under it before it waits
			// for the background goroutines, so no Add races that Wait.
			r.mu.Lock()
			r.start = time.Now()
			if r.spec.IdleTimeout > 0 && !r.finishing {
				r.bg.Add(1)
				go r.watchdog(r.spec.IdleTimeout)
			}
			r.mu.Unlock()
		}
		if cerr := r.stdin.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("send the prompt: %w", cerr)
		}
	})
	return err
}

func newMarker() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// SessionID is the run's --session-id.
func (r *Run) SessionID() string { return r.spec.SessionID }

// PID is the CLI's process id (also its process group id).
func (r *Run) PID() int { return r.tree.Root().PID }

// Marker is the value of ZERG_RUN_MARKER in the run's environment; with
// PIDs it lets a restarted coordinator find leftovers (KillRecorded).
func (r *Run) Marker() string { return r.marker }

// PIDs returns every process recorded as part of the run so far (the CLI,
// its descendants and marked orphans), with start times for reuse checks.
func (r *Run) PIDs() []Proc { return r.tree.Recorded() }

// Progress returns a snapshot of the run so far.
func (r *Run) Progress() Progress { return r.st.progress() }

// Done is closed when the run has ended and its Outcome is ready.
func (r *Run) Done() <-chan struct{} { return r.done }

// Wait blocks until the run has ended, its leftover processes are gone and
// its output is read, and returns the outcome.
func (r *Run) Wait() Outcome {
	<-r.done
	return r.outcome
}

// Stop ends the run gracefully: SIGTERM to the process group and every
// process of the run, SIGKILL after KillGrace. It does not wait.
func (r *Run) Stop() { r.halt("stopped", r.spec.KillGrace) }

// Kill ends the run at once with SIGKILL to the whole tree. It does not wait.
func (r *Run) Kill() { r.halt("killed", 0) }

// halt records why the driver is stopping the run (the first cause wins)
// and terminates the tree in the background.
func (r *Run) halt(cause string, grace time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finishing {
		return // the final sweep in wait() is already killing what is left
	}
	if r.stopCause == "" {
		r.stopCause = cause
	}
	r.st.markSignalled()
	// Added under mu, and wait() sets finishing under mu before its
	// killers.Wait, so no Add races that Wait.
	r.killers.Add(1)
	go func() {
		defer r.killers.Done()
		r.tree.Terminate(grace)
	}()
}

func (r *Run) read(pr *io.PipeReader, done chan<- struct{}) {
	defer close(done)
	defer pr.Close()
	lr := newLineReader(pr, MaxLineSize)
	for {
		line, truncated, err := lr.next()
		if err != nil {
			return
		}
		ev := ParseLine(line)
		ev.Truncated = truncated
		ev.Time = time.Now()
		r.st.observe(ev)
		if r.spec.OnEvent != nil {
			r.spec.OnEvent(ev)
		}
	}
}

// trackInterval is how often the tree is scanned to record new processes.
const trackInterval = 300 * time.Millisecond

// track records the run's processes while it runs, so a child that detaches
// and loses its marker is still known by PID, and reaps its zombies.
func (r *Run) track() {
	defer r.bg.Done()
	t := time.NewTicker(trackInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stopBg:
			return
		case <-t.C:
			r.tree.Reap()
		}
	}
}

// watchdog stops the run when stdout has been silent for idle.
func (r *Run) watchdog(idle time.Duration) {
	defer r.bg.Done()
	t := time.NewTicker(min(idle/4, time.Second))
	defer t.Stop()
	for {
		select {
		case <-r.stopBg:
			return
		case now := <-t.C:
			last := r.st.progress().LastEvent
			if last.IsZero() {
				last = r.startedAt()
			}
			if now.Sub(last) >= idle {
				r.halt("stalled", r.spec.KillGrace)
				return
			}
		}
	}
}

func (r *Run) wait(pw *io.PipeWriter, readerDone <-chan struct{}) {
	waitErr := r.cmd.Wait()
	r.mu.Lock()
	r.finishing = true
	r.mu.Unlock()
	r.tree.SetExited()
	pw.Close()
	<-readerDone
	// Whatever the run left behind (a backgrounded server, a setsid'd
	// sleep) dies with it.
	leftover := r.tree.Terminate(min(r.spec.KillGrace, 2*time.Second))
	r.killers.Wait()
	close(r.stopBg)
	r.bg.Wait()

	pf := procFacts{exitCode: -1, stderr: r.spec.API.redact(r.stderr.String())}
	if ps := r.cmd.ProcessState; ps != nil {
		pf.exitCode = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			pf.signal = ws.Signal().String()
		}
	}
	r.mu.Lock()
	pf.stopCause = r.stopCause
	r.mu.Unlock()
	o := r.st.outcome(pf)
	o.Detail = r.spec.API.redact(o.Detail)
	o.Duration = time.Since(r.startedAt())
	o.Leftover = append(o.Leftover, leftover...)
	if waitErr != nil && !errors.As(waitErr, new(*exec.ExitError)) {
		o.Err = fmt.Errorf("wait for claude: %w", waitErr)
	}
	if o.SessionID == "" {
		o.SessionID = r.spec.SessionID
	}
	r.outcome = o
	close(r.done)
}

// tailBuffer keeps the last limit bytes written (stderr can be unbounded).
type tailBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
	total int64
}

func newTailBuffer(limit int) *tailBuffer { return &tailBuffer{limit: limit} }

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += int64(len(p))
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*b.limit {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.limit:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.buf) > b.limit {
		return string(b.buf[len(b.buf)-b.limit:])
	}
	return string(b.buf)
}
