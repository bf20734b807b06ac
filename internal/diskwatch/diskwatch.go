// Package diskwatch keeps one attempt from taking the disk: it measures
// what the attempt wrote (its workspace and its state) and the free space
// of the filesystems zerg's records live on, and trips when the attempt
// passes its limit or keeps writing while free space is below the floor.
// Tripping is the caller's to act on (stop the attempt, fail its task):
// the watcher only observes.
package diskwatch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrTooLarge trips an attempt that wrote more than its limit.
var ErrTooLarge = errors.New("workspace_too_large")

// ErrDiskFull trips an attempt that kept writing while free space was
// below the floor.
var ErrDiskFull = errors.New("disk_full")

// Free is the space an unprivileged user may still write on the
// filesystem holding path, in bytes.
func Free(path string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", path, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// Usage is the disk space the files under dirs take (allocated blocks;
// links are not followed, a file with several links inside counts once).
// Directories that do not exist count nothing; unreadable parts are
// skipped and reported by hidden.
func Usage(dirs ...string) (used int64, hidden bool) {
	seen := map[[2]uint64]bool{}
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					hidden = true
				}
				return nil
			}
			info, err := e.Info()
			if err != nil {
				return nil
			}
			st, ok := info.Sys().(*syscall.Stat_t)
			if !ok {
				return nil
			}
			if st.Nlink > 1 && !info.IsDir() {
				k := [2]uint64{uint64(st.Dev), st.Ino}
				if seen[k] {
					return nil
				}
				seen[k] = true
			}
			used += st.Blocks * 512
			return nil
		})
	}
	return used, hidden
}

// Watch is what to watch for one attempt.
type Watch struct {
	Dirs    []string // what the attempt writes: its workspace and its state
	Limit   int64    // bytes the Dirs may take; 0: no limit
	MinFree int64    // the floor of free space; 0: none
	// Filesystems are paths on the filesystems whose free space counts
	// (the run's records, the workspaces).
	Filesystems []string
	// Interval between checks of free space; the Dirs are measured at
	// most every Interval and at least 20 walks' time apart (a big
	// workspace is not walked without pause). 0: 500 ms.
	Interval time.Duration
}

// growthWhileLow is how much an attempt must write while free space is
// below the floor (since it was first seen below) to be the one stopped:
// bystanders that write a little go on.
const growthWhileLow = 16 << 20

// Start watches until ctx ends or stop is called, and calls trip once with
// ErrTooLarge or ErrDiskFull (wrapped with the figures) when the attempt
// passes its limit or writes while free space is below the floor. stop
// waits for the watcher to end.
func Start(ctx context.Context, w Watch, trip func(error)) (stop func()) {
	if w.Limit <= 0 && w.MinFree <= 0 {
		return func() {}
	}
	if w.Interval <= 0 {
		w.Interval = 500 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(w.Interval)
		defer t.Stop()
		baseline := int64(-1) // the usage when free space was first seen below the floor
		var nextWalk time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				low, free, fsys := w.low()
				if !low {
					baseline = -1
					if now.Before(nextWalk) {
						continue
					}
				}
				begin := time.Now()
				used, _ := Usage(w.Dirs...)
				nextWalk = time.Now().Add(max(w.Interval, 20*time.Since(begin)))
				switch {
				case w.Limit > 0 && used > w.Limit:
					trip(fmt.Errorf("%w: it wrote %d MiB, more than its %d MiB", ErrTooLarge, used>>20, w.Limit>>20))
					return
				case low && baseline >= 0 && used-baseline >= growthWhileLow:
					trip(fmt.Errorf("%w: %d MiB free on %s, below the floor of %d MiB, and it wrote %d MiB more", ErrDiskFull, free>>20, fsys, w.MinFree>>20, (used-baseline)>>20))
					return
				case low && baseline < 0:
					baseline = used
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// low reports whether a watched filesystem has less free space than the
// floor, with its free space and path.
func (w Watch) low() (bool, int64, string) {
	if w.MinFree <= 0 {
		return false, 0, ""
	}
	for _, p := range w.Filesystems {
		if free, err := Free(p); err == nil && free < w.MinFree {
			return true, free, p
		}
	}
	return false, 0, ""
}

// Tripped returns the watcher's error if it is why ctx ended, else nil.
func Tripped(ctx context.Context) error {
	if err := context.Cause(ctx); errors.Is(err, ErrTooLarge) || errors.Is(err, ErrDiskFull) {
		return err
	}
	return nil
}

// Check returns an error naming the first of paths whose filesystem has
// less than minFree bytes free (0: no floor).
func Check(minFree int64, paths ...string) error {
	if minFree <= 0 {
		return nil
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		free, err := Free(p)
		if err != nil {
			return err
		}
		if free < minFree {
			return fmt.Errorf("%w: %d MiB free on the filesystem of %s, below disk.min_free_mb (%d MiB)", ErrDiskFull, free>>20, p, minFree>>20)
		}
	}
	return nil
}
