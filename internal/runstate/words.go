package runstate

import (
	"fmt"
	"strings"
	"time"
)

// The words a person reads for a run's state, beside the state they
// describe: the end-of-rush report, zerg status, zerg merge and zerg logs
// say a run's state the same way because they all take it from here.

// Words is a run state as a person reads it.
func (s RunState) Words() string {
	switch s {
	case RunDelivered:
		return "DELIVERED"
	case RunNotDelivered:
		return "NOT DELIVERED"
	case RunHalted:
		return "stopped"
	case RunDead:
		return "interrupted (its coordinator died)"
	case RunNotStarted:
		return "not started"
	}
	return string(s)
}

// Words is a run's state as the report and status head it: a delivery
// whose workers had writes refused says so, never a plain DELIVERED.
func (v View) Words() string {
	if v.State == RunDelivered && v.RefusedWrites > 0 {
		if v.RefusedWrites == 1 {
			return "DELIVERED with 1 refused write"
		}
		return fmt.Sprintf("DELIVERED with %d refused writes", v.RefusedWrites)
	}
	return v.State.Words()
}

// StatusWord is a task's status as a person reads it: an attempt a dead
// coordinator left open is not running, whatever the log last said.
func (t TaskView) StatusWord() string {
	if t.Abandoned != nil {
		return "interrupted"
	}
	return string(t.Status)
}

// GateFailedCommittedLevel finds the level a required gate failed on whose
// tasks are all committed (none failed, none left to run), and the gate:
// the state where "zerg retry" has nothing to retry, so the next step is
// the gate or the graph, not a task.
func (v View) GateFailedCommittedLevel() (level int, gate string, ok bool) {
	for _, l := range v.Levels {
		if l.State != "failed" || !strings.HasPrefix(l.Reason, "gate ") {
			continue
		}
		for _, t := range v.Tasks {
			if t.Level == l.Level && t.Status != StatusCommitted && t.Status != StatusMerged {
				return 0, "", false
			}
		}
		for i := len(v.Gates) - 1; i >= 0; i-- {
			if g := v.Gates[i]; g.Level == l.Level && g.Exit != 0 && g.Required {
				return l.Level, g.Name, true
			}
		}
	}
	return 0, "", false
}

// SeenAt says when something was last seen, as of now: the time of day
// when it was today, else the date too; a fixed time, unlike "5m ago", so
// a dead run's status does not seem to move.
func SeenAt(t, now time.Time) string {
	t = t.Local()
	if t.Format(time.DateOnly) == now.Local().Format(time.DateOnly) {
		return t.Format(time.TimeOnly)
	}
	return t.Format(time.DateTime)
}
