package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

// Options configure one `zerg rush`.
type Options struct {
	Root      string // repository top level
	Feature   string
	GraphFile string // default .zerg/specs/<feature>/task-graph.json
	Config    config.Config
	Workers   int // 0: the recorded count on resume, else the config's
	Resume    bool
	// Rehearsal asks for the scripted model. A resume keeps the mode the run
	// started in: a rehearsal resumes as a rehearsal (with its scenario)
	// even without the flag, and a real run cannot resume as one.
	Rehearsal bool
	Scenario  string
	// Schedule is --schedule when given ("" otherwise): a new run takes
	// Config.Schedule (which the flag set), a resume keeps the schedule it
	// recorded unless this asks to move it (resumeSchedule).
	Schedule string
	// Projection is the cost projection the run starts from (recorded in
	// its log; budget.run_usd reserves each attempt's share of it).
	Projection *runstate.Projection
	// RunAs is the unprivileged user workers run as (nil: zerg's own user).
	RunAs *security.WorkerUser
	// Progress receives one line per notable step (nil: discarded).
	Progress io.Writer
	// ReuseCheck lets Check answer with a passing check of the same base,
	// commands, config and zerg from the last hour instead of running the
	// commands again (a rush's check; zerg check always runs them).
	ReuseCheck bool
	// CLI is what the launch check learnt of the CLI (LaunchCheck), which
	// every attempt's gateway policy takes; nil when the rush skipped it.
	CLI *cliprobe.Report
	// prepared is what the mode's factory found ready (driverReady: a
	// worker user, a container engine and image), for newDriver.
	prepared driver.Prepared
	// commits is how the run's commits are written (CommitPolicy), as
	// Open read it; nil: zerg's own.
	commits *gitx.CommitPolicy
}

// Run is a checked run, not yet started: Open has written nothing.
type Run struct {
	c      *Coordinator
	opts   Options
	events int // the log's length when it was checked
}

