package sandbox

import (
	"runtime"

	"github.com/zergrush/zerg/internal/platform"
)

// Supported is nil where sandbox mode can run: Linux, with bubblewrap's
// namespaces, a seccomp filter and zerg's init as PID 1. Elsewhere it is
// the one line that refuses the mode and names those that run there.
func Supported() error { return SupportedOn(runtime.GOOS) }

// SupportedOn is Supported for the OS goos (runtime.GOOS's names).
func SupportedOn(goos string) error {
	return platform.LinuxOnly(goos, "sandbox", "bubblewrap namespaces and seccomp")
}
