package proc

import (
	"syscall"
	"time"
)

// Target is what Terminate stops: a process tree, or one process.
type Target interface {
	// Signal sends sig to every process of the target that still runs and
	// returns how many it signalled.
	Signal(sig syscall.Signal) int
	// Live returns the target's processes that still run (not zombies).
	Live() []ID
}

// Timings of Terminate; variables so that tests can shorten them.
var (
	termPoll = 50 * time.Millisecond
	killPoll = 20 * time.Millisecond
	killFor  = 5 * time.Second
)

// Terminate stops t: SIGTERM, up to grace for it to exit, then SIGKILL,
// repeated (a dying parent's children re-parent and must be found again)
// until nothing of t is left or 5 s have passed. grace 0 sends SIGKILL at
// once. onKill, when not nil, is called with what still runs before the
// first SIGKILL that follows a grace. It returns what was still alive at
// the end (normally nothing).
func Terminate(t Target, grace time.Duration, onKill func(left []ID)) []ID {
	if grace > 0 {
		if t.Signal(syscall.SIGTERM) == 0 {
			return nil
		}
		deadline := time.Now().Add(grace)
		for {
			left := t.Live()
			if len(left) == 0 {
				return nil
			}
			if !time.Now().Before(deadline) {
				if onKill != nil {
					onKill(left)
				}
				break
			}
			time.Sleep(termPoll)
		}
	}
	deadline := time.Now().Add(killFor)
	for {
		t.Signal(syscall.SIGKILL)
		time.Sleep(killPoll)
		left := t.Live()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
	}
}

// Process is the one process id as a Target (a coordinator zerg stop
// stops: not a child of the caller, so not reaped by it).
func Process(id ID) Target { return one(id) }

type one ID

func (o one) Signal(sig syscall.Signal) int {
	if Signal(ID(o), sig) == nil {
		return 1
	}
	return 0
}

func (o one) Live() []ID {
	if ID(o).Alive() {
		return []ID{ID(o)}
	}
	return nil
}
