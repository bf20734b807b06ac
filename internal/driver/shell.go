package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/zergrush/zerg/internal/capture"
	"github.com/zergrush/zerg/internal/proc"
	"github.com/zergrush/zerg/internal/sandbox"
	"github.com/zergrush/zerg/internal/security"
)

// Shell is one repository command zerg runs itself: a task's verification
// or a quality gate.
type Shell struct {
	Command string
	Dir     string
	Timeout time.Duration
	// Env is set on top of an allowlist (PATH, locale, TMPDIR) and the names
	// in Pass copied from zerg's environment.
	Env  []string
	Pass []string
	// RunAs runs the command as the unprivileged worker user: it executes
	// code a worker wrote.
	RunAs *security.WorkerUser
	// Sandbox, when set, runs the command inside this sandbox (its Env is
	// the command's environment; Dir must be its Workdir). RunAs is then
	// the sandbox's. Boundary makes it (nil: bubblewrap).
	Sandbox  *sandbox.Spec
	Boundary Boundary
}

// Run runs the command with `sh -c` in its own process group, so a timeout
// or cancellation kills everything it started, and returns its exit code
// (124 on timeout) and combined output (its first 64 KiB and last 192 KiB
// when it printed more, with a line saying how much was left out).
func (s Shell) Run(ctx context.Context) (int, string) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The user's terminal type, as when they run the command by hand: a
	// forced TERM=dumb made a project's own suite fail where it passed by
	// hand (its tests compared coloured output). Without a TERM (CI, a
	// service) there is none here either.
	var env []string
	for _, k := range append([]string{"PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "TERM"}, s.Pass...) {
		if v, ok := os.LookupEnv(k); ok {
			if k == "TMPDIR" && s.Sandbox != nil {
				continue // the sandbox has its own /tmp
			}
			env = append(env, k+"="+v)
		}
	}
	env = append(env, s.Env...)
	var cmd *exec.Cmd
	if s.Sandbox != nil {
		sb := *s.Sandbox
		sb.Env = env
		box := s.Boundary
		if box == nil {
			box = Bubblewrap{}
		}
		c, done, err := box.Command(cctx, sb, "/bin/sh", "-c", s.Command)
		if err != nil {
			return 1, fmt.Sprintf("zerg: cannot start the %s: %v", box.Mode(), err)
		}
		defer done()
		cmd = c
	} else {
		cmd = exec.CommandContext(cctx, "sh", "-c", s.Command)
		cmd.Dir = s.Dir
		cmd.Env = env
		if u := s.RunAs; u != nil && (u.UID != os.Geteuid() || u.GID != os.Getegid()) {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.UID), Gid: uint32(u.GID), Groups: []uint32{}}}
		}
	}
	cmd.WaitDelay = 5 * time.Second
	// What the command prints is the worker's code's to choose: kept within
	// a bound (its beginning and its end).
	buf := capture.New()
	cmd.Stdout, cmd.Stderr = buf, buf
	// Its own process group; a timeout or cancellation SIGKILLs its whole
	// tree at once (no grace: the command has had its time).
	tree, err := proc.Start(cmd, proc.Options{}, 0)
	if err == nil {
		err = cmd.Wait()
		tree.SetExited()
	}
	out := buf.String()
	if err == nil {
		return 0, out
	}
	if cctx.Err() == context.DeadlineExceeded {
		return 124, out + fmt.Sprintf("\n(zerg: timed out after %s)", timeout)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		return ee.ExitCode(), out
	}
	return 1, out + "\n" + err.Error()
}
