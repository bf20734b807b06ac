package sandbox

import (
	"fmt"
	"runtime"
)

// Supported is nil where sandbox mode can run: Linux, with bubblewrap's
// namespaces, a seccomp filter and zerg's init as PID 1. Elsewhere it is
// the one line that refuses the mode and names those that run there.
func Supported() error { return SupportedOn(runtime.GOOS) }

// SupportedOn is Supported for the OS goos (runtime.GOOS's names).
func SupportedOn(goos string) error {
	if goos == "linux" {
		return nil
	}
	name := goos
	if goos == "darwin" {
		name = "macOS"
	}
	return fmt.Errorf("sandbox mode runs on Linux only (bubblewrap namespaces and seccomp); on %s set mode: subprocess (or tasks) in .zerg/config.yaml (docs/macos.md)", name)
}
