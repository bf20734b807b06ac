package container

import (
	"fmt"
	"runtime"
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
	if goos == "linux" {
		return nil
	}
	name := goos
	if goos == "darwin" {
		name = "macOS"
	}
	return fmt.Errorf("container mode runs on Linux only (the container's init is zerg's own Linux binary); on %s set mode: subprocess (or tasks) in .zerg/config.yaml (docs/macos.md)", name)
}
