package runstate

import (
	"bytes"
	"slices"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/spec"
)

// RunState is where a run stands as a whole.
type RunState string

const (
	RunNotStarted   RunState = "not_started"
	RunRunning      RunState = "running"
	RunDelivered    RunState = "delivered"
	RunNotDelivered RunState = "not_delivered"
	RunHalted       RunState = "stopped" // stopped on request; --resume continues it
	RunDead         RunState = "dead"    // its coordinator died without a word; --resume continues it
)

// View is the one view of a run, derived once from its log and its graph:
// the report at the end of a rush, zerg status, status --watch and every
// --json print it. docs/json.md documents its JSON.
type View struct {
	Feature string   `json:"feature"`
	State   RunState `json:"state"`
	Reason  string   `json:"reason,omitempty"`
	// Cause is "budget", "account" or "environment" when launching stopped for that
	// reason; ResumeAfter is when the API said an account limit resets.
	Cause        string `json:"cause,omitempty"`
	ResumeAfter  string `json:"resume_after,omitempty"`
	Rehearsal    bool   `json:"rehearsal"`
	Scenario     string `json:"scenario,omitempty"`
	Subscription bool   `json:"subscription,omitempty"`
	// Mode is the config's mode the run started in ("tasks": the user's
	// Claude Code session runs the tasks, not workers zerg launched).
	Mode string `json:"mode,omitempty"`
	// Caps are what the run's driver could, as it recorded them; nil
	// before the run started, or in a log from before they were recorded
	// (driver.ModeCapabilities reads the mode's then).
	Caps    *driver.Capabilities `json:"-"`
	Workers int                  `json:"workers"`
	// Schedule is how the run starts and merges tasks: "level" (a level
	// merges all or nothing, then the next starts) or "dag" (a task starts
	// when its dependencies are merged; finished tasks merge in batches).
	// Under dag a level is only the graph's grouping by depth: it shows
	// merged once all its tasks are.
	Schedule string `json:"schedule,omitempty"`
	// Batches counts the DAG schedule's merges (batch_merged events).
	Batches           int             `json:"batches,omitempty"`
	Base              string          `json:"base,omitempty"`
	BaseRef           string          `json:"base_ref,omitempty"`
	IntegrationBranch string          `json:"integration_branch"`
	Head              string          `json:"head,omitempty"`
	Coordinator       CoordinatorView `json:"coordinator"`
	Levels            []LevelView     `json:"levels"`
	Tasks             []TaskView      `json:"tasks"`
	Gates             []GateView      `json:"gates"`
	CostUSD           float64         `json:"cost_usd"`
	Tokens            int64           `json:"tokens"`
	StartedAt         time.Time       `json:"started_at,omitzero"`
	DurationMS        int64           `json:"duration_ms"`
	Resumes           int             `json:"resumes"`
	BreakerOpens      int             `json:"breaker_opens"`
	RateLimitPauses   int             `json:"rate_limit_pauses"`
	// Governor is the launch governor right now (only while the coordinator runs).
	Governor *GovernorSnapshot `json:"governor,omitempty"`
	// ResetWait: the running run waits for an account's usage limit to
	// reset (retry.wait_for_reset) and launches again from its Until.
	ResetWait *ResetWait `json:"reset_wait,omitempty"`
	// GraphChanged: the feature's task graph differs from the one the run
	// works on; a resume applies the change (or says why it cannot).
	GraphChanged bool `json:"graph_changed,omitempty"`
	// Rejected counts log events the state machine refused (a damaged or
	// foreign log); 0 for any log zerg wrote.
	Rejected int `json:"rejected_events,omitempty"`
	// RefusedWrites counts the refused writes of the work the run holds
	// (its committed and merged tasks'): a delivered run with any is
	// "delivered with refused writes", never plainly delivered, because
	// what its workers meant to write is not all there.
	RefusedWrites int `json:"refused_writes"`
}

// GateView is one gate run as the view shows it: the event, and whether it
// was superseded, so that an old failure does not read as the run's
// state (a failed gate under a "delivered" badge).
type GateView struct {
	GateFinished
	// Superseded: its merge did not happen, and the same gate ran again on
	// the same level (or batch) or the level (batch) merged since.
	Superseded bool `json:"superseded,omitempty"`
}

