package attempt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zergrush/zerg/internal/claude"
)

// ReasonAbandoned is an attempt whose coordinator died while it ran and
// whose worker had not finished.
const ReasonAbandoned = "abandoned"

// Recover finishes an attempt whose coordinator died (a crash, kill -9)
// while its worker ran, from what the attempt left: its workspace and the
// stream zerg recorded. Its processes must have been reaped.
//
// When the stream ends in the worker's result and the worker completed,
// the attempt goes through exactly the checks, the verification and the
// commit a finished attempt does: finished work is committed once, not
// redone (finished is true). Otherwise, in sandbox mode, its work goes
// through the same commit step and checks and is committed to the
// attempt's branch as abandoned (or kept, saying why, when refused); in
// subprocess mode Recover does nothing (ok false) and the caller saves
// the worktree's work itself. The worker's own word decides only that it
// finished: whatever it claimed, the result is verified and checked like
// any other.
func Recover(ctx context.Context, in Input) (res Result, ok bool, err error) {
	if in.WorkerDir == "" {
		in.WorkerDir = filepath.Join(in.Dir, "claude")
	}
	if _, err := os.Stat(in.Workspace); err != nil {
		return Result{}, false, nil // never created, or already gone
	}
	out, done := recorded(in)
	done = done && out.Class == claude.ClassSuccess
	if in.Sandbox == nil {
		if !done {
			return Result{}, false, nil
		}
		if u := in.Worker.RunAs; u != nil {
			in.Repo.TrustWorkspace(in.Workspace)
			defer in.Repo.UntrustWorkspace(in.Workspace)
		}
		res, err := finishSubprocess(ctx, in, out, 0)
		diagnoseResult(in, &res)
		return recovered(res), true, err
	}
	sb := in.Sandbox
	removePrivate, err := sb.PreparePrivate()
	defer removePrivate()
	if err != nil {
		return Result{}, false, err
	}
	if err := sb.NewGroup(fmt.Sprintf("%s-%d-recover", in.Task.ID, in.Number)); err != nil {
		return Result{}, false, err
	}
	defer sb.Group.Close()
	// The workspace belonged to the slot it ran in; it now goes to the
	// slot that finishes it.
	if err := sb.User.GiveTree(in.Workspace); err != nil {
		return Result{}, false, fmt.Errorf("hand the workspace of %s to %s: %w", in.Task.ID, sb.User.Name, err)
	}
	res = Result{Worker: out, Class: Infra, Reason: ReasonAbandoned, Detail: "the coordinator stopped during this attempt, before its worker finished"}
	if done {
		res.Class, res.Reason, res.Detail = Success, "completed", ""
	}
	res, err = finishSandboxed(ctx, in, res)
	diagnoseResult(in, &res)
	return recovered(res), true, err
}

// recorded is the worker's outcome as its stream recorded it.
func recorded(in Input) (claude.Outcome, bool) {
	f, err := os.Open(filepath.Join(in.Dir, "stream.jsonl"))
	if err != nil {
		return claude.Outcome{}, false
	}
	defer f.Close()
	return claude.Recorded(f)
}

// recovered notes in a recovered attempt's detail how it ended.
func recovered(res Result) Result {
	note := "recovered after the coordinator stopped"
	if res.Detail == "" {
		res.Detail = note
	} else {
		res.Detail = note + ": " + res.Detail
	}
	return res
}
