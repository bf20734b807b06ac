package eventlog

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/fsx"
)

// fullDisk is the log's file on a disk that is full for its first
// `full` writes (or fsyncs): each of those writes half of what it is given
// and fails, as a write on a full disk does.
type fullDisk struct {
	logFile
	full     int
	syncFail bool
}

func (d *fullDisk) Write(b []byte) (int, error) {
	if d.full > 0 && !d.syncFail {
		d.full--
		n, _ := d.logFile.Write(b[:len(b)/2])
		return n, syscall.ENOSPC
	}
	return d.logFile.Write(b)
}

func (d *fullDisk) Sync() error {
	if d.full > 0 && d.syncFail {
		d.full--
		return syscall.ENOSPC
	}
	return d.logFile.Sync()
}

// An append that meets a full disk leaves no torn line behind and is
// written once there is room; the log reads whole afterwards. Control:
// without the retries the append fails, and the log still reads whole.
func TestAppendOnAFullDisk(t *testing.T) {
	defer func(w time.Duration, n int) { fsx.NoSpaceWait, fsx.NoSpaceTries = w, n }(fsx.NoSpaceWait, fsx.NoSpaceTries)
	fsx.NoSpaceWait = time.Millisecond
	for _, c := range []struct {
		name      string
		full      int
		syncFail  bool
		tries     int
		appendsOK bool
	}{
		{"a torn write, then room", 3, false, 10, true},
		{"a failed fsync, then room", 3, true, 10, true},
		{"no room in time (control)", 3, false, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsx.NoSpaceTries = c.tries
			path := filepath.Join(t.TempDir(), "events.jsonl")
			l, _, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.AppendData("first", "", 0, map[string]int{"n": 1}); err != nil {
				t.Fatal(err)
			}
			l.f = &fullDisk{logFile: l.f, full: c.full, syncFail: c.syncFail}
			_, err = l.AppendData("second", "", 0, map[string]int{"n": 2})
			if (err == nil) != c.appendsOK {
				t.Fatalf("append on a full disk: %v", err)
			}
			if _, err := l.AppendData("third", "", 0, map[string]int{"n": 3}); err != nil {
				t.Fatal(err)
			}
			l.Close()
			evs, err := Read(path)
			if err != nil {
				t.Fatalf("the log does not read after a full disk: %v", err)
			}
			want := []string{"first", "second", "third"}
			if !c.appendsOK {
				want = []string{"first", "third"}
			}
			var got []string
			for _, e := range evs {
				got = append(got, e.Type)
			}
			if len(got) != len(want) {
				t.Fatalf("events %v, want %v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("events %v, want %v", got, want)
				}
			}
			if _, err := Verify(path); err != nil {
				t.Errorf("the chain does not verify: %v", err)
			}
		})
	}
}
