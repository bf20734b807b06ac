package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/mockapi"
	"github.com/zergrush/zerg/internal/runstate"
)

// attemptTime is where one successful attempt's wall time went, from the
// run's events (attempt_started, the attempt's phases, its worker time) and
// the scripted model's request log (when the worker's first request came)
// and script (how long the model thought).
type attemptTime struct {
	Task  string        `json:"task"`
	Level int           `json:"level"`
	Total time.Duration `json:"total_ns"` // attempt_started to attempt_finished
	// Prepare: the workspace (clone or worktree, the sandbox's directories).
	Prepare time.Duration `json:"prepare_ns"`
	// Start: from the launch to the worker's first model request: the
	// driver's setup (sandbox, gateway) and the CLI's own start.
	Start time.Duration `json:"start_ns"`
	// Think: the scripted model's think time for the task's turns.
	Think time.Duration `json:"think_ns"`
	// Turns: the rest of the launch after the first request: the tool
	// runs, the CLI between turns, the answers' streaming, the CLI's exit
	// and the driver's teardown.
	Turns  time.Duration `json:"turns_ns"`
	Verify time.Duration `json:"verify_ns"`
	// Commit: snapshot, the commit checks and zerg's commit.
	Commit time.Duration `json:"commit_ns"`
	// Other: the rest (the coordinator's bookkeeping around the attempt).
	Other time.Duration `json:"other_ns"`
	// MemoryMB is the most memory the attempt's processes used (its
	// cgroup's peak; 0 where the mode does not measure it).
	MemoryMB int64 `json:"memory_peak_mb,omitempty"`
}

// levelTime is where one level's wall time went (level schedule): from the
// previous level's merge (or the first level's start) to its own.
type levelTime struct {
	Level int           `json:"level"`
	Wall  time.Duration `json:"wall_ns"`
	// Model: what the level would take on the rush's workers if zerg and
	// the CLI cost nothing: the longest think time of its tasks, or their
	// sum over the workers when the level is wider than them.
	Model time.Duration `json:"model_ns"`
	// ToFirst: from the level's start to its first attempt's start.
	ToFirst time.Duration `json:"to_first_attempt_ns"`
	// Slowest: the longest attempt of the level.
	Slowest time.Duration `json:"slowest_attempt_ns"`
	// Wait: the mean time a finished task of the level waited for the
	// level's last one.
	Wait time.Duration `json:"wait_for_slowest_ns"`
	// Gates: the level's gates (they run side by side: the longest); Merge:
	// the rest from the last attempt's end to level_merged (the merge
	// itself, the integration branch's update, the bookkeeping).
	Gates time.Duration `json:"gates_ns"`
	Merge time.Duration `json:"merge_ns"`
}

// Beyond is the level's time beyond the model's: zerg and the CLI.
func (l levelTime) Beyond() time.Duration { return l.Wall - l.Model }

// breakdown is one rush's attempts and levels.
type breakdown struct {
	Attempts []attemptTime `json:"attempts"`
	Levels   []levelTime   `json:"levels,omitempty"`
}

// thinkTimes sums each task's scripted think time.
func thinkTimes(sc map[string][]scTurn) map[string]time.Duration {
	out := make(map[string]time.Duration, len(sc))
	for id, turns := range sc {
		for _, tu := range turns {
			if d, err := time.ParseDuration(tu.Delay); err == nil {
				out[id] += d
			}
		}
	}
	return out
}

// readRequests reads the scripted model's request log (one JSON request
// per line).
func readRequests(path string) ([]mockapi.Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeRequests(f)
}

func decodeRequests(r io.Reader) ([]mockapi.Request, error) {
	var out []mockapi.Request
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		var q mockapi.Request
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("request log: %v", err)
		}
		out = append(out, q)
	}
	return out, sc.Err()
}

