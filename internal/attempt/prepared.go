package attempt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/outcome"
)

// A prepared worker is an attempt's worker started before the attempt may
// run: its workspace laid from the integration head of the moment, its
// sandbox and gateway up, and its CLI started and waiting on stdin for the
// prompt (claude.Spec.PromptLater). The CLI's start-up (most of a short
// task's cost beyond the model, and CPU-bound) is then paid while the
// running attempts wait for the model, not when the attempt starts. A
// prepared worker belongs to one attempt of one task, named when it is
// made: it never sees another task's prompt or workspace, and it is thrown
// away when that attempt does not run. A coordinator killed while it held
// prepared workers leaves their workspaces, marked in their records
// (Record.Prepared); the attempt that runs later removes them first
// (removeUnusedPrepared).

// ErrNotPreparable is returned by Prepare for a driver whose workspaces
// cannot be laid again under a waiting worker (driver.Rebaser).
var ErrNotPreparable = errors.New("this mode does not prepare workers")

// Prepared is a prepared worker (Prepare): the attempt's Input names it
// (Input.Prepared) for Run to use, or Discard throws it away.
type Prepared struct {
	in     Input // as prepared: its Base is the head of the moment
	ws     driver.Workspace
	cancel context.CancelCauseFunc

	// live is the attempt's own Input once it runs (its callbacks).
	live    atomic.Pointer[Input]
	prompts chan string // one prompt, or closed: not used
	once    sync.Once
	done    chan struct{}
	v       driver.Verdict
	err     error
	sent    time.Time

	retryAfter atomic.Int64
}

// Prepare makes the worker of in's attempt ready, from in.Base (the head
// of the moment; Run lays the workspace again when the attempt's own base
// differs). It returns once the workspace is laid and the worker is
// starting; ctx bounds the worker's whole life.
func Prepare(ctx context.Context, in Input) (*Prepared, error) {
	if in.WorkerDir == "" {
		in.WorkerDir = Record(in.Dir).WorkerState()
	}
	if err := fsx.PrivateDir(in.Dir); err != nil {
		return nil, err
	}
	// A worker prepared for this attempt by a coordinator that died.
	if err := removeUnusedPrepared(in); err != nil {
		return nil, err
	}
	if err := fsx.WritePrivate(Record(in.Dir).Prepared(), nil); err != nil {
		return nil, err
	}
	ws, err := in.Driver.Prepare(ctx, in.driverAttempt())
	if err != nil {
		removeRecords(in) // what the failed Prepare left, marked
		return nil, err
	}
	if _, ok := ws.(driver.Rebaser); !ok {
		_ = ws.Discard(ctx)
		ws.Close()
		removeRecords(in)
		return nil, ErrNotPreparable
	}
	pctx, cancel := context.WithCancelCause(ctx)
	p := &Prepared{in: in, ws: ws, cancel: cancel,
		prompts: make(chan string, 1), done: make(chan struct{})}
	p.live.Store(&in)
	// The worker's callbacks are the attempt's, once it runs.
	forward := in
	forward.OnStart = func(pids []claude.Proc, marker string) {
		if f := p.live.Load().OnStart; f != nil {
			f(pids, marker)
		}
	}
	forward.OnProgress = func(pr claude.Progress) {
		if f := p.live.Load().OnProgress; f != nil {
			f(pr)
		}
	}
	sp := in.workerSpec("")
	sp.Prompt, sp.PromptLater = "", true
	go func() {
		defer close(p.done)
		p.v, p.err = ws.Launch(pctx, sp, forward.starter(&p.retryAfter, p.hold))
	}()
	return p, nil
}

// hold waits for the attempt's prompt, or for the worker to be thrown
// away.
func (p *Prepared) hold(ctx context.Context, run *claude.Run) (string, *claude.Outcome) {
	unused := &claude.Outcome{Class: outcome.Infra, Reason: outcome.ReasonCancelled, Detail: "the prepared worker was not used"}
	select {
	case prompt, ok := <-p.prompts:
		if ok {
			p.sent = time.Now()
			return prompt, nil
		}
	case <-ctx.Done():
	}
	run.Kill()
	run.Wait()
	return "", unused
}

// use runs in's attempt on the worker prepared for it, as run would: the
// workspace laid again from in.Base when the worker was prepared from
// another commit, the prompt written and sent, and the worker's result
// taken through verification, the checks and zerg's commit. ok is false
// when the worker could not be used (another attempt's, its workspace could
// not be laid again, its CLI ended while it waited): it was thrown away,
// and the attempt runs afresh.
func (p *Prepared) use(ctx context.Context, in Input) (res Result, ok bool, err error) {
	if in.Task.ID != p.in.Task.ID || in.Number != p.in.Number {
		p.Discard()
		return Result{}, false, nil
	}
	p.live.Store(&in)
	stop := context.AfterFunc(ctx, func() { p.cancel(context.Cause(ctx)) })
	defer stop()
	start := time.Now()
	select {
	case <-p.done:
		p.Discard()
		return Result{}, false, nil
	default:
	}
	if in.Base != p.in.Base {
		if err := p.ws.(driver.Rebaser).Rebase(ctx, in.Base); err != nil {
			p.Discard()
			return Result{}, false, nil
		}
	}
	prompt, err := writePrompt(in)
	if err != nil {
		p.Discard()
		return Result{}, true, err
	}
	rebased := time.Since(start)
	// From here the workspace is the attempt's.
	if err := os.Remove(Record(in.Dir).Prepared()); err != nil {
		p.Discard()
		return Result{}, true, err
	}
	p.once.Do(func() { p.prompts <- prompt; close(p.prompts) })
	<-p.done
	if p.sent.IsZero() {
		// Stopped before the prompt went (the run was stopped meanwhile),
		// or the worker never got that far.
		p.Discard()
		return Result{}, false, nil
	}
	defer p.ws.Close()
	res, err = launched(ctx, in, p.ws, p.v, p.err, Phases{Prepare: rebased, Launch: time.Since(p.sent), Prepared: true}, &p.retryAfter)
	return res, true, err
}

// Discard throws an unused prepared worker away: its CLI is killed, and
// its workspace, its state and its records are removed. Nothing of a task
// ran in it, so nothing is lost.
func (p *Prepared) Discard() {
	p.once.Do(func() { close(p.prompts) })
	<-p.done
	p.cancel(nil)
	ctx := context.Background()
	_ = p.ws.Discard(ctx)
	p.ws.Close()
	removeRecords(p.in)
}

// removeRecords removes an unused prepared worker's state and records,
// and what is left at its workspace's path (removeUnusedPrepared), best
// effort: what stays is marked, and the attempt that runs at these paths
// removes it first.
func removeRecords(in Input) {
	if removeUnusedPrepared(in) != nil {
		return
	}
	_ = os.RemoveAll(in.WorkerDir)
	_ = os.RemoveAll(in.Dir)
	// The task's records directory, when this was its only attempt (a
	// directory that holds others is not empty and stays).
	_ = os.Remove(filepath.Dir(in.Dir))
}

// removeUnusedPrepared removes what a prepared worker left at in's paths
// when its coordinator died before the attempt took it: its record says so
// (Record.Prepared), and nothing of the task ran there.
func removeUnusedPrepared(in Input) error {
	marker := Record(in.Dir).Prepared()
	if _, err := os.Lstat(marker); err != nil {
		return nil
	}
	for _, p := range []string{in.Workspace, in.WorkerDir} {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("remove what an unused prepared worker left: %w", err)
		}
	}
	return os.Remove(marker)
}
