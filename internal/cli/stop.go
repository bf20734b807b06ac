package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/run"
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
			t, err := a.resolveRun(cmd.Context(), firstArg(args))
			if err != nil {
				return err
			}
			v, st, err := t.inspect()
			if err != nil {
				return err
			}
			pid := 0
			if v.Coordinator.Alive {
				pid = coordinatorPID(v.Coordinator.PID)
				if pid == 0 {
					// Alive (it holds the log) but not one zerg can name: its
					// workers are its own to stop.
					return &run.Error{Kind: run.Locked, Feature: t.feature, Path: t.paths.Events,
						Err: fmt.Errorf("the run of %s is held by a coordinator zerg cannot identify (its pid file is missing or names another program)", t.feature)}
				}
			}
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
				if st, err = t.state(); err != nil {
					return err
				}
			} else if v.State == run.RunDead {
				fmt.Fprintf(a.stdout, "the coordinator of %s is dead (nothing holds the run's log)\n", t.feature)
			}
			// Whatever the coordinator could not clean up: the workers its log
			// recorded, and only those.
			killed := 0
			for _, o := range st.OpenAttempts() {
				if len(o.PIDs) > 0 || o.Marker != "" || o.Workspace != "" {
					killed += len(claude.KillRecorded(o.Marker, o.PIDs, 2*time.Second, o.Workspace))
				}
			}
			switch {
			case pid <= 0 && killed == 0 && v.State != run.RunDead:
				fmt.Fprintf(a.stdout, "%s is not running\n", t.feature)
			case killed > 0:
				fmt.Fprintf(a.stdout, "killed %d leftover worker process(es)\n", killed)
			}
			if pid > 0 || killed > 0 || v.State == run.RunDead {
				fmt.Fprintf(a.stdout, "stopped; continue with zerg rush %s --resume\n", t.feature)
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for a graceful stop before killing")
	return cmd
}

// coordinatorPID returns pid when that process is alive and is a zerg rush,
// else 0: a recycled pid must never make zerg signal an unrelated process.
func coordinatorPID(pid int) int {
	if pid <= 0 || !alive(pid) {
		return 0
	}
	cmdline, err := os.ReadFile(filepath.Join("/proc", fmt.Sprint(pid), "cmdline"))
	if err != nil {
		return 0
	}
	args := strings.Split(string(cmdline), "\x00")
	if len(args) < 2 || !strings.Contains(filepath.Base(args[0]), "zerg") || !containsArg(args, "rush") {
		return 0
	}
	return pid
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
