// Package capture collects what a command prints within a bound: its
// beginning and its end, and a count of what lies between. The commands
// zerg runs itself (a verification, the commit step, a gate, a check) run
// code a worker wrote, which may print without end; zerg keeps what a
// person reads (the first lines for the cause, the last for the summary)
// and never more.
package capture

import (
	"fmt"
	"io"
	"sync"
)

// Default bounds of a Buffer from New.
const (
	DefaultHead = 64 << 10
	DefaultTail = 192 << 10
)

// Buffer is an io.Writer that keeps the first head bytes and the last tail
// bytes written, and counts the rest. It is safe for concurrent writes
// (stdout and stderr of one command).
type Buffer struct {
	mu      sync.Mutex
	head    []byte
	tail    []byte // a ring of cap tailMax once full
	start   int    // where the ring's oldest byte is
	headMax int
	tailMax int
	total   int64
}

// New returns a Buffer with the default bounds.
func New() *Buffer { return NewSize(DefaultHead, DefaultTail) }

// NewSize returns a Buffer keeping head bytes of the beginning and tail of
// the end.
func NewSize(head, tail int) *Buffer {
	return &Buffer{headMax: max(head, 0), tailMax: max(tail, 0)}
}

// Write keeps what fits and counts the rest; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	b.total += int64(n)
	if room := b.headMax - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if b.tailMax == 0 || len(p) == 0 {
		return n, nil
	}
	if len(p) >= b.tailMax {
		// Only the last tailMax bytes of p can remain.
		b.tail = append(b.tail[:0], p[len(p)-b.tailMax:]...)
		b.start = 0
		return n, nil
	}
	if len(b.tail) < b.tailMax {
		room := b.tailMax - len(b.tail)
		k := min(room, len(p))
		b.tail = append(b.tail, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(b.tail[b.start:], p)
		p = p[k:]
		b.start = (b.start + k) % b.tailMax
	}
	return n, nil
}

// Total is how many bytes were written.
func (b *Buffer) Total() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// Omitted is how many bytes between the head and the tail were not kept.
func (b *Buffer) Omitted() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total - int64(len(b.head)) - int64(len(b.tail))
}

// String is the head, then (when something was left out) a line saying
// how much, then the tail.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]byte, 0, len(b.head)+len(b.tail)+64)
	out = append(out, b.head...)
	if omitted := b.total - int64(len(b.head)) - int64(len(b.tail)); omitted > 0 {
		out = append(out, fmt.Sprintf("\n… [zerg: %d bytes of output left out] …\n", omitted)...)
	}
	out = append(out, b.tail[b.start:]...)
	out = append(out, b.tail[:b.start]...)
	return string(out)
}

// Limit returns a writer that passes the first n bytes to w, then writes
// note once and drops the rest (reporting it written, so the producer is
// never stopped by it). For records zerg keeps on disk of what a worker
// sent.
func Limit(w io.Writer, n int64, note string) io.Writer {
	return &limitWriter{w: w, left: n, note: note}
}

type limitWriter struct {
	mu    sync.Mutex
	w     io.Writer
	left  int64
	note  string
	noted bool
}

func (l *limitWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	if l.left > 0 {
		k := int(min(int64(len(p)), l.left))
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
		l.left -= int64(k)
		p = p[k:]
	}
	if len(p) > 0 && !l.noted {
		l.noted = true
		if _, err := io.WriteString(l.w, l.note); err != nil {
			return 0, err
		}
	}
	return n, nil
}
