package diskwatch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestUsageCountsBlocks(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), make([]byte, 1<<20), 0o644)
	os.MkdirAll(filepath.Join(dir, "d"), 0o755)
	os.WriteFile(filepath.Join(dir, "d", "b"), make([]byte, 1<<20), 0o644)
	os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "d", "a-again"))
	used, _ := Usage(dir, filepath.Join(dir, "missing"))
	if used < 2<<20 || used > 3<<20 {
		t.Errorf("usage %d, want about 2 MiB (a link counts once)", used)
	}
}

// A writer past its limit trips; the control, an attempt under it, does not.
func TestWatchTripsOnTheLimit(t *testing.T) {
	dir := t.TempDir()
	tripped := make(chan error, 1)
	stop := Start(context.Background(), Watch{Dirs: []string{dir}, Limit: 8 << 20, Interval: 10 * time.Millisecond}, func(err error) { tripped <- err })
	defer stop()
	os.WriteFile(filepath.Join(dir, "small"), make([]byte, 1<<20), 0o644)
	select {
	case err := <-tripped:
		t.Fatalf("tripped under the limit: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	for i := range 10 {
		os.WriteFile(filepath.Join(dir, "f"+string(rune('0'+i))), make([]byte, 1<<20), 0o644)
	}
	select {
	case err := <-tripped:
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("tripped with %v, want ErrTooLarge", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("not tripped past the limit")
	}
}

// Below the floor, the attempt that writes trips; one that does not, goes on.
func TestWatchTripsAWriterBelowTheFloor(t *testing.T) {
	dir := t.TempDir()
	free, err := Free(dir)
	if err != nil {
		t.Fatal(err)
	}
	floor := free + 1<<30 // the disk is "full" already
	writer, bystander := make(chan error, 1), make(chan error, 1)
	wdir, bdir := filepath.Join(dir, "w"), filepath.Join(dir, "b")
	os.Mkdir(wdir, 0o755)
	os.Mkdir(bdir, 0o755)
	w := Watch{MinFree: floor, Filesystems: []string{dir}, Interval: 10 * time.Millisecond}
	w.Dirs = []string{wdir}
	stopW := Start(context.Background(), w, func(err error) { writer <- err })
	defer stopW()
	w.Dirs = []string{bdir}
	stopB := Start(context.Background(), w, func(err error) { bystander <- err })
	defer stopB()
	time.Sleep(50 * time.Millisecond)
	os.WriteFile(filepath.Join(wdir, "big"), make([]byte, 20<<20), 0o644)
	select {
	case err := <-writer:
		if !errors.Is(err, ErrDiskFull) {
			t.Errorf("writer tripped with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the writer was not stopped below the floor")
	}
	select {
	case err := <-bystander:
		t.Errorf("the bystander was stopped: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := Check(floor, dir); !errors.Is(err, ErrDiskFull) {
		t.Errorf("Check below the floor: %v", err)
	}
	if err := Check(1, dir); err != nil {
		t.Errorf("Check above the floor: %v", err)
	}
}

// A writer that takes the disk in one go, between two checks, is still the
// one stopped (what it wrote since free space was last above the floor
// counts); the bystander, which wrote nothing meanwhile, goes on. Before,
// only what it wrote after the disk was seen low counted, and a writer that
// had already filled the disk was never stopped.
func TestWatchTripsAOneGoFiller(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	full := false
	free := func(string) (int64, error) {
		mu.Lock()
		defer mu.Unlock()
		if full {
			return 1 << 20, nil
		}
		return 1 << 30, nil
	}
	wdir, bdir := filepath.Join(dir, "w"), filepath.Join(dir, "b")
	os.Mkdir(wdir, 0o755)
	os.Mkdir(bdir, 0o755)
	os.WriteFile(filepath.Join(bdir, "small"), make([]byte, 1<<20), 0o644)
	writer, bystander := make(chan error, 1), make(chan error, 1)
	w := Watch{MinFree: 64 << 20, Filesystems: []string{dir}, Interval: 10 * time.Millisecond, free: free}
	w.Dirs = []string{wdir}
	stopW := Start(context.Background(), w, func(err error) { writer <- err })
	defer stopW()
	w.Dirs = []string{bdir}
	stopB := Start(context.Background(), w, func(err error) { bystander <- err })
	defer stopB()
	time.Sleep(600 * time.Millisecond) // a walk while there is room
	os.WriteFile(filepath.Join(wdir, "big"), make([]byte, 20<<20), 0o644)
	mu.Lock()
	full = true // the disk is full by the next check
	mu.Unlock()
	select {
	case err := <-writer:
		if !errors.Is(err, ErrDiskFull) {
			t.Errorf("writer tripped with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a writer that filled the disk between two checks was not stopped")
	}
	select {
	case err := <-bystander:
		t.Errorf("the bystander was stopped: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
}

// The reserve holds its room, gives it back below the floor and takes it
// again only when there is room to spare.
func TestReserve(t *testing.T) {
	dir := t.TempDir()
	r, err := NewReserve(filepath.Join(dir, "reserve"), 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	if used, _ := Usage(dir); used < 4<<20 {
		t.Fatalf("the reserve takes %d bytes of blocks, want its 4 MiB (not sparse)", used)
	}
	var mu sync.Mutex
	free := int64(100 << 20)
	r.free = func(string) (int64, error) { mu.Lock(); defer mu.Unlock(); return free, nil }
	said := make(chan bool, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		KeepReserve(ctx, r, 64<<20, 5*time.Millisecond, func(released bool, _ int64) { said <- released })
		close(done)
	}()
	set := func(n int64) { mu.Lock(); free = n; mu.Unlock() }
	set(10 << 20) // below the floor
	if released := <-said; !released || r.Held() {
		t.Fatal("the reserve was not released below the floor")
	}
	if _, err := os.Stat(filepath.Join(dir, "reserve")); err == nil {
		t.Error("the reserve's file is still there")
	}
	set(66 << 20) // above the floor, but not by twice the reserve
	time.Sleep(50 * time.Millisecond)
	if r.Held() {
		t.Error("restored without room to spare")
	}
	set(200 << 20)
	if released := <-said; released || !r.Held() {
		t.Error("not restored with room to spare")
	}
	cancel()
	<-done
	if _, err := os.Stat(filepath.Join(dir, "reserve")); err == nil {
		t.Error("the reserve outlived its keeper")
	}
}
