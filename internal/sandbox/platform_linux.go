package sandbox

import "syscall"

// privateMounts starts the process in a mount namespace of its own (Go
// makes it private), where the prep step may mount.
func privateMounts(a *syscall.SysProcAttr) { a.Unshareflags = syscall.CLONE_NEWNS }

// intoCgroupFD starts the process in the cgroup v2 group open at fd.
func intoCgroupFD(a *syscall.SysProcAttr, fd int) { a.UseCgroupFD, a.CgroupFD = true, fd }
