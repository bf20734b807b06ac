package container

import (
	"runtime"

	"github.com/zergrush/zerg/internal/platform"
)

// Supported is nil where container mode can run: Linux, where the engine
// runs zerg's own binary as the container's init and bind mounts and user
// ids mean what they say on the host. On macOS the engines (Docker
// Desktop, OrbStack, podman machine) run containers in a Linux VM: zerg's
// binary built for macOS is not a Linux program there, and the VM's file
// sharing and user mapping are not rootful podman's. Until that is built
// and run on a Mac, the mode is refused with one line naming those that
// run.
func Supported() error { return SupportedOn(runtime.GOOS) }

// SupportedOn is Supported for the OS goos (runtime.GOOS's names).
func SupportedOn(goos string) error {
	return platform.LinuxOnly(goos, "container", "the container's init is zerg's own Linux binary")
}
