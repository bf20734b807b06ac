package run

import (
	"context"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/diskwatch"
)

// maxDiskReserve bounds the room a coordinator holds back for its records:
// events, audit entries, its commits; a few MiB while a fill is stopped.
const maxDiskReserve = 16 << 20

// holdDiskReserve holds back room on the disk of the run's records while
// the run lives (diskwatch.Reserve): when a worker (or anything else)
// takes the disk below disk.min_free_mb, zerg gives the room back to its
// own records while the disk watch stops the worker; once there is room
// again it holds it again. It returns the function that ends it. Without a
// floor there is nothing to hold (and nothing is said when the reserve
// cannot be made: the floor and the watch still hold).
func holdDiskReserve(ctx context.Context, paths Paths, disk config.Disk, p *progress) func() {
	minFree := int64(disk.MinFreeMB) << 20
	size := min(minFree/4, maxDiskReserve)
	if size <= 0 {
		return func() {}
	}
	r, err := diskwatch.NewReserve(paths.DiskReserve(), size)
	if err != nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		diskwatch.KeepReserve(ctx, r, minFree, 0, func(released bool, free int64) {
			if released {
				p.note("%d MiB free on the disk of the run's records, below disk.min_free_mb (%d MiB): zerg gives its own records the %d MiB it held back while the disk watch stops the attempt that writes",
					free>>20, disk.MinFreeMB, size>>20)
			}
		})
	}()
	return func() { cancel(); <-done }
}
