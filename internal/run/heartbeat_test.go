package run

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/runstate"
)

// TestHeartbeatFilePrivate: live.json (running attempts, the governor) is
// 0600, also when an older one was left 0644.
func TestHeartbeatFilePrivate(t *testing.T) {
	dir := t.TempDir()
	c := &Coordinator{paths: Paths{RunDir: dir}, live: map[string]runstate.LiveAttempt{},
		gov: NewGovernor(config.Default(), 1, func(string, any) {})}
	path := c.paths.LiveFile()
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	stop := c.startHeartbeats(context.Background())
	defer stop()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no heartbeat written")
		}
		time.Sleep(10 * time.Millisecond)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o600 {
		t.Errorf("live.json is %o, want 600", m)
	}
}
