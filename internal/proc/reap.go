package proc

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// Wait waits for the child pid (-1: any child) with wait4's options,
// retrying when a signal interrupts it.
func Wait(pid, options int) (int, syscall.WaitStatus, error) {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(pid, &ws, options, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		return got, ws, err
	}
}

// reap collects the exit status of the zombie pid if it is our child
// (re-parented to us as the subreaper). Only that exact PID is waited for,
// never -1, so other components' children keep their exit statuses for
// their own Wait.
func reap(pid int) {
	var ws unix.WaitStatus
	_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
}
