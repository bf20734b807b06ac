package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/tui"
)

// executeLive runs the rush under the live view. The coordinator runs as
// without it, in its own goroutine: the view only reads the log and the
// heartbeat file, on its own schedule, and the progress lines go to a
// buffer that never blocks. What the keys do in a rush:
//
//   - q closes the view and the run goes on, printing its progress lines
//     as zerg rush does without a view; Ctrl-C then stops it as usual.
//   - Ctrl-C, or s confirmed with y, stops the run as a Ctrl-C without a
//     view does: the coordinator stops its workers, records the stop and
//     the rush exits 3; zerg rush FEATURE --resume continues it.
//
// The view ends by itself when the run does, and the report prints after
// it, on the restored terminal.
func (a *app) executeLive(ctx context.Context, r *run.Run, worker claude.Spec, paths run.Paths, lines *liveLines, tty *os.File) (*runstate.View, error) {
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	type result struct {
		v   *runstate.View
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := r.Execute(runCtx, worker)
		done <- result{v, err}
	}()
	cfg := a.liveConfig(tui.ModeRush, paths)
	cfg.Recent = lines.recent
	lines.setCapture(true)
	prog := tui.Start(ctx, cfg, os.Stdin, tty)
	select {
	case res := <-done:
		prog.Done()
		_, _ = prog.Wait()
		lines.setCapture(false)
		return res.v, res.err
	case <-prog.Ended():
	}
	out, err := prog.Wait()
	lines.setCapture(false)
	if err != nil {
		fmt.Fprintf(a.stderr, "zerg: the live view failed (%v); the run goes on with plain lines\n", err)
	}
	switch {
	case err != nil:
	case out == tui.Detached:
		fmt.Fprintf(a.stderr, "zerg: live view closed; the run of %s goes on (Ctrl-C stops it; zerg status --watch shows the view again)\n", paths.Feature)
	case out == tui.Interrupted, out == tui.StopRun:
		fmt.Fprintf(a.stderr, "zerg: stopping the run of %s: its workers are stopped, their work kept; zerg rush %s --resume continues it\n", paths.Feature, paths.Feature)
		stopRun()
	}
	res := <-done
	return res.v, res.err
}
