package diskwatch

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// allocate gives f size bytes of blocks: fallocate, or the bytes written
// out on a file system without it.
func allocate(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) {
		return writeOut(f, size)
	}
	return err
}