// gateViews are the log's gate runs, each marked when superseded.
func gateViews(st *State) []GateView {
	gs := st.Gates
	out := make([]GateView, len(gs))
	for i, g := range gs {
		out[i].GateFinished = g
		if !st.GateRefused[i] {
			continue
		}
		for _, later := range gs[i+1:] {
			if later.Name == g.Name && later.Level == g.Level && later.Batch == g.Batch {
				out[i].Superseded = true
			}
		}
		if _, merged := st.Merged[g.Level]; merged && g.Batch == 0 {
			out[i].Superseded = true
		}
		for _, b := range st.Batches {
			if g.Batch > 0 && b.Batch == g.Batch {
				out[i].Superseded = true
			}
		}
	}
	return out
}

// CoordinatorView is the coordinator's liveness.
type CoordinatorView struct {
	Alive bool `json:"alive"`
	PID   int  `json:"pid,omitempty"`
}

// LevelView is one level of the graph.
type LevelView struct {
	Level  int      `json:"level"`
	State  string   `json:"state"` // pending | running | merged | failed | blocked
	Head   string   `json:"head,omitempty"`
	Reason string   `json:"reason,omitempty"`
	Tasks  []string `json:"tasks"`
}

// TaskView is one task of the graph.
type TaskView struct {
	ID    string `json:"id"`
	Level int    `json:"level"`
	// Dependencies are the graph's (the live view's ETA follows them
	// under the dag schedule).
	Dependencies  []string `json:"dependencies,omitempty"`
	Status        Status   `json:"status"`
	Attempts      int      `json:"attempts"`
	TaskFailures  int      `json:"task_failures"`
	InfraFailures int      `json:"infra_failures"`
	Reason        string   `json:"reason,omitempty"`
	Detail        string   `json:"detail,omitempty"`
	Commit        string   `json:"commit,omitempty"`
	Branch        string   `json:"branch,omitempty"`
	CostUSD       float64  `json:"cost_usd"`
	Tokens        int64    `json:"tokens"`
	// EstimateMS is the graph's estimate_minutes (0 without one) and
	// WorkerMS the time its finished attempts took: together they scale
	// the estimates of the tasks left into an ETA.
	EstimateMS int64        `json:"estimate_ms,omitempty"`
	WorkerMS   int64        `json:"worker_ms,omitempty"`
	Running    *RunningView `json:"running,omitempty"`
	// Abandoned is an attempt the log leaves open while nothing runs it:
	// its coordinator died (or the view is its own last word). Nothing
	// counts its time any more; --resume reaps it and runs the task again.
	Abandoned *AbandonedView `json:"abandoned,omitempty"`
	// Diagnosis is what the diagnostics engine made of the task's last
	// failure (not shown once the task is committed).
	Diagnosis *diagnose.Hypothesis `json:"diagnosis,omitempty"`
	// RefusedWrites are the writes its hook refused in its last finished
	// attempt (its committed one once committed): not in its work.
	RefusedWrites []attempt.RefusedWrite `json:"refused_writes,omitempty"`
}

// AbandonedView is an attempt a dead coordinator left open.
type AbandonedView struct {
	Attempt int       `json:"attempt"`
	Started time.Time `json:"started"`
	// LastSeen is the last moment the run was known alive: the
	// coordinator's last heartbeat or its last log event, whichever is
	// later. The attempt ended at the latest shortly after.
	LastSeen time.Time `json:"last_seen"`
}

// RunningView is a task's attempt in flight.
type RunningView struct {
	Attempt   int       `json:"attempt"`
	Started   time.Time `json:"started"`
	PID       int       `json:"pid,omitempty"`
	LastEvent time.Time `json:"last_event,omitzero"`
	Turns     int       `json:"turns"`
	Tokens    int64     `json:"tokens"`
	// LastTool is the worker's latest tool call (Bash, Edit, …).
	LastTool string `json:"last_tool,omitempty"`
	// Agent is the cluster agent running it (cluster mode), as the
	// coordinator last handed out its lease.
	Agent string `json:"agent,omitempty"`
	// TakenBack says from which agent the coordinator last took the
	// attempt back, and why (cluster mode; docs/cluster.md).
	TakenBack string `json:"taken_back,omitempty"`
}

