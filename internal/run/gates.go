package run

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

// The gates of a merge, as the coordinator records them: each gate's
// whole output (as bounded as every capture) in the run's directory, the
// event with an excerpt, the tasks whose files the output names, and
// which gates run on which merge (gates[].when).

// gatesFor are the configured gates that run on a merge; last says the
// merge completes the graph (every other task of it is merged).
func gatesFor(gates []config.Gate, last bool) []config.Gate {
	var out []config.Gate
	for _, g := range gates {
		if g.RunsOn(last) {
			out = append(out, g)
		}
	}
	return out
}

// completes reports whether merging ids leaves no task of the graph
// unmerged: the merge a last_level gate runs on.
func (c *Coordinator) completes(ids []string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.graph.Tasks {
		if !slices.Contains(ids, t.ID) && c.state.Task(t.ID).Status != runstate.StatusMerged {
			return false
		}
	}
	return true
}

// gateOn says what a gate ran on: a level (level schedule), or a batch of
// tasks (dag).
type gateOn struct {
	level, batch int
	tasks        []string // the batch's tasks (dag), as the event names them
	merged       []string // the tasks this merge adds to the head
}

// onHead reports whether a task's work is on a merged head: merged before,
// or one of the merge's.
func (c *Coordinator) onHead(merging []string) func(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	on := map[string]bool{}
	for _, id := range merging {
		on[id] = true
	}
	for id, t := range c.state.Tasks {
		if t.Status == runstate.StatusMerged {
			on[id] = true
		}
	}
	return func(id string) bool { return on[id] }
}

// recordGates writes each gate's outcome: its output to its log, then
// gate_finished, then the progress line. It returns the first required
// gate that failed (nil when none did), with the event as written.
func (c *Coordinator) recordGates(on gateOn, head string, runs []gateRun) (*runstate.GateFinished, error) {
	for _, r := range runs {
		g, exit, out := r.gate, r.exit, r.out
		c.mu.Lock()
		n := len(c.state.Gates) + 1
		c.mu.Unlock()
		ev := runstate.GateFinished{Level: on.level, Batch: on.batch, Tasks: on.tasks, Name: g.Name, Command: g.Command, Exit: exit,
			Required: g.Required, Output: excerpt(out), Head: head, DurationMS: r.took.Milliseconds()}
		// The whole output (bounded as the capture is) for zerg logs and
		// the dashboard: the event keeps an excerpt, which may miss the
		// failure itself (pytest prints it before a long summary).
		if rel := GateLogName(n, g.Name); c.writeGateLog(rel, out) == nil {
			ev.Log = rel
		}
		if exit != 0 {
			ev.Named = namedTasks(c.graph, out, c.onHead(on.merged))
		}
		if err := c.emit(runstate.EvGateFinished, "", 0, ev); err != nil {
			return nil, err
		}
		c.progress.gate(g, ev, c.feature)
		if exit != 0 && g.Required {
			return &ev, nil
		}
	}
	return nil, nil
}

// writeGateLog writes a gate's output to its log in the run's directory.
func (c *Coordinator) writeGateLog(rel, out string) error {
	p := filepath.Join(c.paths.RunDir, rel)
	if err := fsx.PrivateDir(filepath.Dir(p)); err != nil {
		return err
	}
	return fsx.WritePrivate(p, []byte(out))
}

// GateLogName is the log of the run's n-th gate (from 1, in the order the
// log records them), relative to the run's directory.
func GateLogName(n int, gate string) string {
	return filepath.Join("gates", fmt.Sprintf("%d-%s.log", n, gate))
}

// ReadGateLog reads the log a gate_finished event names in the run
// directory; false when it has none or it is gone.
func ReadGateLog(runDir string, g runstate.GateFinished) (string, bool) {
	if g.Log == "" || !filepath.IsLocal(g.Log) {
		return "", false
	}
	b, err := os.ReadFile(filepath.Join(runDir, g.Log))
	if err != nil {
		return "", false
	}
	return string(b), true
}

// Bounds of a gate event's excerpt of the output: its beginning (where a
// failure is often printed first) and its end (the summary).
const (
	excerptHead = 1000
	excerptTail = 2000
)

// excerpt is a gate's output as its event keeps it: all of it when short,
// else its beginning and its end.
func excerpt(s string) string {
	if len(s) <= excerptHead+excerptTail {
		return s
	}
	head, end := s[:excerptHead], s[len(s)-excerptTail:]
	return fmt.Sprintf("%s\n… [zerg: %d bytes left out here; the gate's log has them] …\n%s", head, len(s)-excerptHead-excerptTail, end)
}

// pathToken is what may be a repository path in a command's output.
var pathToken = regexp.MustCompile(`[A-Za-z0-9_@+.\-/]+`)

// maxTokens bounds the tokens of an output namedTasks reads.
const maxTokens = 50000

// namedTasks are the graph's tasks (in its order) whose work is on the
// gate's head (onHead) and that own a file its output names: a path as
// the project's tools print it, relative or absolute (a clone's prefix is
// stripped at each '/'), with a line number or a test name after it.
// These are the tasks to look at first; a task of a later level is not
// one (its work is not there), and the output may of course fail for a
// file no task owns.
func namedTasks(g *spec.Graph, out string, onHead func(id string) bool) []string {
	if g == nil {
		return nil
	}
	paths := map[string]bool{}
	for _, tok := range pathToken.FindAllString(out, maxTokens) {
		tok = strings.Trim(tok, ".-/")
		if !strings.ContainsAny(tok, "./") {
			continue
		}
		for p := tok; p != ""; {
			paths[strings.TrimPrefix(p, "./")] = true
			j := strings.IndexByte(p, '/')
			if j < 0 {
				break
			}
			p = p[j+1:]
		}
	}
	var named []string
	for _, t := range g.Tasks {
		if !onHead(t.ID) {
			continue
		}
		for p := range paths {
			if p != "" && t.Owns(p) {
				named = append(named, t.ID)
				break
			}
		}
	}
	return named
}
