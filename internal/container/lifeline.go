package container

import (
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// held keeps the lifelines' files reachable: a collected *os.File would
// close its descriptor, and with it every container's lifeline.
var (
	heldMu sync.Mutex
	held   []*os.File
)

// NewLifeline makes a FIFO at path and holds it open for writing for as
// long as this process lives. Containers given it (Box.Lifeline) end when
// this process is gone, however it went: their engine keeps them running
// without their client, so this is what a SIGKILLed coordinator leaves
// nothing running by. The FIFO is zerg's, mode 0644: a worker can read it
// (its init watches it) but never hold it open for writing.
func NewLifeline(path string) error {
	_ = os.Remove(path)
	if err := unix.Mkfifo(path, 0o644); err != nil {
		return fmt.Errorf("make the containers' lifeline %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // past the umask
		return err
	}
	// Read-write: opening a FIFO for writing alone would wait for a reader.
	// Go opens it close-on-exec, so no process zerg starts (the engine's
	// client) holds it after this one is gone.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("open the containers' lifeline %s: %w", path, err)
	}
	heldMu.Lock()
	held = append(held, f)
	heldMu.Unlock()
	return nil
}
