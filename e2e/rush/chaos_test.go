package rush

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/run"
)

// envInt reads a scale knob for `make chaos`.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// chaosProject writes a repository whose graph has n one-file tasks, four per
// level, each depending on one task of the level below, and a scenario whose
// model takes a moment per turn so kills land mid-attempt.
func chaosProject(t *testing.T, n int) *project {
	t.Helper()
	tmp := traversable(t, t.TempDir())
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
		level, deps := i/4+1, "[]"
		if level > 1 {
			deps = fmt.Sprintf(`["C%d"]`, i-4)
		}
		fmt.Fprintf(&g, `{"id":"C%d","title":"part %d","level":%d,"dependencies":%s,"files":{"create":["parts/%d.txt"]},"verification":{"command":"grep -qx 'part %d' parts/%d.txt"}}`,
			i, i, level, deps, i, i, i)
		fmt.Fprintf(&sc, "  - name: c%d\n    match: \"Task C%d:\"\n    turns:\n      - delay: 400ms\n        tools: [{name: Write, input: {file_path: parts/%d.txt, content: \"part %d\\n\"}}]\n      - text: done\n", i, i, i, i)
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

// TestChaos SIGKILLs random workers and, several times, the coordinator
// itself at random moments; every run after a coordinator kill is --resume.
// The run must end delivered with every task merged exactly once and no
// process left behind. `make chaos` runs it larger and prints the figures.
func TestChaos(t *testing.T) {
	n := envInt("ZERG_CHAOS_TASKS", 20)
	coordinatorKills := envInt("ZERG_CHAOS_COORDINATOR_KILLS", 3)
	workerKills := envInt("ZERG_CHAOS_WORKER_KILLS", 5)
	seed := uint64(envInt("ZERG_CHAOS_SEED", 11))
	rng := rand.New(rand.NewPCG(seed, seed))
	p := chaosProject(t, n)
	events := filepath.Join(p.dir, ".zerg", "runs", "demo", "events.jsonl")

	start := time.Now()
	killedCoordinator, killedWorkers, rounds := 0, 0, 0
	for {
		rounds++
		if rounds > coordinatorKills+5 {
			t.Fatalf("no delivery after %d rounds", rounds)
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
		var killAt time.Time
		if killedCoordinator < coordinatorKills {
			killAt = time.Now().Add(time.Duration(1500+rng.IntN(3000)) * time.Millisecond)
		}
		var err error
	round:
		for {
			select {
			case err = <-exited:
				break round
			case <-time.After(300 * time.Millisecond):
			}
			if !killAt.IsZero() && time.Now().After(killAt) {
				cmd.Process.Signal(syscall.SIGKILL)
				err = <-exited
				killedCoordinator++
				break round
			}
			if killedWorkers < workerKills && rng.Float64() < 0.25 {
				if killRandomWorker(t, events, rng) {
					killedWorkers++
				}
			}
		}
		if err == nil {
			break
		}
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
			t.Fatalf("round %d: run failed:\n%s", rounds, se.String())
		}
	}
	wall := time.Since(start)

	evs, err := eventlog.Read(events)
	if err != nil {
		t.Fatal(err)
	}
	st := run.Replay(evs)
	attempts := 0
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("C%d", i)
		ts := st.Tasks[id]
		if ts == nil || ts.Status != run.StatusMerged || st.MergeCount[id] != 1 {
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
	if killedCoordinator < coordinatorKills {
		t.Errorf("only %d coordinator kills landed (want %d): the run finished too early", killedCoordinator, coordinatorKills)
	}
	p.assertUserUntouched()
	t.Logf("chaos: %d tasks, %d coordinator kills, %d worker kills, %d recoveries (--resume), %d extra attempts, wall %s",
		n, killedCoordinator, killedWorkers, st.Resumes, attempts-n, wall.Round(100*time.Millisecond))
}

// killRandomWorker SIGKILLs the claude process of one running attempt, after
// checking that it really is that attempt's process (its environment carries
// the attempt's marker).
func killRandomWorker(t *testing.T, events string, rng *rand.Rand) bool {
	evs, err := eventlog.Read(events)
	if err != nil {
		return false
	}
	st := run.Replay(evs)
	var open []*run.OpenAttempt
	for _, ts := range st.Tasks {
		if ts.Open != nil && len(ts.Open.PIDs) > 0 && ts.Open.Marker != "" {
			open = append(open, ts.Open)
		}
	}
	if len(open) == 0 {
		return false
	}
	o := open[rng.IntN(len(open))]
	pid := o.PIDs[0].PID
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil || !bytes.Contains(env, []byte("ZERG_RUN_MARKER="+o.Marker)) {
		return false
	}
	return syscall.Kill(pid, syscall.SIGKILL) == nil
}

// runProcesses lists live processes carrying any marker of the run.
func runProcesses(evs []eventlog.Event) []string {
	markers := map[string]bool{}
	for _, e := range evs {
		var d run.AttemptPIDs
		if e.Type == run.EvAttemptPIDs && e.Decode(&d) == nil && d.Marker != "" {
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
