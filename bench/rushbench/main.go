// Command rushbench measures zerg's orchestration overhead: a synthetic graph
// of N one-file tasks, run by `zerg rush --rehearse` with the real Claude Code
// CLI and a scripted model that answers at once, at several worker counts and
// in each isolation mode asked for (container mode needs make container-image).
// Overhead per task is the attempt's time outside the claude process
// (worktree, verification, diff check, commit) plus its share of the level
// merges and gates; the report also gives wall time and worker time.
//
//	go run ./bench/rushbench -tasks 50 -workers 1,4,8
//	go run ./bench/rushbench -tasks 12 -workers 4 -modes subprocess,sandbox,container
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zergrush/zerg/bench/internal/benchkit"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/runstate"
)

func main() {
	tasks := flag.Int("tasks", 50, "tasks in the graph")
	perLevel := flag.Int("per-level", 10, "tasks per level")
	workersFlag := flag.String("workers", "1,4,8", "comma-separated worker counts")
	zerg := flag.String("zerg", "", "zerg binary (default: build one)")
	modesFlag := flag.String("modes", "sandbox", "comma-separated isolation modes: subprocess, sandbox, container")
	image := flag.String("image", "localhost/zerg-test:bookworm", "container mode's image (make container-image)")
	flag.Parse()
	if err := benchmark(*tasks, *perLevel, *workersFlag, *zerg, strings.Split(*modesFlag, ","), *image); err != nil {
		fmt.Fprintln(os.Stderr, "rushbench:", err)
		os.Exit(1)
	}
}

func benchmark(n, perLevel int, workersFlag, zerg string, modes []string, image string) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "rushbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// As root, workers run as an unprivileged user who must reach the
	// workspaces and the zerg binary (its hook) inside this directory.
	if err := os.Chmod(tmp, 0o711); err != nil {
		return err
	}
	if zerg == "" {
		built, err := benchkit.BuildZerg(root, tmp)
		if err != nil {
			return err
		}
		zerg = built
	}
	fmt.Printf("rushbench: %d tasks, %d per level, real Claude Code CLI, scripted model answering at once\n", n, perLevel)
	fmt.Printf("%-11s %-8s %10s %12s %14s %16s %14s\n", "mode", "workers", "wall", "per task", "worker/task", "overhead/task", "merge+gates")
	for _, mode := range modes {
		for _, w := range strings.Split(workersFlag, ",") {
			workers, err := strconv.Atoi(strings.TrimSpace(w))
			if err != nil {
				return err
			}
			dir := filepath.Join(tmp, fmt.Sprintf("repo-%s-%d", mode, workers))
			config := "version: 1\nretry:\n  infra_backoff_initial: 1s\nmode: " + mode + "\n"
			if mode == "container" {
				config += "container:\n  image: " + image + "\n"
			}
			if err := makeProject(dir, n, perLevel, config); err != nil {
				return err
			}
			start := time.Now()
			cmd := exec.CommandContext(context.Background(), zerg, "rush", "bench", "--rehearse", "--workers", strconv.Itoa(workers))
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "ZERG_WORKSPACES="+filepath.Join(tmp, "ws"), "NO_COLOR=1")
			if os.Getenv("ZERG_CLAUDE") == "" {
				cmd.Env = append(cmd.Env, "ZERG_CLAUDE="+filepath.Join(root, "tools", "claude", "node_modules", ".bin", "claude"))
			}
			var se bytes.Buffer
			cmd.Stderr = &se
			if out, err := cmd.Output(); err != nil {
				return fmt.Errorf("zerg rush (%d workers): %v\n%s\n%s", workers, err, out, se.String())
			}
			wall := time.Since(start)
			evs, err := eventlog.Read(filepath.Join(dir, ".zerg", "runs", "bench", "events.jsonl"))
			if err != nil {
				return err
			}
			var attemptMS, workerMS int64
			attempts := 0
			for _, e := range evs {
				var d runstate.AttemptFinished
				if e.Type == runstate.EvAttemptFinished && e.Decode(&d) == nil {
					attemptMS += d.DurationMS
					workerMS += d.WorkerMS
					attempts++
				}
			}
			// Merge and gate time: from each level's last attempt_finished to its level_merged.
			var mergeTime time.Duration
			var lastFinish time.Time
			for _, e := range evs {
				switch e.Type {
				case runstate.EvAttemptFinished:
					lastFinish = e.Time
				case runstate.EvLevelMerged:
					mergeTime += e.Time.Sub(lastFinish)
				}
			}
			overhead := time.Duration(attemptMS-workerMS)*time.Millisecond/time.Duration(n) + mergeTime/time.Duration(n)
			fmt.Printf("%-11s %-8d %10s %12s %14s %16s %14s\n", mode, workers, wall.Round(10*time.Millisecond),
				(wall / time.Duration(n)).Round(time.Millisecond),
				(time.Duration(workerMS) * time.Millisecond / time.Duration(n)).Round(time.Millisecond),
				overhead.Round(time.Millisecond), mergeTime.Round(time.Millisecond))
			if attempts != n {
				fmt.Printf("         (%d attempts for %d tasks)\n", attempts, n)
			}
		}
	}
	return nil
}

// makeProject writes a repository whose graph has n tasks, each creating one
// file, and a scenario whose model writes it at once.
func makeProject(dir string, n, perLevel int, config string) error {
	spec := filepath.Join(dir, ".zerg", "specs", "bench")
	if err := os.MkdirAll(spec, 0o755); err != nil {
		return err
	}
	var g, sc strings.Builder
	g.WriteString(`{"feature":"bench","tasks":[`)
	sc.WriteString("usage: {input_tokens: 100, output_tokens: 10}\ntasks:\n")
	for i := 0; i < n; i++ {
		if i > 0 {
			g.WriteByte(',')
		}
		level := i/perLevel + 1
		deps := "[]"
		if level > 1 {
			deps = fmt.Sprintf(`["T%d"]`, i-perLevel)
		}
		fmt.Fprintf(&g, `{"id":"T%d","title":"file %d","level":%d,"dependencies":%s,"files":{"create":["f/%d.txt"]},"verification":{"command":"test -s f/%d.txt"}}`,
			i, i, level, deps, i, i)
		fmt.Fprintf(&sc, "  - name: t%d\n    match: \"Task T%d:\"\n    turns:\n      - tools: [{name: Write, input: {file_path: f/%d.txt, content: \"%d\\n\"}}]\n      - text: done\n", i, i, i, i)
	}
	g.WriteString("]}")
	files := map[string]string{
		filepath.Join(spec, "task-graph.json"):     g.String(),
		filepath.Join(spec, "scenario.yaml"):       sc.String(),
		filepath.Join(dir, ".gitignore"):           ".zerg/runs/\n.zerg/cache/\n.zerg/audit.jsonl*\n",
		filepath.Join(dir, ".zerg", "config.yaml"): config,
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			return err
		}
	}
	return benchkit.CommitAll(dir)
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := fsx.ModuleRoot(dir)
	if err != nil {
		return "", fmt.Errorf("run rushbench inside the zerg repository: %w", err)
	}
	return root, nil
}
