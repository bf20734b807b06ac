package rush

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/runstate"

	"github.com/zergrush/zerg/e2e/e2ebin"
)

// envInt reads a scale knob for `make chaos`.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// chaosWidth is the number of tasks per level of chaosProject's graph.
const chaosWidth = 4

// chaosProject writes a repository whose graph has n one-file tasks,
// chaosWidth per level, each depending on one task of the level below, and a
// scenario whose model takes a moment on its first turn, so that an attempt
// is still running long after its attempt_pids event.
func chaosProject(t *testing.T, n int) *project {
	t.Helper()
	tmp := e2ebin.Traversable(t, t.TempDir())
	p := &project{t: t, dir: filepath.Join(tmp, "repo"), home: filepath.Join(tmp, "home")}
	spec := filepath.Join(p.dir, ".zerg", "specs", "demo")
	if err := os.MkdirAll(spec, 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(p.home, 0o755)
	var g, sc strings.Builder
	g.WriteString(`{"feature":"demo","tasks":[`)
	sc.WriteString("tasks:\n")
	for i := 0; i < n; i++ {
		if i > 0 {
			g.WriteByte(',')
		}
		level, deps := i/chaosWidth+1, "[]"
		if level > 1 {
			deps = fmt.Sprintf(`["C%d"]`, i-chaosWidth)
		}
		fmt.Fprintf(&g, `{"id":"C%d","title":"part %d","level":%d,"dependencies":%s,"files":{"create":["parts/%d.txt"]},"verification":{"command":"grep -qx 'part %d' parts/%d.txt"}}`,
			i, i, level, deps, i, i, i)
		fmt.Fprintf(&sc, "  - name: c%d\n    match: \"Task C%d:\"\n    turns:\n      - delay: 250ms\n        tools: [{name: Write, input: {file_path: parts/%d.txt, content: \"part %d\\n\"}}]\n      - text: done\n", i, i, i, i)
	}
	g.WriteString("]}")
	files := map[string]string{
		filepath.Join(spec, "task-graph.json"):       g.String(),
		filepath.Join(spec, "scenario.yaml"):         sc.String(),
		filepath.Join(p.dir, ".gitignore"):           ".zerg/runs/\n.zerg/cache/\n.zerg/audit.jsonl*\n",
		filepath.Join(p.dir, ".zerg", "config.yaml"): "version: 1\nworkers: 4\nretry:\n  infra_backoff_initial: 200ms\n  infra_backoff_max: 2s\n  infra_max_attempts: 20\nbreaker:\n  failures: 8\n  cooldown: 2s\n",
		filepath.Join(p.dir, "README.md"):            "chaos\n",
	}
	for path, c := range files {
		if err := os.WriteFile(path, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.git("init", "-q", "-b", "main")
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "chaos project")
	p.base = p.git("rev-parse", "HEAD")
	return p
}

// TestChaos SIGKILLs workers and, several times, the coordinator itself;
// every run after a coordinator kill is --resume. The run must end delivered
// with every task merged exactly once and no process left behind. `make
// chaos` runs it larger and prints the figures.
//
// Kills are moments of the run's progress, never wall-clock times: the seeded
// rng plans them all before the first round (coordinator kills as a level and
// a moment in it, worker kills as ordinals of attempt_pids events), and a
// poller fires each one when the event log reaches it. What is killed, and at
// which point of the run, is therefore the same on a fast or a slow machine.
func TestChaos(t *testing.T) {
	t.Parallel()
	n := envInt("ZERG_CHAOS_TASKS", 20)
	coordinatorKills := envInt("ZERG_CHAOS_COORDINATOR_KILLS", 3)
	workerKills := envInt("ZERG_CHAOS_WORKER_KILLS", 5)
	seed := uint64(envInt("ZERG_CHAOS_SEED", 11))
	rng := rand.New(rand.NewPCG(seed, seed))
	plan, err := planCoordinatorKills(rng, n, coordinatorKills)
	if err != nil {
		t.Fatal(err)
	}
	workerTargets, err := planWorkerKills(rng, n, workerKills)
	if err != nil {
		t.Fatal(err)
	}
	planned := make([]string, len(plan))
	for i, k := range plan {
		planned[i] = k.String()
	}
	t.Logf("seed %d: coordinator kills %s; worker kills at %s %v", seed, strings.Join(planned, "; "), runstate.EvAttemptPIDs, workerTargets)
	p := chaosProject(t, n)
	events := filepath.Join(p.dir, ".zerg", "runs", "demo", "events.jsonl")

	start := time.Now()
	killedCoordinator, killedWorkers, rounds := 0, 0, 0
	nextWorker := 0 // workerTargets[nextWorker:] are still to fire
	for {
		rounds++
		if rounds > coordinatorKills+5 {
			t.Fatalf("no delivery after %d rounds", rounds)
		}
		// The previous coordinator is dead: the log ends where this round's
		// events will begin.
		before, _ := eventlog.Read(events)
		roundStart := len(before)
		var kill *coordinatorKill
		if killedCoordinator < len(plan) {
			kill = &plan[killedCoordinator]
		}

		args := []string{"rush", "demo", "--rehearse"}
		if rounds > 1 {
			args = append(args, "--resume")
		}
		cmd := exec.Command(zergBin, args...)
		cmd.Dir, cmd.Env = p.dir, p.env()
		var se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &se, &se
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		deadline := time.After(3 * time.Minute)
		killed := false
	round:
		for {
			select {
			case err = <-exited:
				break round
			case <-deadline:
				cmd.Process.Signal(syscall.SIGKILL)
				<-exited
				t.Fatalf("round %d: no exit and no kill moment within 3 minutes:\n%s", rounds, se.String())
			case <-time.After(chaosPoll):
			}
			evs, _ := eventlog.Read(events)
			// Worker kills first: a target reached in the same poll as the
			// coordinator's moment still lands on a live attempt.
			pids := eventIndexes(evs, runstate.EvAttemptPIDs)
			for nextWorker < len(workerTargets) && workerTargets[nextWorker] <= len(pids) {
				i := pids[workerTargets[nextWorker]-1]
				if i < roundStart {
					// Written just before the previous coordinator kill: its
					// worker died with that coordinator. The target moves on
					// to this round's first attempt.
					retarget(workerTargets, nextWorker, sort.SearchInts(pids, roundStart)+1)
					continue
				}
				if killAttemptWorker(evs, i) {
					killedWorkers++
				} else {
					t.Errorf("round %d: worker kill at attempt_pids #%d (%s attempt %d) did not land: the attempt was no longer running",
						rounds, workerTargets[nextWorker], evs[i].Task, evs[i].Attempt)
				}
				nextWorker++
			}
			if kill != nil && kill.reached(evs[min(roundStart, len(evs)):]) {
				cmd.Process.Signal(syscall.SIGKILL)
				err = <-exited
				// Landed only if the signal is what ended it (not a run
				// that finished or failed on its own in the meantime).
				killed = diedOfSIGKILL(err)
				break round
			}
		}
		if killed {
			killedCoordinator++
			evs, rerr := eventlog.Read(events)
			if rerr != nil {
				t.Fatalf("round %d: the log after the kill: %v", rounds, rerr)
			}
			st := runstate.Replay(evs)
			running := 0
			for _, ts := range st.Tasks {
				if ts.Open != nil {
					running++
				}
			}
			t.Logf("round %d: coordinator killed %s: %d attempt(s) open, %d level(s) merged, %d attempt_pids in the log",
				rounds, kill, running, len(st.Merged), len(eventIndexes(evs, runstate.EvAttemptPIDs)))
			// The moment is a point inside its level: the next level cannot
			// have merged already.
			if _, ok := st.Merged[kill.Level+1]; ok {
				t.Errorf("round %d: kill %s landed after level %d merged", rounds, kill, kill.Level+1)
			}
			continue
		}
		if err != nil {
			t.Fatalf("round %d: run failed (%v):\n%s", rounds, err, se.String())
		}
		break
	}
	wall := time.Since(start)

	evs, err := eventlog.Read(events)
	if err != nil {
		t.Fatal(err)
	}
	st := runstate.Replay(evs)
	attempts := 0
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("C%d", i)
		ts := st.Tasks[id]
		if ts == nil || ts.Status != runstate.StatusMerged || st.MergeCount[id] != 1 {
			t.Errorf("%s: %+v, merged %d times", id, ts, st.MergeCount[id])
			continue
		}
		attempts += ts.Attempts
	}
	files := p.integrationFiles()
	for i := 0; i < n; i++ {
		if !files[fmt.Sprintf("parts/%d.txt", i)] {
			t.Errorf("parts/%d.txt missing from the integration branch", i)
		}
	}
	if leftovers := runProcesses(evs); len(leftovers) > 0 {
		t.Errorf("processes left behind: %v", leftovers)
	}
	if killedCoordinator < len(plan) {
		t.Errorf("only %d coordinator kills landed (want %d): the run finished before the kill %s", killedCoordinator, len(plan), plan[killedCoordinator])
	}
	if killedWorkers < len(workerTargets) {
		t.Errorf("only %d worker kills landed (want %d)", killedWorkers, len(workerTargets))
	}
	p.assertUserUntouched()
	t.Logf("chaos: %d tasks, %d coordinator kills, %d worker kills, %d recoveries (--resume), %d extra attempts, wall %s",
		n, killedCoordinator, killedWorkers, st.Resumes, attempts-n, wall.Round(100*time.Millisecond))
}

// diedOfSIGKILL reports whether cmd.Wait's error says SIGKILL ended the
// process.
func diedOfSIGKILL(err error) bool {
	ee, ok := err.(*exec.ExitError)
	if !ok {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// chaosPoll is how often the chaos test reads the event log. Attempts last
// far longer (the CLI's start-up plus the scenario's delay), so a kill fires
// while the moment it was planned for is still current.
const chaosPoll = 20 * time.Millisecond

// Moments of a level at which the coordinator is killed.
const (
	momentRunning  = "running"  // after the nth attempt_pids: workers mid-attempt
	momentFinished = "finished" // after the nth attempt_finished: some done, others running
	momentMerged   = "merged"   // right after level_merged, as the next level starts
)

// coordinatorKill is a planned SIGKILL of the coordinator, as a point of the
// run's progress: in the round it ends, once the log has the nth event of
// the moment's kind for a task of Level (merged: the level's level_merged).
type coordinatorKill struct {
	Level  int
	Moment string
	Nth    int
}

func (k coordinatorKill) String() string {
	switch k.Moment {
	case momentMerged:
		return fmt.Sprintf("right after level %d's %s", k.Level, runstate.EvLevelMerged)
	case momentFinished:
		return fmt.Sprintf("in level %d after its %s #%d", k.Level, runstate.EvAttemptFinished, k.Nth)
	}
	return fmt.Sprintf("in level %d after its %s #%d", k.Level, runstate.EvAttemptPIDs, k.Nth)
}

// reached reports whether the events of the current round contain the kill's
// moment. Only this round counts, and every task of the level runs in it:
// kills go to increasing levels, so at most the first attempts of this level
// were cut by a kill right after the previous level merged, and those run
// again. The abandoned-attempt records a resume writes for them are not
// attempts finishing.
func (k coordinatorKill) reached(round []eventlog.Event) bool {
	seen := 0
	for _, e := range round {
		switch {
		case k.Moment == momentMerged && e.Type == runstate.EvLevelMerged:
			var d runstate.LevelMerged
			if e.Decode(&d) == nil && d.Level == k.Level {
				return true
			}
		case k.Moment == momentRunning && e.Type == runstate.EvAttemptPIDs && chaosLevel(e.Task) == k.Level:
			seen++
		case k.Moment == momentFinished && e.Type == runstate.EvAttemptFinished && chaosLevel(e.Task) == k.Level:
			var d runstate.AttemptFinished
			if e.Decode(&d) == nil && d.Reason != "abandoned" {
				seen++
			}
		}
		if k.Moment != momentMerged && seen >= k.Nth {
			return true
		}
	}
	return false
}

// planCoordinatorKills picks one kill per distinct level, in increasing
// levels so that each resumed round still has its kill ahead of it, and
// never in the last level: after it the run ends at once, while any earlier
// level is followed by at least one more level of attempts, so every planned
// kill lands before the run can finish. For 20 tasks, levels 1-4 of 5: the
// first 80% of the run.
func planCoordinatorKills(rng *rand.Rand, n, kills int) ([]coordinatorKill, error) {
	levels := (n + chaosWidth - 1) / chaosWidth
	if kills > levels-1 {
		return nil, fmt.Errorf("%d coordinator kills need at least %d levels, %d tasks make %d", kills, kills+1, n, levels)
	}
	picked := rng.Perm(levels - 1)[:kills]
	sort.Ints(picked)
	moments := []string{momentRunning, momentFinished, momentMerged}
	plan := make([]coordinatorKill, kills)
	for i, l := range picked {
		k := coordinatorKill{Level: l + 1, Moment: moments[rng.IntN(len(moments))]}
		if k.Moment != momentMerged {
			k.Nth = 1 + rng.IntN(chaosWidth) // levels before the last are full
		}
		plan[i] = k
	}
	return plan, nil
}

// planWorkerKills picks distinct ordinals of attempt_pids events among the
// first 80% of the n the run is sure to write; the worker of that attempt is
// killed as soon as the log has it.
func planWorkerKills(rng *rand.Rand, n, kills int) ([]int, error) {
	span := max(1, n*4/5)
	if kills > span {
		return nil, fmt.Errorf("%d worker kills need at least %d tasks", kills, (kills*5+3)/4)
	}
	targets := rng.Perm(span)[:kills]
	for i := range targets {
		targets[i]++
	}
	sort.Ints(targets)
	return targets, nil
}

// retarget moves targets[from] to at least ordinal and keeps the later
// targets distinct and increasing.
func retarget(targets []int, from, ordinal int) {
	targets[from] = max(targets[from], ordinal)
	for j := from + 1; j < len(targets); j++ {
		targets[j] = max(targets[j], targets[j-1]+1)
	}
}

// eventIndexes lists the positions of the events of one type.
func eventIndexes(evs []eventlog.Event, typ string) []int {
	var out []int
	for i, e := range evs {
		if e.Type == typ {
			out = append(out, i)
		}
	}
	return out
}

// chaosLevel is the level of chaosProject's task id ("C7" is in level 2).
func chaosLevel(id string) int {
	i, err := strconv.Atoi(strings.TrimPrefix(id, "C"))
	if err != nil || !strings.HasPrefix(id, "C") {
		return 0
	}
	return i/chaosWidth + 1
}

// killAttemptWorker SIGKILLs the worker process of the attempt whose
// attempt_pids event is evs[i], if that attempt is still running and the
// process really is its worker: its environment carries the attempt's
// marker (subprocess mode), or it is the recorded process by pid and start
// time (sandbox mode: the recorded process is the sandbox, whose own
// environment is empty; the whole sandbox dies with it).
func killAttemptWorker(evs []eventlog.Event, i int) bool {
	e := evs[i]
	var d runstate.AttemptPIDs
	if e.Decode(&d) != nil || len(d.PIDs) == 0 || d.Marker == "" {
		return false
	}
	ts := runstate.Replay(evs).Tasks[e.Task]
	if ts == nil || ts.Open == nil || ts.Open.Number != e.Attempt || ts.Open.Marker != d.Marker {
		return false
	}
	pid := d.PIDs[0].PID
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil || !bytes.Contains(env, []byte("ZERG_RUN_MARKER="+d.Marker)) && startTime(pid) != d.PIDs[0].StartTime {
		return false
	}
	return syscall.Kill(pid, syscall.SIGKILL) == nil
}

// startTime is a process's start time in clock ticks (field 22 of
// /proc/PID/stat), 0 when it is gone.
func startTime(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0
	}
	v, _ := strconv.ParseUint(f[19], 10, 64)
	return v
}

// runProcesses lists live processes carrying any marker of the run.
func runProcesses(evs []eventlog.Event) []string {
	markers := map[string]bool{}
	for _, e := range evs {
		var d runstate.AttemptPIDs
		if e.Type == runstate.EvAttemptPIDs && e.Decode(&d) == nil && d.Marker != "" {
			markers["ZERG_RUN_MARKER="+d.Marker] = true
		}
	}
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if strings.Trim(e.Name(), "0123456789") != "" {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if markers[string(kv)] {
				cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
				out = append(out, e.Name()+":"+strings.ReplaceAll(string(cmdline), "\x00", " "))
				break
			}
		}
	}
	return out
}
