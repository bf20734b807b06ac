package gateway

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// xucredVersion is XUCRED_VERSION of sys/ucred.h.
const xucredVersion = 0

// socketPeerUID is the uid the kernel recorded for the process that
// connected the unix socket fd (LOCAL_PEERCRED, what getpeereid(3) reads).
func socketPeerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return -1, err
	}
	if cred.Version != xucredVersion {
		return -1, fmt.Errorf("peer credentials of version %d, not %d", cred.Version, xucredVersion)
	}
	return int(cred.Uid), nil
}