// Liveness is what a reader knows of the coordinator beyond the log.
type Liveness struct {
	Alive bool  // a coordinator holds the log's lock
	PID   int   // its pid, from coordinator.json
	Live  *Live // its heartbeat file, while it runs
	// Last is the heartbeat file a dead coordinator left behind (one that
	// exits removes it): when it was last known alive.
	Last *Live
}

// BuildView derives the view of a run whose integration branch is branch
// (as the run's layout names it). g is the graph the run works on (nil when
// unknown: only the tasks the log names are shown).
func BuildView(feature, branch string, st *State, g *spec.Graph, pathsGraph *spec.Graph, lv Liveness) View {
	v := View{Feature: feature, IntegrationBranch: branch, Head: st.Head, CostUSD: st.CostUSD,
		StartedAt: st.StartedAt, Resumes: st.Resumes, BreakerOpens: st.BreakerOpens, RateLimitPauses: st.Pauses,
		Gates: gateViews(st), Rejected: len(st.Rejected), Levels: []LevelView{}, Tasks: []TaskView{},
		Coordinator: CoordinatorView{Alive: lv.Alive}}
	if lv.Alive {
		v.Coordinator.PID = lv.PID
	}
	if s := st.Started; s != nil {
		v.Base, v.BaseRef, v.Workers, v.Rehearsal, v.Scenario = s.Base, s.BaseRef, st.Workers, s.Rehearsal, s.Scenario
		v.Subscription, v.Mode, v.Caps = s.Subscription, s.Mode, s.Capabilities
		v.Schedule, v.Batches = st.RecordedSchedule(), len(st.Batches)
	}
	switch {
	case st.Started == nil:
		v.State = RunNotStarted
	case st.Finished != nil && st.Finished.Delivered:
		v.State = RunDelivered
	case st.Finished != nil:
		v.State, v.Reason = RunNotDelivered, st.Finished.Reason
		v.Cause, v.ResumeAfter = st.Finished.Cause, st.Finished.ResumeAfter
	case st.Stopped != nil:
		v.State, v.Reason = RunHalted, st.Stopped.Reason
	case lv.Alive:
		v.State = RunRunning
	default:
		v.State, v.Reason = RunDead, "the coordinator died without recording a stop"
	}
	if lv.Alive && lv.Live != nil {
		gov := lv.Live.Governor
		v.Governor = &gov
	}
	if w := st.ResetWait; w != nil && v.State == RunRunning {
		// Waiting while nothing happened since the reset time: the next
		// launch after it is logged later.
		if until, err := time.Parse(time.RFC3339, w.Until); err == nil && !st.LastEvent.After(until) {
			rw := *w
			v.ResetWait = &rw
		}
	}
	if pathsGraph != nil && g != nil && !bytes.Equal(pathsGraph.Raw, g.Raw) {
		v.GraphChanged = true
	}

	// Every task of the graph, then any the log names that the graph lacks.
	var ids []string
	levelOf := map[string]int{}
	estimate := map[string]int64{}
	deps := map[string][]string{}
	if g != nil {
		for _, t := range g.Tasks {
			ids = append(ids, t.ID)
			levelOf[t.ID] = t.Level
			estimate[t.ID] = int64(t.EstimateMinutes * 60_000)
			deps[t.ID] = t.Dependencies
		}
	}
	for _, id := range st.Order {
		if _, ok := levelOf[id]; !ok {
			ids = append(ids, id)
			levelOf[id] = st.Tasks[id].Level
		}
	}
	for _, id := range ids {
		ts := st.Task(id)
		tv := TaskView{ID: id, Level: levelOf[id], Status: ts.Status, Attempts: ts.Attempts, TaskFailures: ts.TaskFailures,
			InfraFailures: ts.InfraFailures, Reason: ts.Reason, Detail: ts.Detail, Commit: ts.Commit, Branch: ts.Branch,
			CostUSD: ts.CostUSD, Tokens: ts.Tokens, EstimateMS: estimate[id], WorkerMS: ts.WorkerTime.Milliseconds(),
			Dependencies: slices.Clone(deps[id]), RefusedWrites: slices.Clone(ts.RefusedWrites)}
		if ts.Status == StatusMerged || ts.Status == StatusCommitted {
			tv.Detail = ""
			v.RefusedWrites += len(ts.RefusedWrites)
		} else {
			tv.Diagnosis = ts.Hypothesis
		}
		if ts.Open != nil && ts.Status.Active() && !lv.Alive {
			// Not running: with no coordinator nothing watches, stops or
			// finishes it, so a time since its start would only grow.
			av := &AbandonedView{Attempt: ts.Open.Number, Started: ts.Open.Started, LastSeen: ts.Open.Started}
			for _, t := range []time.Time{st.LastEvent, lastBeat(lv.Last)} {
				if t.After(av.LastSeen) {
					av.LastSeen = t
				}
			}
			av.Started, av.LastSeen = av.Started.UTC(), av.LastSeen.UTC()
			tv.Abandoned = av
		} else if ts.Open != nil && ts.Status.Active() {
			rv := &RunningView{Attempt: ts.Open.Number, Started: ts.Open.Started}
			if len(ts.Open.PIDs) > 0 {
				rv.PID = ts.Open.PIDs[0].PID
			}
			if lv.Live != nil {
				if la, ok := lv.Live.Running[id]; ok && la.Attempt == ts.Open.Number {
					rv.LastEvent, rv.Turns, rv.Tokens, rv.LastTool = la.LastEvent.UTC(), la.Turns, la.Tokens, la.LastTool
				}
			}
			tv.Running = rv
		}
		v.Tokens += ts.Tokens
		v.Tasks = append(v.Tasks, tv)
	}
	slices.SortStableFunc(v.Tasks, func(a, b TaskView) int {
		if a.Level != b.Level {
			return a.Level - b.Level
		}
		return strings.Compare(a.ID, b.ID)
	})
	v.Levels = levelViews(st, v.Tasks)
	return v
}

