//go:build !linux

package doctor

import "runtime"

// ProbeUserNS: user namespaces are Linux's (bubblewrap needs them).
func ProbeUserNS() UserNSCheck {
	return UserNSCheck{Detail: "none on " + runtime.GOOS + " (Linux only)"}
}
