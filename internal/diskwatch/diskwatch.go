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
	"sync"
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
	// Interval between checks of free space (0: 100 ms: a writer can
	// fill hundreds of MiB in a second). The Dirs are measured at least
	// every Interval while free space is below the floor, and otherwise at
	// most every 500 ms and at least 20 walks' time apart (a big workspace
	// is not walked without pause).
	Interval time.Duration

	free func(string) (int64, error) // Free; tests replace it
}

// growthWhileLow is how much an attempt must have written since its last
// measurement while free space was above the floor to be the one stopped
// once it is below: the writer that took the disk, even in one go between
// two checks; bystanders that write a little go on.
const growthWhileLow = 16 << 20

// walkEvery is the least time between two measurements of the Dirs while
// free space is above the floor.
const walkEvery = 500 * time.Millisecond

// Start watches until ctx ends or stop is called, and calls trip once with
// ErrTooLarge or ErrDiskFull (wrapped with the figures) when the attempt
// passes its limit or, with free space below the floor, has written
// growthWhileLow or more since free space was last seen above it. stop
// waits for the watcher to end.
func Start(ctx context.Context, w Watch, trip func(error)) (stop func()) {
	if w.Limit <= 0 && w.MinFree <= 0 {
		return func() {}
	}
	if w.Interval <= 0 {
		w.Interval = 100 * time.Millisecond
	}
	if w.free == nil {
		w.free = Free
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(w.Interval)
		defer t.Stop()
		// good is the usage at the last measurement while free space was
		// above the floor: what the attempt had written before the disk
		// ran low.
		good, _ := Usage(w.Dirs...)
		nextWalk := time.Now().Add(walkEvery)
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				low, free, fsys := w.low()
				if !low && now.Before(nextWalk) {
					continue
				}
				begin := time.Now()
				used, _ := Usage(w.Dirs...)
				nextWalk = time.Now().Add(max(walkEvery, 20*time.Since(begin)))
				switch {
				case w.Limit > 0 && used > w.Limit:
					trip(fmt.Errorf("%w: it wrote %d MiB, more than its %d MiB", ErrTooLarge, used>>20, w.Limit>>20))
					return
				case low && used-good >= growthWhileLow:
					trip(fmt.Errorf("%w: %d MiB free on %s, below the floor of %d MiB, and it wrote %d MiB since there was more", ErrDiskFull, free>>20, fsys, w.MinFree>>20, (used-good)>>20))
					return
				case !low:
					good = used
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
		if free, err := w.free(p); err == nil && free < w.MinFree {
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

// Reserve is room held back on a file system for zerg's own records (the
// run's log, the audit log, zerg's commits): a file of its size that zerg
// removes when free space falls below the floor, a worker having taken the
// rest, so that its records can still be written while the disk watch stops
// that worker, and makes again once there is room.
type Reserve struct {
	path string
	size int64
	free func(string) (int64, error) // Free; tests replace it

	mu   sync.Mutex
	held bool
}

// NewReserve holds size bytes in a file at path (allocated, not sparse).
func NewReserve(path string, size int64) (*Reserve, error) {
	r := &Reserve{path: path, size: size, free: Free}
	if err := r.make(); err != nil {
		return nil, err
	}
	return r, nil
}

// Size is the room the reserve holds.
func (r *Reserve) Size() int64 { return r.size }

func (r *Reserve) make() error {
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("disk reserve: %w", err)
	}
	err = allocate(f, r.size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(r.path)
		return fmt.Errorf("disk reserve %s: %w", r.path, err)
	}
	r.held = true
	return nil
}

// Release gives the room back to the file system; it reports whether the
// reserve was held.
func (r *Reserve) Release() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.held {
		return false
	}
	r.held = false
	return os.Remove(r.path) == nil
}

// Restore holds the room again when the file system has it with free
// space to spare (twice the reserve above minFree, so that holding it
// does not take free space below the floor at once).
func (r *Reserve) Restore(minFree int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held {
		return false
	}
	if free, err := r.free(filepath.Dir(r.path)); err != nil || free < minFree+2*r.size {
		return false
	}
	return r.make() == nil
}

// Held reports whether the room is held.
func (r *Reserve) Held() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// Close gives the room back for good.
func (r *Reserve) Close() { r.Release() }

// KeepReserve releases r whenever free space on its file system is below
// minFree and restores it once there is room again, checking every
// interval (0: 50 ms), until ctx ends; then it releases it. said hears of
// each release and restore.
func KeepReserve(ctx context.Context, r *Reserve, minFree int64, interval time.Duration, said func(released bool, free int64)) {
	if interval <= 0 {
		interval = 50 * time.Millisecond
	}
	defer r.Close()
	t := time.NewTicker(interval)
	defer t.Stop()
	dir := filepath.Dir(r.path)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			free, err := r.free(dir)
			if err != nil {
				continue
			}
			if free < minFree && r.Release() && said != nil {
				said(true, free)
			} else if !r.Held() && r.Restore(minFree) && said != nil {
				said(false, free)
			}
		}
	}
}

// writeOut writes size zero bytes to f, a MiB at a time.
func writeOut(f *os.File, size int64) error {
	chunk := make([]byte, 1<<20)
	for left := size; left > 0; left -= int64(len(chunk)) {
		if _, err := f.Write(chunk[:min(int64(len(chunk)), left)]); err != nil {
			return err
		}
	}
	return nil
}