// breakDown says where a rush's time went. An attempt counts when it
// succeeded and its phases were recorded; a level when it merged.
func breakDown(evs []eventlog.Event, reqs []mockapi.Request, ts []task, think map[string]time.Duration, workers int) breakdown {
	level := map[string]int{}
	for _, t := range ts {
		level[t.ID] = t.Level
	}
	// The first main request of each task at or after a time.
	firstReq := func(task string, after time.Time) time.Time {
		var first time.Time
		for _, q := range reqs {
			if q.Task == task && q.Kind == mockapi.KindMain && !q.Time.Before(after) && (first.IsZero() || q.Time.Before(first)) {
				first = q.Time
			}
		}
		return first
	}
	var b breakdown
	started := map[string]time.Time{}
	key := func(e eventlog.Event) string { return fmt.Sprintf("%s/%d", e.Task, e.Attempt) }
	type lv struct {
		start, lastEnd, firstStart time.Time
		ends                       []time.Time
		slowest, gates             time.Duration
	}
	levels := map[int]*lv{}
	at := func(n int) *lv {
		if levels[n] == nil {
			levels[n] = &lv{}
		}
		return levels[n]
	}
	var prevMerged time.Time
	for _, e := range evs {
		switch e.Type {
		case runstate.EvLevelStarted:
			var d runstate.LevelStarted
			if e.Decode(&d) == nil {
				l := at(d.Level)
				l.start = e.Time
				if !prevMerged.IsZero() {
					l.start = prevMerged
				}
			}
		case runstate.EvAttemptStarted:
			started[key(e)] = e.Time
		case runstate.EvAttemptFinished:
			var f runstate.AttemptFinished
			s, ok := started[key(e)]
			if e.Decode(&f) != nil || f.Class != "success" || f.Phases == nil || !ok {
				continue
			}
			ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
			a := attemptTime{Task: e.Task, Level: level[e.Task], Total: e.Time.Sub(s), Prepare: ms(f.Phases.Prepare),
				Verify: ms(f.Phases.Verify), Commit: ms(f.Phases.Commit), Think: think[e.Task], MemoryMB: f.MemoryPeakMB}
			launch := ms(f.Phases.Launch)
			launchAt := s.Add(a.Prepare)
			if r := firstReq(e.Task, s); !r.IsZero() && r.Sub(launchAt) <= launch {
				a.Start = max(0, r.Sub(launchAt))
			}
			a.Turns = max(0, launch-a.Start-a.Think)
			a.Other = a.Total - a.Prepare - launch - a.Verify - a.Commit
			b.Attempts = append(b.Attempts, a)
			l := at(a.Level)
			if l.firstStart.IsZero() || s.Before(l.firstStart) {
				l.firstStart = s
			}
			if e.Time.After(l.lastEnd) {
				l.lastEnd = e.Time
			}
			l.ends = append(l.ends, e.Time)
			l.slowest = max(l.slowest, a.Total)
		case runstate.EvGateFinished:
			var g runstate.GateFinished
			if e.Decode(&g) == nil && g.Level > 0 {
				l := at(g.Level)
				l.gates = max(l.gates, time.Duration(g.DurationMS)*time.Millisecond)
			}
		case runstate.EvLevelMerged:
			var d runstate.LevelMerged
			if e.Decode(&d) != nil {
				continue
			}
			l := at(d.Level)
			lt := levelTime{Level: d.Level, Wall: e.Time.Sub(l.start), ToFirst: l.firstStart.Sub(l.start), Slowest: l.slowest, Gates: l.gates}
			var sum time.Duration
			for _, id := range d.Tasks {
				lt.Model = max(lt.Model, think[id])
				sum += think[id]
			}
			lt.Model = max(lt.Model, sum/time.Duration(max(workers, 1)))
			if len(l.ends) > 0 {
				var wait time.Duration
				for _, end := range l.ends {
					wait += l.lastEnd.Sub(end)
				}
				lt.Wait = wait / time.Duration(len(l.ends))
				lt.Merge = max(0, e.Time.Sub(l.lastEnd)-l.gates)
			}
			if l.start.IsZero() || l.firstStart.IsZero() {
				continue
			}
			b.Levels = append(b.Levels, lt)
			prevMerged = e.Time
		}
	}
	sort.Slice(b.Levels, func(i, j int) bool { return b.Levels[i].Level < b.Levels[j].Level })
	return b
}

