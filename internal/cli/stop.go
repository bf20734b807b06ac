package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/claude"
)

func init() { register(newStopCmd) }

func newStopCmd(a *app) *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "stop [FEATURE]",
		Short: "Stop a running zerg rush: gracefully, then its whole process trees",
		Long: `Ask the run's coordinator to stop (SIGTERM): it stops its workers, keeps their
work on their attempt branches, records the stop and exits. If it has not exited
within --wait, it is killed, and so are the worker processes its log recorded
(only those: processes zerg did not start are never touched). Continue the run
later with zerg rush FEATURE --resume.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			feature := ""
			if len(args) == 1 {
				feature = args[0]
			}
			t, err := a.resolveRun(cmd.Context(), feature)
			if err != nil {
				return err
			}
			pid := coordinatorPID(t.paths.Coordinator)
			if pid > 0 {
				fmt.Fprintf(a.stdout, "stopping the coordinator of %s (pid %d)\n", t.feature, pid)
				_ = syscall.Kill(pid, syscall.SIGTERM)
				deadline := time.Now().Add(wait)
				for alive(pid) && time.Now().Before(deadline) {
					time.Sleep(100 * time.Millisecond)
				}
				if alive(pid) {
					fmt.Fprintf(a.stdout, "it did not stop within %s: killing it\n", wait)
					_ = syscall.Kill(pid, syscall.SIGKILL)
					time.Sleep(200 * time.Millisecond)
				}
			}
			// Whatever the coordinator could not clean up: the recorded workers.
			st, err := t.state()
			if err != nil {
				return err
			}
			killed := 0
			for _, ts := range st.Tasks {
				if ts.Open != nil && (len(ts.Open.PIDs) > 0 || ts.Open.Marker != "") {
					killed += len(claude.KillRecorded(ts.Open.Marker, ts.Open.PIDs, 2*time.Second))
				}
			}
			switch {
			case pid <= 0 && killed == 0:
				fmt.Fprintf(a.stdout, "%s is not running\n", t.feature)
			case killed > 0:
				fmt.Fprintf(a.stdout, "killed %d leftover worker process(es)\n", killed)
			}
			if pid > 0 || killed > 0 {
				fmt.Fprintf(a.stdout, "stopped; continue with zerg rush %s --resume\n", t.feature)
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for a graceful stop before killing")
	return cmd
}

// coordinatorPID returns the pid in coordinator.json when that process is
// alive and is a zerg rush, else 0: a stale file must never make zerg signal
// an unrelated process that reused the pid.
func coordinatorPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var c struct {
		PID int `json:"pid"`
	}
	if json.Unmarshal(b, &c) != nil || c.PID <= 0 || !alive(c.PID) {
		return 0
	}
	cmdline, err := os.ReadFile(filepath.Join("/proc", fmt.Sprint(c.PID), "cmdline"))
	if err != nil {
		return 0
	}
	args := strings.Split(string(cmdline), "\x00")
	if len(args) < 2 || !strings.Contains(filepath.Base(args[0]), "zerg") || !containsArg(args, "rush") {
		return 0
	}
	return c.PID
}

func containsArg(args []string, s string) bool {
	for _, a := range args {
		if a == s {
			return true
		}
	}
	return false
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// A zombie is not alive for our purposes.
	b, err := os.ReadFile(filepath.Join("/proc", fmt.Sprint(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