// lastBeat is when a heartbeat file was written (zero without one).
func lastBeat(l *Live) time.Time {
	if l == nil {
		return time.Time{}
	}
	return l.Written
}

// levelViews derives each level's state from its tasks and the log.
func levelViews(st *State, tasks []TaskView) []LevelView {
	var out []LevelView
	for _, t := range tasks {
		if len(out) == 0 || out[len(out)-1].Level != t.Level {
			out = append(out, LevelView{Level: t.Level, Tasks: []string{}})
		}
		l := &out[len(out)-1]
		l.Tasks = append(l.Tasks, t.ID)
	}
	for i := range out {
		l := &out[i]
		merged, active, blocked := 0, 0, 0
		var failed []string
		for _, id := range l.Tasks {
			switch st.Task(id).Status {
			case StatusFailed:
				failed = append(failed, id)
			case StatusMerged:
				merged++
			case StatusReady, StatusRunning, StatusVerifying, StatusRetryWait:
				active++
			case StatusBlocked:
				blocked++
			}
		}
		switch {
		case merged == len(l.Tasks):
			l.State = "merged"
			if m, ok := st.Merged[l.Level]; ok {
				l.Head = m.Head
			} else {
				// Merged task by task (the DAG schedule): the head of the
				// batch that merged its last task.
				l.Head = lastMergedHead(st, l.Tasks)
			}
		case st.FailedLevel != nil && st.FailedLevel.Level == l.Level:
			l.State, l.Reason = "failed", st.FailedLevel.Reason
		case active > 0:
			l.State = "running"
		case len(failed) > 0:
			// A task failed for good (the DAG schedule records no
			// level_failed: its other tasks merge on their own).
			l.State, l.Reason = "failed", strings.Join(failed, ", ")+" failed"
		case blocked > 0:
			l.State = "blocked"
		default:
			l.State = "pending"
		}
	}
	return out
}

// lastMergedHead is the integration head of the last batch that merged one
// of the tasks.
func lastMergedHead(st *State, tasks []string) string {
	head := ""
	for _, b := range st.Batches {
		if slices.ContainsFunc(b.Tasks, func(id string) bool { return slices.Contains(tasks, id) }) {
			head = b.Head
		}
	}
	return head
}