// mean is the attempts' mean of each part.
func (b breakdown) mean() attemptTime {
	var m attemptTime
	n := time.Duration(len(b.Attempts))
	if n == 0 {
		return m
	}
	for _, a := range b.Attempts {
		m.Total += a.Total
		m.Prepare += a.Prepare
		m.Start += a.Start
		m.Think += a.Think
		m.Turns += a.Turns
		m.Verify += a.Verify
		m.Commit += a.Commit
		m.Other += a.Other
		m.MemoryMB += a.MemoryMB
	}
	m.MemoryMB /= int64(len(b.Attempts))
	m.Total, m.Prepare, m.Start, m.Think = m.Total/n, m.Prepare/n, m.Start/n, m.Think/n
	m.Turns, m.Verify, m.Commit, m.Other = m.Turns/n, m.Verify/n, m.Commit/n, m.Other/n
	return m
}

// maxMemoryMB is the largest attempt's memory peak.
func (b breakdown) maxMemoryMB() int64 {
	var m int64
	for _, a := range b.Attempts {
		m = max(m, a.MemoryMB)
	}
	return m
}

// writeBreakdown prints where each rush's time went: the mean attempt and
// each level.
func writeBreakdown(w io.Writer, runs []shapeRun) {
	shown := false
	for _, r := range runs {
		for _, x := range r.Rushes {
			if x.Breakdown == nil || len(x.Breakdown.Attempts) == 0 {
				continue
			}
			if !shown {
				fmt.Fprintln(w, "### Where the time went")
				fmt.Fprintln(w)
				fmt.Fprintln(w, "Per attempt, the mean of the run's successful attempts, in seconds: prepare (the workspace), start (launch to the worker's first model request: sandbox, gateway, CLI start), think (the scripted model), turns (the rest of the launch: tool runs, the CLI between turns, its exit), verify, commit (snapshot, checks, commit), other (the coordinator around the attempt); memory, the mean and the largest attempt's peak (its cgroup's) in MB; CPU busy, the machine's CPUs busy over the rush (all processes, from /proc/stat).")
				fmt.Fprintln(w)
				fmt.Fprintln(w, "| graph | schedule | workers | attempt s | prepare | start | think | turns | verify | commit | other | memory MB | CPU busy |")
				fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
				shown = true
			}
			m := x.Breakdown.mean()
			mem, cpu := "", ""
			if m.MemoryMB > 0 {
				mem = fmt.Sprintf("%d / %d", m.MemoryMB, x.Breakdown.maxMemoryMB())
			}
			if x.CPUBusy > 0 {
				cpu = fmt.Sprintf("%.0f %%", 100*x.CPUBusy)
			}
			fmt.Fprintf(w, "| %s | %s | %d | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %s | %s |\n", r.Shape.Name, x.Schedule, x.Workers,
				secs(m.Total), m.Prepare.Seconds(), m.Start.Seconds(), m.Think.Seconds(), m.Turns.Seconds(), m.Verify.Seconds(), m.Commit.Seconds(), m.Other.Seconds(), mem, cpu)
		}
	}
	if !shown {
		return
	}
	fmt.Fprintln(w)
	header := false
	for _, r := range runs {
		for _, x := range r.Rushes {
			if x.Breakdown == nil || len(x.Breakdown.Levels) == 0 {
				continue
			}
			if !header {
				fmt.Fprintln(w, "Per level (level schedule), in seconds: wall (from the previous level's merge), model (the level's longest think time, or its think time over the workers when it is wider than them), beyond (wall − model: zerg and the CLI), to first attempt, slowest attempt, wait (the mean wait of a finished task for the level's last), gates (side by side: the longest), merge (the rest to level_merged).")
				fmt.Fprintln(w)
				fmt.Fprintln(w, "| graph | workers | level | wall | model | beyond | to first | slowest | wait | gates | merge |")
				fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
				header = true
			}
			for _, l := range x.Breakdown.Levels {
				fmt.Fprintf(w, "| %s | %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", r.Shape.Name, x.Workers, l.Level,
					l.Wall.Seconds(), l.Model.Seconds(), l.Beyond().Seconds(), l.ToFirst.Seconds(), l.Slowest.Seconds(), l.Wait.Seconds(), l.Gates.Seconds(), l.Merge.Seconds())
			}
		}
	}
	fmt.Fprintln(w)
}
