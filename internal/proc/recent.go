package proc

import (
	"sync"
	"time"
)

// recentAge is how old a scan of the process table a periodic scan
// (Tree.Reap) may reuse. Every running attempt's tree is scanned each 300 ms
// (claude's trackInterval); a coordinator with four workers running and four
// prepared read every process's stat about 27 times a second, which took
// two thirds of its CPU (5 s of 7.5 s in a 49 s rush of the short-task
// benchmark, from a CPU profile) on a machine whose two cores the workers'
// CLIs need. Sharing one scan among the trees makes it a few a second. A
// process that lives shorter than the scan interval is missed either way,
// and a kill's scan (Collect with full) always reads afresh.
const recentAge = 250 * time.Millisecond

// scanTable reads the whole process table (a seam for the tests that count
// scans).
var scanTable = Scan

// recent is the last periodic scan, shared by every tree of the process.
// Its map is never written after it is stored: callers only read it.
var recent struct {
	mu    sync.Mutex
	at    time.Time
	procs map[int]Stat
}

// scanRecent returns a scan of the process table no older than maxAge,
// scanning afresh when the last one is older.
func scanRecent(maxAge time.Duration) (map[int]Stat, error) {
	recent.mu.Lock()
	defer recent.mu.Unlock()
	if recent.procs != nil && time.Since(recent.at) < maxAge {
		return recent.procs, nil
	}
	procs, err := scanTable()
	if err != nil {
		return nil, err
	}
	recent.at, recent.procs = time.Now(), procs
	return procs, nil
}
