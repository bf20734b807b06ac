package run

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

// GraphLoad are the options of zerg's one graph loader (LoadGraph), which
// every command that reads a task graph goes through: rush, its dry run,
// zerg check, graph validate and show, fix, context, hook check, design,
// the dashboard and the run's read model.
type GraphLoad struct {
	// Root is the repository, for the symlink check (a path whose existing
	// prefix resolves outside it); "" skips it.
	Root string
	// Protection is what no task may create or modify, since no worker may
	// change it (config.Config.Protection); nil: zerg's own list.
	Protection *security.Protection
	// Committed reports a task the feature's run already committed or
	// merged: a protected path it owns is no longer an error, so a run
	// from before the check (subprocess mode did not make it) still
	// resumes. nil: none.
	Committed func(task string) bool
	// Recorded is a graph a run recorded (its snapshot, a past run's
	// graph): the run checked its protected paths when it started, and a
	// reader of the record does not again.
	Recorded bool
}

// GraphLoadFor are the options of a graph zerg will run in root with cfg,
// sparing what st (the feature's run so far, nil for none) committed.
func GraphLoadFor(root string, cfg config.Config, st *runstate.State) GraphLoad {
	o := GraphLoad{Root: root, Protection: cfg.Protection()}
	if st != nil {
		o.Committed = func(id string) bool {
			ts := st.Task(id)
			return ts.Status == runstate.StatusMerged || ts.Commit != ""
		}
	}
	return o
}

// GraphLoadFromLog is GraphLoadFor with the feature's run as its log at
// paths says, for callers that do not open the run (check, the dry run,
// rush's warnings): no log, or one that does not read, spares nothing.
func GraphLoadFromLog(root string, cfg config.Config, paths Paths) GraphLoad {
	st := runstate.NewState()
	if evs, err := eventlog.Read(paths.Events); err == nil {
		st = runstate.Replay(evs)
	}
	return GraphLoadFor(root, cfg, st)
}

// LoadGraph reads, parses and validates a task-graph file with o.
func LoadGraph(file string, o GraphLoad) (*spec.Report, error) {
	data, err := spec.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return CheckGraph(data, o), nil
}

// LoadRecordedGraph reads a graph a run recorded (LoadGraph with
// Recorded): what a projection reads of an earlier run.
func LoadRecordedGraph(file string) (*spec.Report, error) {
	return LoadGraph(file, GraphLoad{Recorded: true})
}

// CheckGraph is LoadGraph of a graph's bytes.
func CheckGraph(data []byte, o GraphLoad) *spec.Report {
	opts := spec.Options{RepoRoot: o.Root}
	if !o.Recorded {
		prot := o.Protection
		if prot == nil {
			prot = security.DefaultProtection()
		}
		opts.Protected = prot.ForEntries()
	}
	r := spec.Check(data, opts)
	if o.Committed != nil {
		r.Errors = slices.DeleteFunc(r.Errors, func(e spec.Issue) bool { return e.Code == spec.CodeProtected && o.Committed(e.Task) })
	}
	return r
}

// validGraph is LoadGraph of a graph that must be valid: its errors, one
// line, are the error.
func validGraph(file string, o GraphLoad) (*spec.Graph, error) {
	r, err := LoadGraph(file, o)
	if err != nil {
		return nil, err
	}
	if !r.Valid() {
		return nil, fmt.Errorf("%s: invalid task graph: %s", file, strings.ReplaceAll(r.Err().Error(), "\n", "; "))
	}
	return r.Graph, nil
}
