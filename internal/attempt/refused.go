package attempt

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/textx"
)

// RefusedWrite is a write of the worker's that its hook refused: it is
// not in the attempt's result, whatever the worker's summary says.
type RefusedWrite struct {
	// Path is the file, relative to the workspace; one outside it as the
	// worker named it.
	Path string `json:"path"`
	Tool string `json:"tool"`
	// Why is zerg's reading of the refusal against the task: WhyNotOwned,
	// WhyProtected, WhyOutside, or the hook's own words.
	Why string `json:"why"`
}

// What a refused write was, as zerg reads it against the task.
const (
	WhyNotOwned  = "not owned"
	WhyProtected = "protected"
	WhyOutside   = "outside the workspace"
)

// String is the refusal as the report words it: "test/x.js, not owned".
func (r RefusedWrite) String() string { return r.Path + ", " + r.Why }

// writeTools are the tools whose calls write a file (policy.Decide's).
var writeTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true}

// maxRefusedWrites bounds the refused writes an attempt records.
const maxRefusedWrites = 50

// refusedWrites are the worker's refused tool calls that were writes,
// each once, read against the task: a file it does not own, a protected
// one, one outside the workspace. A path that holds a secret is not
// written down (safePath).
func (in Input) refusedWrites(rs []driver.Refusal) []RefusedWrite {
	prot := in.protection()
	roots := []string{filepath.Clean(in.Workspace)}
	if real, err := filepath.EvalSymlinks(in.Workspace); err == nil && real != roots[0] {
		roots = append(roots, real)
	}
	seen := map[string]bool{}
	var out []RefusedWrite
	for _, r := range rs {
		if !writeTools[r.Tool] || r.Path == "" {
			continue
		}
		w := RefusedWrite{Tool: r.Tool, Path: r.Path, Why: WhyOutside}
		if rel, ok := inWorkspace(roots, r.Path); ok {
			w.Path = rel
			switch {
			case prot.RefusesWrite(rel, nil) != "":
				w.Why = WhyProtected
			case in.Task == nil || !in.Task.Owns(rel):
				w.Why = WhyNotOwned
			default:
				// Owned, and refused all the same (a link out of the
				// workspace, an unreadable input): the hook's words.
				w.Why = "refused: " + textx.Clip(textx.OneLine(strings.TrimPrefix(r.Reason, "denied: ")), 200)
				if r.Reason == "" {
					w.Why = "refused"
				}
			}
		}
		w.Path = in.safePath(w.Path)
		if key := w.Path + "\x00" + w.Why; !seen[key] {
			seen[key] = true
			out = append(out, w)
		}
		if len(out) == maxRefusedWrites {
			break
		}
	}
	return out
}

// inWorkspace is p relative to the workspace (one of its roots), when it
// lies inside.
func inWorkspace(roots []string, p string) (string, bool) {
	if !filepath.IsAbs(p) {
		rel, ok := pathx.Rel(".", p)
		return filepath.ToSlash(rel), ok
	}
	for _, root := range roots {
		if rel, ok := pathx.Rel(root, p); ok {
			return filepath.ToSlash(rel), true
		}
	}
	return "", false
}

// refusedDetail is the detail of an attempt failed for its refused writes
// (security.refused_writes: fail), for the report and the retry prompt.
func (in Input) refusedDetail(ws []RefusedWrite) string {
	return fmt.Sprintf("the hook refused %s the task may not make: %s (security.refused_writes is fail); do the task without them: change only the files task %s owns (%s)",
		pluralWrites(len(ws)), ListRefused(ws), in.Task.ID, ownedList(in.Task))
}

func pluralWrites(n int) string {
	if n == 1 {
		return "1 write"
	}
	return fmt.Sprintf("%d writes", n)
}

// ListRefused names refused writes as the report does: "a.js, not owned;
// b.js, protected".
func ListRefused(ws []RefusedWrite) string {
	var s []string
	for _, w := range ws {
		s = append(s, w.String())
	}
	return listOfSep(s, "; ")
}

// writeRefused records the attempt's refused writes (Record.Refused): the
// summary its dependents read says what was refused (DependencySummary).
func writeRefused(dir string, ws []RefusedWrite) {
	if dir == "" || len(ws) == 0 {
		return
	}
	if b, err := json.Marshal(ws); err == nil {
		_ = fsx.WritePrivate(Record(dir).Refused(), append(b, '\n'))
	}
}

// ReadRefused reads an attempt's record of its refused writes.
func ReadRefused(dir string) []RefusedWrite {
	b, err := os.ReadFile(Record(dir).Refused())
	if err != nil {
		return nil
	}
	var ws []RefusedWrite
	if json.Unmarshal(b, &ws) != nil {
		return nil
	}
	return ws
}
