//go:build linux && !amd64 && !arm64

package sandbox

// No filter is written for other architectures: installFilter refuses, so
// the sandbox does not start without it.
const (
	auditArch = 0
	x32Bit    = 0
	sysSocket = 0
)
