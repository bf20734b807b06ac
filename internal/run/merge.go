package run

import (
	"context"
	"fmt"
	"strings"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

// mergeLevel merges the level's committed branches one at a time into the
// integration head inside the dedicated merge workspace, runs the gates on
// the merged head, records level_merged and only then moves the branch
// (compare-and-swap from base). The user's branches and working tree are
// never touched.
func (c *Coordinator) mergeLevel(ctx context.Context, level int, base string, tasks []*spec.Task) error {
	ws := c.paths.Merge
	runAs := c.opts.Worker.RunAs
	if err := c.repo.DiscardWorktree(ctx, ws); err != nil {
		return fmt.Errorf("merge workspace %s: %w", ws, err)
	}
	if err := c.repo.AddDetachedWorktree(ctx, ws, base); err != nil {
		return err
	}
	defer c.repo.DiscardWorktree(context.WithoutCancel(ctx), ws)
	if runAs != nil {
		// Trusted by exact path once it exists (gitx checks its .git entry).
		c.repo.TrustWorkspace(ws)
		defer c.repo.UntrustWorkspace(ws)
	}
	m := c.repo.In(ws)
	var ids []string
	for _, t := range tasks {
		c.mu.Lock()
		branch := c.state.Tasks[t.ID].Branch
		c.mu.Unlock()
		if _, err := m.Merge(ctx, branch, fmt.Sprintf("Merge %s: %s", t.ID, t.Title)); err != nil {
			// Conflict-free by construction: a conflict means two tasks wrote the same file.
			_ = c.emit(EvLevelFailed, "", 0, LevelFailed{Level: level, Reason: "merge conflict (an ownership violation): " + err.Error(), Tasks: []string{t.ID}})
			return fmt.Errorf("%w: level %d: %v", ErrNotDelivered, level, err)
		}
		ids = append(ids, t.ID)
	}
	head, err := m.RevParse(ctx, "HEAD")
	if err != nil {
		return err
	}
	// Gates run the workers' code: as the worker user, like verification.
	if runAs != nil && len(c.opts.Config.Gates) > 0 {
		if err := runAs.PrepareWorkspace(ws); err != nil {
			return fmt.Errorf("hand the merge workspace to %s: %w", runAs.Name, err)
		}
	}
	for _, g := range c.opts.Config.Gates {
		exit, out := runGate(ctx, ws, g, c.opts.Config.Env.Pass, runAs)
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		_ = c.emit(EvGateFinished, "", 0, GateFinished{Level: level, Name: g.Name, Command: g.Command, Exit: exit, Required: g.Required, Output: tail(out, 2000), Head: head})
		switch {
		case exit == 0:
			c.printf("  gate %s: passed on %s", g.Name, short(head))
		case !g.Required:
			c.printf("  gate %s: failed (exit %d), not required: %s", g.Name, exit, clip(oneLine(tail(out, 300)), 300))
		default:
			c.printf("  gate %s: FAILED (exit %d): %s", g.Name, exit, clip(oneLine(tail(out, 300)), 300))
			_ = c.emit(EvLevelFailed, "", 0, LevelFailed{Level: level, Reason: fmt.Sprintf("gate %s failed (exit %d)", g.Name, exit), Tasks: ids})
			return fmt.Errorf("%w: level %d: gate %s failed (exit %d)", ErrNotDelivered, level, g.Name, exit)
		}
	}
	// The event goes first: a crash before the branch moves is repaired on
	// resume from the event; a crash before the event redoes only the merge.
	if err := c.emit(EvLevelMerged, "", 0, LevelMerged{Level: level, Base: base, Head: head, Tasks: ids}); err != nil {
		return err
	}
	if err := c.repo.SetBranch(ctx, IntegrationBranch(c.opts.Feature), head, base); err != nil {
		return err
	}
	c.printf("level %d: merged %d task(s) → %s", level, len(ids), short(head))
	return nil
}

// runGate runs one gate command in the merge workspace.
func runGate(ctx context.Context, dir string, g config.Gate, pass []string, runAs *security.WorkerUser) (int, string) {
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = config.DefaultGateTimeout
	}
	env := []string{"ZERG_GATE=" + g.Name}
	pass = append([]string{"HOME"}, pass...)
	if runAs != nil {
		env, pass = append(env, "HOME="+runAs.Home), pass[1:]
	}
	return attempt.Shell{Command: g.Command, Dir: dir, Timeout: timeout, Pass: pass, Env: env, RunAs: runAs}.Run(ctx)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
