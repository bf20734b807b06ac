package proc

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Cgroup is a control group a command can start in (*cgroup.Group).
type Cgroup interface {
	Members
	// FD is the group's open directory for CLONE_INTO_CGROUP (cgroup v2),
	// -1 when the group is joined by writing a PID to ProcsFiles (v1).
	FD() int
	ProcsFiles() []string
}

// Start starts cmd in a process group of its own (Setpgid), so that one
// signal reaches everything it starts that does not leave the group, and
// in o.Cgroup when set, and returns its tree. With cgroup v2 the command
// starts in its group (CLONE_INTO_CGROUP); with v1 it is moved there right
// after it starts, before the caller runs anything else, which leaves the
// command a moment in which what it forks stays outside (its process group
// and the tree still find those). cancelGrace, when not negative, makes
// cancelling cmd's context (exec.CommandContext) terminate the whole tree
// with that grace instead of killing only cmd's process.
//
// The caller waits with cmd.Wait and then calls SetExited on the tree.
func Start(cmd *exec.Cmd, o Options, cancelGrace time.Duration) (*Tree, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if o.DieWithParent {
		dieWithParent(cmd.SysProcAttr)
	}
	if o.Cgroup != nil && o.Cgroup.FD() >= 0 {
		if err := startInCgroup(cmd.SysProcAttr, o.Cgroup.FD()); err != nil {
			return nil, err
		}
	}
	// The tree exists only once the command has started; a cancel that
	// comes at once waits for it.
	var (
		once  sync.Once
		ready = make(chan struct{})
		tree  *Tree
	)
	if cancelGrace >= 0 {
		cmd.Cancel = func() error {
			<-ready
			if tree != nil {
				tree.Terminate(cancelGrace)
			}
			return nil
		}
	}
	defer once.Do(func() { close(ready) })
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if o.Cgroup != nil && o.Cgroup.FD() < 0 {
		pid := []byte(strconv.Itoa(cmd.Process.Pid))
		for _, f := range o.Cgroup.ProcsFiles() {
			if err := os.WriteFile(f, pid, 0o644); err != nil {
				tree = NewTree(cmd.Process.Pid, o)
				once.Do(func() { close(ready) })
				tree.Terminate(0)
				_ = cmd.Wait()
				return nil, fmt.Errorf("move the command into its cgroup: %w", err)
			}
		}
	}
	// Not reaped yet (only the caller's Wait reaps it): its PID is its own.
	tree = NewTree(cmd.Process.Pid, o)
	once.Do(func() { close(ready) })
	return tree, nil
}
