package eventlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/zergrush/zerg/internal/fsx"
)

// OpenAppend opens the log at path for appending without reading it
// whole, for a writer that appends one event and closes (the audit log,
// appended to by several processes for every decision): it takes the lock
// like Open, reads only the last complete line, cuts off a torn one, and
// returns the last event (the zero Event when the log is empty). Only
// that line is checked (its hash); the chain before it is Verify's.
func OpenAppend(path string) (*Log, Event, error) {
	if err := fsx.PrivateDir(filepath.Dir(path)); err != nil {
		return nil, Event{}, err
	}
	lk := flock.New(path+".lock", flock.SetPermissions(fsx.PrivateFileMode))
	ok, err := lk.TryLock()
	if err != nil {
		return nil, Event{}, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		return nil, Event{}, fmt.Errorf("%s: %w", path, ErrLocked)
	}
	fail := func(err error) (*Log, Event, error) {
		lk.Unlock()
		return nil, Event{}, err
	}
	if err := fsx.Narrow(path + ".lock"); err != nil {
		return fail(err)
	}
	f, err := fsx.OpenPrivate(path, os.O_RDWR)
	if err != nil {
		return fail(err)
	}
	last, end, err := lastEvent(f)
	if err != nil {
		_ = f.Close() // on the error path: the file was only read and truncated
		return fail(fmt.Errorf("%s: %w", path, err))
	}
	if err := f.Truncate(end); err != nil {
		_ = f.Close()
		return fail(err)
	}
	if _, err := f.Seek(end, io.SeekStart); err != nil {
		_ = f.Close()
		return fail(err)
	}
	l := &Log{f: f, lock: lk, last: Genesis, now: time.Now}
	if last.Seq > 0 {
		l.seq, l.last = last.Seq, last.Hash
	}
	return l, last, nil
}

// lastEvent reads the last good event of f backwards from its end and
// returns it with the offset just after it. A last line without its
// newline, or one that is not JSON, was torn by a crash and is skipped
// (as scan does); a last event whose hash does not match its content is
// corruption.
func lastEvent(f *os.File) (Event, int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return Event{}, 0, err
	}
	end := fi.Size()
	for tries := 0; end > 0 && tries < 2; tries++ {
		line, start, err := lineBefore(f, end)
		if err != nil {
			return Event{}, 0, err
		}
		complete := len(line) > 0 && line[len(line)-1] == '\n'
		var e Event
		if complete && json.Unmarshal(bytes.TrimSpace(line), &e) == nil {
			if reason := check(e, e.Prev, e.Seq-1); reason != "" {
				return Event{}, 0, &CorruptError{Line: 0, Reason: "the last line: " + reason}
			}
			return e, end, nil
		}
		end = start // torn: the event before it is the last
	}
	if end == 0 {
		return Event{}, 0, nil
	}
	return Event{}, 0, errors.New("the last two lines are not events")
}

// lineBefore returns the line that ends at end (its newline included) and
// where it starts, reading backwards in chunks.
func lineBefore(f *os.File, end int64) ([]byte, int64, error) {
	const chunk = 64 << 10
	var buf []byte
	pos := end
	for {
		// The line's own newline is its last byte: search before it.
		search := buf
		if len(search) > 0 && pos+int64(len(buf)) == end && search[len(search)-1] == '\n' {
			search = search[:len(search)-1]
		}
		if i := bytes.LastIndexByte(search, '\n'); i >= 0 {
			return buf[i+1:], pos + int64(i) + 1, nil
		}
		if pos == 0 {
			return buf, 0, nil
		}
		if int64(len(buf)) > maxLine {
			return nil, 0, &CorruptError{Line: 0, Reason: "the last line is longer than 16 MiB"}
		}
		n := min(int64(chunk), pos)
		pos -= n
		b := make([]byte, n)
		if _, err := f.ReadAt(b, pos); err != nil {
			return nil, 0, err
		}
		buf = append(b, buf...)
	}
}
