//go:build linux

package sandbox

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_AARCH64
	x32Bit    = 0 // arm64 has no second syscall numbering
	sysSocket = unix.SYS_SOCKET
)
