package attempt

import (
	"context"
	"os"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/outcome"
)

// Recover finishes an attempt whose coordinator died (a crash, kill -9)
// while its worker ran, from what the attempt left: its workspace and the
// stream zerg recorded. Its processes must have been reaped.
//
// When the stream ends in the worker's result and the worker completed,
// the attempt goes through exactly the verification, the checks and the
// commit a finished attempt does: finished work is committed once, not
// redone. Otherwise its work goes through the same snapshot and checks
// and is committed to the attempt's branch as abandoned (or kept, saying
// why, when refused). The worker's own word decides only that it
// finished: whatever it claimed, the result is verified and checked like
// any other. ok is false when there is no workspace to finish.
func Recover(ctx context.Context, in Input) (res Result, ok bool, err error) {
	if in.WorkerDir == "" {
		in.WorkerDir = Record(in.Dir).WorkerState()
	}
	if _, err := os.Stat(in.Workspace); err != nil {
		return Result{}, false, nil // never created, or already gone
	}
	out, done := recorded(in)
	ws, err := in.Driver.Reopen(ctx, in.driverAttempt())
	if err != nil {
		return Result{}, false, err
	}
	defer ws.Close()
	res = Result{Worker: out, Class: outcome.Infra, Reason: outcome.ReasonAbandoned, Detail: "the coordinator stopped during this attempt, before its worker finished"}
	if done && out.Class == outcome.Success {
		res.Class, res.Reason, res.Detail = outcome.Success, outcome.ReasonCompleted, ""
	}
	res, err = finish(ctx, in, ws, res)
	diagnoseResult(in, &res)
	return recovered(res), true, err
}

// recorded is the worker's outcome as its stream recorded it.
func recorded(in Input) (claude.Outcome, bool) {
	f, err := os.Open(Record(in.Dir).Stream())
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
