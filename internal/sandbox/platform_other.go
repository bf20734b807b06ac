//go:build !linux

package sandbox

import "syscall"

// Outside Linux every entry point of the sandbox refuses with Supported's
// line; Command and Check return it before they look for bwrap.

func privateMounts(*syscall.SysProcAttr)     {}
func intoCgroupFD(*syscall.SysProcAttr, int) {}

// RunInit refuses: there is no sandbox to be PID 1 of here.
func RunInit(InitConfig, []string) int { return initFail("%w", Supported()) }

// SeccompExec refuses: seccomp is Linux's.
func SeccompExec(InitConfig, []string) error { return Supported() }

// RunPrep refuses: mount namespaces are Linux's.
func RunPrep(PrepConfig, []string) error { return Supported() }
