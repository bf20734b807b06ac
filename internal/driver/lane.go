package driver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/textx"
)

// lane is a private clone of a commit in which zerg's own commands run
// (Driver.Isolate): the gates, zerg check's lanes, zerg review's gates.
// Every driver makes it the same way; what differs is the isolation its
// commands run in.
type lane struct {
	dir   string // the lane's own directory, removed with it
	ws    string // the clone
	state string // homes and the build cache
}

// newLane clones commit into a directory of its own under root (not a
// fixed name: a check or a review of the same feature running at the same
// time has its own).
func newLane(ctx context.Context, repo *gitx.Repo, root, commit, name string) (*lane, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(root, name+"-")
	if err != nil {
		return nil, err
	}
	l := &lane{dir: dir, ws: filepath.Join(dir, "repo"), state: filepath.Join(dir, "state")}
	if err := os.Chmod(dir, 0o711); err != nil {
		l.remove()
		return nil, err
	}
	if err := os.Mkdir(l.state, 0o755); err != nil {
		l.remove()
		return nil, err
	}
	if err := repo.CloneCommit(ctx, l.ws, commit); err != nil {
		l.remove()
		return nil, fmt.Errorf("clone %s for %s: %w", commit, name, err)
	}
	return l, nil
}

func (l *lane) remove() { _ = os.RemoveAll(l.dir) }

// WorkerDetail is a worker's outcome as a report's detail.
func WorkerDetail(o claude.Outcome) string {
	d := textx.OneLine(o.Detail)
	if d == "" {
		d = o.Reason
	}
	return fmt.Sprintf("worker %s: %s", o.Reason, textx.Clip(d, 300))
}
