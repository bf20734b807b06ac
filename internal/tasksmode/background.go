package tasksmode

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/proc"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/textx"
)

// Background is the Coordinator of a feature's run that zerg tasks next
// starts when none runs: zerg rush FEATURE --mode tasks in a session of its
// own, detached from the caller (a Bash tool call ends long before the
// run), its output in the run's directory (RushLog).
type Background struct {
	Root    string // the repository, where the rush runs
	Feature string
	Paths   run.Paths
	// Zerg is the zerg binary to start ("": this one, os.Executable).
	Zerg string
}

// RushLog is where the output of the coordinator zerg tasks next started
// goes.
func RushLog(p run.Paths) string { return filepath.Join(p.RunDir, "tasks-rush.log") }

// rushRecord holds the process identity of the coordinator zerg tasks
// next started, until it holds the run's log.
func rushRecord(p run.Paths) string { return filepath.Join(p.RunDir, "tasks-rush.json") }

// Inspect is the run's view; a run with no log yet is not started.
func (b Background) Inspect() (runstate.View, error) {
	v, _, err := run.Inspect(b.Paths)
	if errors.Is(err, os.ErrNotExist) {
		return runstate.View{Feature: b.Paths.Feature, State: runstate.RunNotStarted}, nil
	}
	return v, err
}

// Starting reports whether the coordinator an earlier zerg tasks next
// started is still alive.
func (b Background) Starting() bool {
	data, err := os.ReadFile(rushRecord(b.Paths))
	if err != nil {
		return false
	}
	var id proc.ID
	return json.Unmarshal(data, &id) == nil && id.PID > 0 && id.Alive()
}

// Start starts the coordinator, --resume for a run that exists; its exit
// comes on the channel.
func (b Background) Start(resume bool) (<-chan error, error) {
	cmd, err := b.start(resume)
	if err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return exited, nil
}

func (b Background) start(resume bool) (*exec.Cmd, error) {
	self := b.Zerg
	if self == "" {
		var err error
		if self, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	if err := fsx.PrivateDir(b.Paths.RunDir); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(RushLog(b.Paths), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	args := []string{"rush", b.Feature, "--mode", "tasks", "--yes"}
	if resume {
		args = append(args, "--resume")
	}
	cmd := exec.Command(self, args...)
	cmd.Dir = b.Root
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the coordinator of %s: %w", b.Feature, err)
	}
	// Until it holds the run's log (after its environment check), the
	// next zerg tasks next knows it from this record and starts no other.
	if st, err := proc.ReadStat(cmd.Process.Pid); err == nil {
		if data, err := json.Marshal(st.ID()); err == nil {
			_ = fsx.WritePrivate(rushRecord(b.Paths), data)
		}
	}
	return cmd, nil
}

// LogTail is the last n lines of the file at path, on one line, for the
// error of a coordinator that ended.
func LogTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(no output)"
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return textx.Clip(strings.Join(lines, " | "), 1000)
}
