package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/zergrush/zerg/internal/run"
)

// fingerprint is what a poll looks at before reading anything: the log's
// size and time, and the heartbeat file's time. Cheap stats; the log is
// read (and the coordinator's lock probed) only when one moved, or every
// refresh, for a coordinator that died without a word.
type fingerprint struct {
	size      int64
	mod, beat time.Time
}

func fingerprintOf(p run.Paths) fingerprint {
	var f fingerprint
	if fi, err := os.Stat(p.Events); err == nil {
		f.size, f.mod = fi.Size(), fi.ModTime()
	}
	if fi, err := os.Stat(p.LiveFile()); err == nil {
		f.beat = fi.ModTime()
	}
	return f
}

// stream pushes a run's snapshot as server-sent events: one at once, then
// one each time the log (or the heartbeat) changes what the page shows.
// It reads like zerg status: never a lock the coordinator waits on.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, p run.Paths) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl.Flush()

	var last []byte
	var seen fingerprint
	var read time.Time
	tick := time.NewTicker(s.poll)
	defer tick.Stop()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for first := true; ; first = false {
		if fp := fingerprintOf(p); first || fp != seen || time.Since(read) >= s.refresh {
			seen, read = fp, time.Now()
			snap, err := snapshot(p)
			var b []byte
			if err == nil {
				b, err = json.Marshal(snap)
			}
			if err != nil {
				b, _ = json.Marshal(map[string]string{"error": err.Error()})
			}
			if !bytes.Equal(b, last) {
				last = b
				if _, err := fmt.Fprintf(w, "event: view\ndata: %s\n\n", b); err != nil {
					return
				}
				fl.Flush()
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case <-keep.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		case <-tick.C:
		}
	}
}
