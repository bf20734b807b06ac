package runstate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// LiveFile is the heartbeat file the coordinator rewrites every second while
// it runs: the launch governor's state and each running attempt's last
// stream event, turns, tool calls and tokens. zerg status reads it; it is
// not state (the log is), only a view.
const LiveFile = "live.json"

// Live is the content of the heartbeat file.
type Live struct {
	Written  time.Time              `json:"written"`
	PID      int                    `json:"pid"`
	Governor GovernorSnapshot       `json:"governor"`
	Running  map[string]LiveAttempt `json:"running"`
}

// ReadLive reads a run's heartbeat file.
func ReadLive(runDir string) (*Live, error) {
	b, err := os.ReadFile(filepath.Join(runDir, LiveFile))
	if err != nil {
		return nil, err
	}
	var l Live
	return &l, json.Unmarshal(b, &l)
}

// LiveAttempt is a running attempt's heartbeat.
type LiveAttempt struct {
	Attempt   int            `json:"attempt"`
	PID       int            `json:"pid,omitempty"`
	Started   time.Time      `json:"started"`
	LastEvent time.Time      `json:"last_event,omitzero"`
	Turns     int            `json:"turns"`
	ToolCalls map[string]int `json:"tool_calls,omitempty"`
	LastTool  string         `json:"last_tool,omitempty"`
	Tokens    int64          `json:"tokens"`
}

// GovernorSnapshot is the launch governor's state for status. The times are omitzero:
// omitempty never leaves out a time.Time, and printed "0001-01-01T00:00:00Z"
// for a pause or an open breaker that is not there.
type GovernorSnapshot struct {
	Breaker     string    `json:"breaker"`
	Zone        string    `json:"zone"`
	Limit       int       `json:"concurrency"`
	Running     int       `json:"running"`
	PausedUntil time.Time `json:"paused_until,omitzero"`
	OpenUntil   time.Time `json:"open_until,omitzero"`
}
