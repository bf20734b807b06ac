// Package platform says which of zerg's modes an OS can run, in the one
// line a refused mode prints.
package platform

import "fmt"

// Name is goos (runtime.GOOS's names) as people say it.
func Name(goos string) string {
	if goos == "darwin" {
		return "macOS"
	}
	return goos
}

// LinuxOnly is nil on Linux; elsewhere it is the one line that refuses
// mode, says what of Linux it needs, and names the modes that run there.
func LinuxOnly(goos, mode, needs string) error {
	if goos == "linux" {
		return nil
	}
	return fmt.Errorf("%s mode runs on Linux only (%s); on %s set mode: subprocess (or tasks) in .zerg/config.yaml (docs/macos.md)", mode, needs, Name(goos))
}
