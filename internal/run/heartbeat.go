package run

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/runstate"
)

// startHeartbeats rewrites the heartbeat file every second until stopped.
func (c *Coordinator) startHeartbeats(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	path := c.paths.LiveFile()
	write := func() {
		c.mu.Lock()
		l := runstate.Live{Written: time.Now().UTC(), PID: os.Getpid(), Running: make(map[string]runstate.LiveAttempt, len(c.live))}
		for k, v := range c.live {
			l.Running[k] = v
		}
		c.mu.Unlock()
		l.Governor = c.gov.Snapshot()
		if b, err := json.Marshal(l); err == nil {
			// A view, not state: a failed write only makes status less live.
			_ = fsx.WritePrivate(path, b)
		}
	}
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			write()
			select {
			case <-ctx.Done():
				os.Remove(path)
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// coordinatorPID is the pid the coordinator wrote to its file, 0 when
// unknown. Trust it only while the log's lock is held (eventlog.Held): the
// lock, not this file, says whether the coordinator lives.
func coordinatorPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var c struct {
		PID int `json:"pid"`
	}
	if json.Unmarshal(b, &c) != nil || c.PID <= 0 {
		return 0
	}
	return c.PID
}