// Open checks everything a rush needs before anything is written: the
// graph, the config's mode, the existing log and the mode it recorded, the
// integration branch, the setup (workspaces the worker user can reach) and
// stale workspaces, and, for a resume, the graph edits and the branch
// position. It writes nothing; Execute takes the log's lock. Errors are
// *Error.
func Open(ctx context.Context, opts Options) (*Run, error) {
	fail := func(kind Kind, format string, a ...any) (*Run, error) {
		return nil, errorf(kind, opts.Feature, format, a...)
	}
	paths, err := PathsFor(ctx, opts.Root, opts.Feature)
	if err != nil {
		return fail(Setup, "%v", err)
	}
	caps := driver.CapabilitiesOf(opts.Config)
	if !caps.StartsWorker {
		// The user's session starts the workers: their workspaces are in
		// the repository, where it reaches them.
		paths.Workspaces = TasksWorkspaces(opts.Root, opts.Feature)
	}
	if opts.GraphFile == "" {
		opts.GraphFile = paths.Graph
	}
	paths.Graph = opts.GraphFile

	// The log first: the graph's check spares what the run committed.
	var events []eventlog.Event
	if _, statErr := os.Stat(paths.Events); statErr == nil {
		if held, _ := eventlog.Held(paths.Events); held {
			return nil, &Error{Kind: Locked, Feature: opts.Feature, Path: paths.Events, Err: fmt.Errorf("another zerg rush is running %s", opts.Feature)}
		}
		if events, err = eventlog.Read(paths.Events); err != nil {
			return nil, &Error{Kind: BadInput, Feature: opts.Feature, Path: paths.Events, Err: fmt.Errorf("the run log is damaged: %w", err)}
		}
	}
	st := runstate.Replay(events)
	g, err := validGraph(opts.GraphFile, GraphLoadFor(opts.Root, opts.Config, st))
	if err != nil {
		return nil, &Error{Kind: BadInput, Feature: opts.Feature, Path: opts.GraphFile, Err: err}
	}
	if g.Feature != opts.Feature {
		return nil, &Error{Kind: BadInput, Feature: opts.Feature, Path: opts.GraphFile,
			Err: fmt.Errorf("%s is the graph of feature %q, not %q", opts.GraphFile, g.Feature, opts.Feature)}
	}
	commits := CommitPolicy(ctx, opts.Root, opts.Config.Commits, opts.Feature)
	opts.commits = &commits
	repo := opts.repo()
	refs := gitRefs{repo: repo}
	c := &Coordinator{feature: opts.Feature, cfg: opts.Config, caps: &caps, graph: g, paths: paths, state: st,
		rehearsal: opts.Rehearsal, scenario: opts.Scenario, progress: newProgress(opts.Progress)}
	switch {
	case len(events) > 0 && !opts.Resume:
		return nil, &Error{Kind: Exists, Feature: opts.Feature, Path: paths.Events, Err: fmt.Errorf("%s has a run already", opts.Feature)}
	case len(events) == 0 && opts.Resume:
		return fail(NoRun, "there is no run of %s to resume", opts.Feature)
	case len(events) == 0:
		if have, err := refs.Branch(ctx, IntegrationBranch(opts.Feature)); err != nil {
			return nil, err
		} else if have != "" {
			return nil, &Error{Kind: Exists, Feature: opts.Feature, Branch: IntegrationBranch(opts.Feature),
				Err: fmt.Errorf("branch %s already exists, but there is no run of %s", IntegrationBranch(opts.Feature), opts.Feature)}
		}
	default: // resume
		if err := resumeTasksMode(st.Started, caps); err != nil {
			return nil, &Error{Kind: ModeMismatch, Feature: opts.Feature, Err: err}
		}
		reh, sc, note, err := resumeMode(st.Started, opts.Rehearsal, opts.Scenario)
		if err != nil {
			return nil, &Error{Kind: ModeMismatch, Feature: opts.Feature, Err: err}
		}
		c.rehearsal, c.scenario = reh, sc
		if note != "" {
			c.progress.note("%s", note)
		}
		if c.schedule, note, err = resumeSchedule(st, opts.Schedule); err != nil {
			return nil, &Error{Kind: ModeMismatch, Feature: opts.Feature, Err: err}
		}
		if note != "" {
			c.progress.note("%s", note)
		}
	}
	c.projection = opts.Projection
	c.workers = opts.Workers
	if c.workers <= 0 && opts.Resume {
		c.workers = st.Workers
	}
	if c.workers <= 0 {
		c.workers = max(opts.Config.Workers, 1)
	}
	if err := driverReady(ctx, &opts, paths); err != nil {
		return nil, err
	}
	if c.setup, err = planSetup(ctx, repo, paths, opts.Resume); err != nil {
		return nil, err
	}
	if opts.Resume {
		recorded, _ := loadGraph(paths.GraphSnapshot, opts.Root)
		if c.resume, err = planResume(ctx, opts.Feature, st, recorded, g, refs); err != nil {
			return nil, err
		}
	}
	return &Run{c: c, opts: opts, events: len(events)}, nil
}

// resumeMode is the mode a resumed run continues in: the one it started
// in. A rehearsal stays a rehearsal with its scenario (unless another is
// named), so a resume never spends money by accident; a run that talks to
// the real API cannot be continued by the scripted model.
func resumeMode(rec *runstate.RunStarted, rehearse bool, scenario string) (bool, string, string, error) {
	switch {
	case rec == nil:
		return rehearse, scenario, "", nil
	case rec.Rehearsal && !rehearse:
		return true, rec.Scenario, fmt.Sprintf("%s was started as a rehearsal; it resumes with the scripted model", rec.Feature), nil
	case !rec.Rehearsal && rehearse:
		return false, "", "", fmt.Errorf("%s was started against the real API; a rehearsal cannot continue it (resume without --rehearse)", rec.Feature)
	case rec.Rehearsal && scenario == "":
		return true, rec.Scenario, "", nil
	}
	return rehearse, scenario, "", nil
}

