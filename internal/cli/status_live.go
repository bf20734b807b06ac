package cli

import (
	"context"
	"io"
	"os"

	"github.com/zergrush/zerg/internal/tui"
)

// watchLive is zerg status --watch on a terminal: the live view until the
// run is no longer running, then the status as zerg status prints it, so
// the end stays on the screen. q and Ctrl-C end only the watch (Ctrl-C with
// exit 3, as an interrupted plain watch); s asks the coordinator to stop
// as zerg stop does.
func (a *app) watchLive(ctx context.Context, t *runTarget, tty *os.File) error {
	cfg := a.liveConfig(tui.ModeWatch, t.paths)
	cfg.Stop = func() error { return a.stopRun(ctx, t.feature) }
	out, err := tui.Start(ctx, cfg, os.Stdin, tty).Wait()
	if err != nil {
		return err
	}
	switch out {
	case tui.Interrupted:
		return silent(ExitInterrupted)
	case tui.Detached:
		return nil
	}
	v, _, err := t.inspect()
	if err != nil {
		return err
	}
	a.printStatus(v)
	return nil
}

// stopRun does what zerg stop FEATURE does, quietly: the view shows the
// run stopping.
func (a *app) stopRun(ctx context.Context, feature string) error {
	sa := &app{stdout: io.Discard, stderr: io.Discard, getwd: a.getwd}
	cmd := newStopCmd(sa)
	cmd.SetContext(ctx)
	return cmd.RunE(cmd, []string{feature})
}
