package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/zergrush/zerg/internal/cgroup"
)

// RunPrep is PrepCommand: it runs as root in a new mount namespace (the
// caller starts it with CLONE_NEWNS, which Go makes private), prepares the
// shared directories and executes argv as c.UID:c.GID. It returns only on
// failure.
func RunPrep(c PrepConfig, argv []string) error {
	if os.Geteuid() != 0 {
		return errors.New("must run as root")
	}
	if c.UID <= 0 || c.GID <= 0 {
		return fmt.Errorf("refusing uid %d / gid %d: give an unprivileged user", c.UID, c.GID)
	}
	if len(argv) == 0 || !filepath.IsAbs(argv[0]) {
		return fmt.Errorf("the command must start with an absolute path, got %q", argv)
	}
	// Into the command's cgroup first: everything started from here on is
	// in it.
	if err := cgroup.Join(c.Cgroups); err != nil {
		return err
	}
	// Hold every shared directory before its ancestor is covered.
	fds := make([]int, len(c.Share))
	for i, d := range c.Share {
		fd, err := unix.Open(d, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open shared directory %s: %w", d, err)
		}
		fds[i] = fd
	}
	for _, a := range c.Cover {
		if err := unix.Mount("zerg-shared", a, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
			return fmt.Errorf("cover %s: %w", a, err)
		}
	}
	for i, d := range c.Share {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("shared directory %s: %w", d, err)
		}
		src := fmt.Sprintf("/proc/self/fd/%d", fds[i])
		if err := unix.Mount(src, d, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", d, err)
		}
		if err := unix.Mount("", d, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			return fmt.Errorf("make %s read-only: %w", d, err)
		}
		_ = unix.Close(fds[i]) // an O_PATH descriptor, bound already: nothing to lose
	}
	// Groups first, then the gid, then the uid: each needs the privilege
	// the next one drops.
	if err := syscall.Setgroups([]int{}); err != nil {
		return fmt.Errorf("drop groups: %w", err)
	}
	if err := syscall.Setresgid(c.GID, c.GID, c.GID); err != nil {
		return fmt.Errorf("set gid %d: %w", c.GID, err)
	}
	if err := syscall.Setresuid(c.UID, c.UID, c.UID); err != nil {
		return fmt.Errorf("set uid %d: %w", c.UID, err)
	}
	return syscall.Exec(argv[0], argv, os.Environ())
}