// resumeTasksMode refuses to resume a run across tasks mode's border: a
// run the user's session worked is not taken over by workers zerg starts
// with its own key (nor the other way round) because a config says so.
// caps are the capabilities the run would resume with.
func resumeTasksMode(rec *runstate.RunStarted, caps driver.Capabilities) error {
	if rec == nil || rec.Mode == "" {
		return nil
	}
	started := rec.Caps()
	if started.StartsWorker == caps.StartsWorker {
		return nil
	}
	if !started.StartsWorker {
		return fmt.Errorf("%s runs in tasks mode: continue it from your Claude Code session with /zerg:rush %s --mode tasks (zerg tasks next %s)", rec.Feature, rec.Feature, rec.Feature)
	}
	return fmt.Errorf("%s runs in %s mode, not tasks mode: continue it with zerg rush %s --resume", rec.Feature, rec.Mode, rec.Feature)
}

// Rehearsal reports whether the run talks to the scripted model, and with
// which scenario ("" for the default).
func (r *Run) Rehearsal() (bool, string) { return r.c.rehearsal, r.c.scenario }

// SetCredential names the credential the workers use ("API key from
// ANTHROPIC_API_KEY"; never its value) for the run's first line;
// subscription says it is a subscription token, whose usage the run's
// reports do not present as dollars spent.
func (r *Run) SetCredential(desc string, subscription bool) {
	r.c.credential, r.c.subscription = desc, subscription
}

// UseLaunchCheck gives the run what the launch check learnt of the CLI
// (LaunchCheck): the model ids its aliases resolve to and the max_tokens it
// asks for go into every attempt's gateway policy.
func (r *Run) UseLaunchCheck(rep *cliprobe.Report) { r.opts.CLI = rep }

// Execute runs the run with workers launched from the template and closes
// it. The returned view is the run's final state; the error is an *Error
// (NotDelivered, Interrupted, Fatal, …) or zerg's own failure.
func (r *Run) Execute(ctx context.Context, worker claude.Spec) (*runstate.View, error) {
	c := r.c
	log, events, err := eventlog.Open(c.paths.Events)
	if err != nil {
		if errors.Is(err, eventlog.ErrLocked) {
			return nil, &Error{Kind: Locked, Feature: c.feature, Path: c.paths.Events, Err: fmt.Errorf("another zerg rush is running %s", c.feature)}
		}
		return nil, err
	}
	defer log.Close()
	if len(events) != r.events {
		return nil, &Error{Kind: Locked, Feature: c.feature, Path: c.paths.Events, Err: fmt.Errorf("the log of %s changed while zerg was checking it", c.feature)}
	}
	if err := c.setup.apply(ctx, c.progress); err != nil {
		return nil, err
	}
	worker.RunAs = r.opts.RunAs
	d, closeDeps, err := realDeps(ctx, c, r.opts, log, worker)
	if err != nil {
		return nil, err
	}
	defer closeDeps()
	c.d = d
	if err := fsx.WritePrivate(c.paths.Coordinator, coordinatorRecord()); err != nil {
		return nil, err
	}
	defer os.Remove(c.paths.Coordinator)
	c.prepare()
	defer holdDiskReserve(ctx, c.paths, c.cfg.Disk, c.progress)()
	stopLive := c.startHeartbeats(ctx)
	start := time.Now()
	st, runErr := c.execute(ctx)
	stopLive()
	if st.Finished == nil && st.Stopped == nil {
		return nil, runErr // stopped before it could run: there is nothing to report
	}
	v := BuildView(c.feature, st, c.graph, nil, runstate.Liveness{})
	v.DurationMS = time.Since(start).Milliseconds()
	return &v, runErr
}

func coordinatorRecord() []byte {
	b, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "started": time.Now().UTC()})
	return b
}

// loadGraph loads a graph a run recorded (GraphLoad.Recorded), which
// must be valid.
func loadGraph(file, root string) (*spec.Graph, error) {
	return validGraph(file, GraphLoad{Root: root, Recorded: true})
}

// graphHash identifies a graph by its bytes.
func graphHash(g *spec.Graph) string {
	sum := sha256.Sum256(g.Raw)
	return hex.EncodeToString(sum[:])
}
