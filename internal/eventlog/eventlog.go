package eventlog

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/zergrush/zerg/internal/fsx"
)

// Genesis is the Prev of the first event.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// maxLine bounds one event line; events carry summaries, never whole streams.
const maxLine = 16 << 20

// Event is one line of the log. Type and the payload are the caller's; Seq,
// Time, Prev and Hash are set by Append.
type Event struct {
	Seq     int64           `json:"seq"`
	Time    time.Time       `json:"time"`
	Type    string          `json:"type"`
	Task    string          `json:"task,omitempty"`
	Attempt int             `json:"attempt,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	Prev    string          `json:"prev"`
	Hash    string          `json:"hash"`
}

// Decode unmarshals the event's payload into v.
func (e Event) Decode(v any) error {
	if len(e.Data) == 0 {
		return nil
	}
	return json.Unmarshal(e.Data, v)
}

// hashOf is SHA-256 over the event's JSON with Hash empty: it covers Prev,
// so each line commits to everything before it.
func hashOf(e Event) (string, error) {
	e.Hash = ""
	b, err := json.Marshal(e)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Log is an open log. Only one process may hold it for writing (a lock file
// beside it enforces that); Append is safe for concurrent goroutines.
type Log struct {
	mu   sync.Mutex
	f    logFile
	lock *flock.Flock
	seq  int64
	last string
	now  func() time.Time
}

// ErrLocked is returned when another process is writing the log.
var ErrLocked = errors.New("the log is in use by another process")

// Open opens (or creates) the log at path for appending and returns the events
// already in it. A torn last line is cut off; any other damage is an error,
// since appending after it would hide it.
func Open(path string) (*Log, []Event, error) {
	// Private: events carry what workers and gates printed.
	if err := fsx.PrivateDir(filepath.Dir(path)); err != nil {
		return nil, nil, err
	}
	lk := flock.New(path+".lock", flock.SetPermissions(fsx.PrivateFileMode))
	ok, err := lk.TryLock()
	for i := 0; err == nil && !ok && i < 5; i++ {
		// A reader probing with Held holds the lock for an instant.
		time.Sleep(20 * time.Millisecond)
		ok, err = lk.TryLock()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		return nil, nil, fmt.Errorf("%s: %w", path, ErrLocked)
	}
	// A lock file an older zerg left 0644 is narrowed too; it holds nothing,
	// but everything of the run's is private.
	if err := fsx.Narrow(path + ".lock"); err != nil {
		lk.Unlock()
		return nil, nil, err
	}
	f, err := fsx.OpenPrivate(path, os.O_RDWR)
	if err != nil {
		lk.Unlock()
		return nil, nil, err
	}
	events, good, err := scan(f)
	if err != nil {
		_ = f.Close() // on the error path: the file was only read and truncated
		lk.Unlock()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Truncate(good); err != nil {
		_ = f.Close()
		lk.Unlock()
		return nil, nil, err
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		_ = f.Close()
		lk.Unlock()
		return nil, nil, err
	}
	l := &Log{f: f, lock: lk, last: Genesis, now: time.Now}
	if n := len(events); n > 0 {
		l.seq, l.last = events[n-1].Seq, events[n-1].Hash
	}
	return l, events, nil
}

// Append writes one event and fsyncs it before returning: once Append
// returns, the event survives a crash. A payload over MaxData is shrunk
// first (Shrink).
func (l *Log) Append(e Event) (Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return Event{}, errors.New("log is closed")
	}
	e.Seq = l.seq + 1
	e.Data = Shrink(e.Data, MaxData)
	if e.Time.IsZero() {
		e.Time = l.now().UTC()
	}
	e.Prev = l.last
	h, err := hashOf(e)
	if err != nil {
		return Event{}, err
	}
	e.Hash = h
	line, err := json.Marshal(e)
	if err != nil {
		return Event{}, err
	}
	line = append(line, '\n')
	if err := l.write(line); err != nil {
		return Event{}, err
	}
	l.seq, l.last = e.Seq, e.Hash
	return e, nil
}

// logFile is what a Log writes to (an *os.File).
type logFile interface {
	io.ReadWriteSeeker
	Sync() error
	Truncate(size int64) error
	Close() error
}

// write appends line and fsyncs it. A write or fsync that fails leaves
// nothing of the line behind (a torn line before the next event would make
// the log unreadable from there on); one that failed for want of space is
// tried again for a while (fsx.WaitForRoom).
func (l *Log) write(line []byte) error {
	off, err := l.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	return fsx.WaitForRoom(func() error {
		_, err := l.f.Write(line)
		if err == nil {
			err = l.f.Sync()
		}
		if err == nil {
			return nil
		}
		if terr := l.f.Truncate(off); terr != nil {
			return errors.Join(err, terr)
		}
		if _, serr := l.f.Seek(off, io.SeekStart); serr != nil {
			return errors.Join(err, serr)
		}
		return err
	})
}

// AppendData marshals data as the payload and appends.
func (l *Log) AppendData(typ, task string, attempt int, data any) (Event, error) {
	e, err := NewEvent(typ, task, attempt, data)
	if err != nil {
		return Event{}, err
	}
	return l.Append(e)
}

// NewEvent builds an event with data marshalled as its payload, not yet
// appended (no sequence number, time or hash).
func NewEvent(typ, task string, attempt int, data any) (Event, error) {
	e := Event{Type: typ, Task: task, Attempt: attempt}
	if data != nil {
		b, err := json.Marshal(data)
		if err != nil {
			return Event{}, fmt.Errorf("encode %s event: %w", typ, err)
		}
		e.Data = b
	}
	return e, nil
}

// Held reports whether a writer holds the log at path: the lock Open takes
// is held exactly as long as the writing process lives, so a free lock
// means the writer is gone, whatever its status file says. Readers take the
// lock shared for an instant and never block a writer for longer.
func Held(path string) (bool, error) {
	lk := flock.New(path + ".lock")
	ok, err := lk.TryRLock()
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("probe the lock of %s: %w", path, err)
	}
	if ok {
		_ = lk.Unlock()
		return false, nil
	}
	return true, nil
}

// Close releases the file and the lock.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	l.lock.Unlock()
	return err
}

// Read returns the events of a log without locking it (readers such as
// `zerg status` run beside the writer). A torn last line is ignored.
func Read(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	events, _, err := scan(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return events, nil
}

// CorruptError names the first line that breaks the log.
type CorruptError struct {
	Line   int
	Reason string
}

func (e *CorruptError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// scan reads every complete event and returns the byte offset after the last
// good one. Only the final line may be bad (torn by a crash); a bad line
// followed by more lines, a broken chain or a sequence gap is corruption.
func scan(r io.Reader) ([]Event, int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var events []Event
	var good int64
	prev, seq := Genesis, int64(0)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > maxLine {
			return nil, 0, &CorruptError{n, "line longer than 16 MiB"}
		}
		if err == io.EOF {
			// A last line without its newline was torn mid-write.
			return events, good, nil
		}
		if err != nil {
			return nil, 0, err
		}
		var e Event
		if jerr := json.Unmarshal(bytes.TrimSpace(line), &e); jerr != nil {
			if _, perr := br.Peek(1); perr == io.EOF {
				return events, good, nil // torn last line that happens to end in '\n'
			}
			return nil, 0, &CorruptError{n, "not a JSON event: " + jerr.Error()}
		}
		if reason := check(e, prev, seq); reason != "" {
			return nil, 0, &CorruptError{n, reason}
		}
		events = append(events, e)
		prev, seq = e.Hash, e.Seq
		good += int64(len(line))
	}
}

func check(e Event, prev string, seq int64) string {
	if e.Seq != seq+1 {
		return fmt.Sprintf("sequence %d follows %d (a line was removed, added or moved)", e.Seq, seq)
	}
	if e.Prev != prev {
		return "its prev hash does not match the line before (a line was removed or reordered)"
	}
	h, err := hashOf(e)
	if err != nil || h != e.Hash {
		return "its hash does not match its content (the line was edited)"
	}
	return ""
}

// Verify checks the whole chain of the log at path and returns the number of
// events, or a *CorruptError naming the first bad line. Unlike Read, a bad last
// line is reported too: after a clean shutdown there is none.
func Verify(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	events, good, err := scan(bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	if good != int64(len(data)) {
		return 0, &CorruptError{len(events) + 1, "incomplete last line (torn write, or text added at the end)"}
	}
	return len(events), nil
}
