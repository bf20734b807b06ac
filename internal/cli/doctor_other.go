//go:build !linux

package cli

import "runtime"

// probeUserNS: user namespaces are Linux's (bubblewrap needs them).
func probeUserNS() usernsCheck {
	return usernsCheck{Detail: "none on " + runtime.GOOS + " (Linux only)"}
}
