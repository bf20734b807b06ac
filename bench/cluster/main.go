// Command cluster measures cluster mode: the same graph of one-file tasks,
// each with scripted think time (a mockapi turn's delay), rushed on this
// machine in subprocess mode and on 1 and 3 `zerg agent` processes, with the
// real binary, git and the real Claude Code CLI against `zerg mockapi`. It
// reports wall time, throughput and the mean attempt time (attempt_started
// to attempt_finished in the run's event log); the added latency per attempt
// of cluster mode is the difference of the means at the same concurrency.
// Agents and coordinator share this machine and talk over loopback with TLS.
//
//	go run ./bench/cluster                      # 24 tasks, 2s think time, 2 workers per agent
//	go run ./bench/cluster -tasks 12 -delay 1s
package main

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/zergrush/zerg/bench/internal/benchkit"
	"github.com/zergrush/zerg/internal/eventlog"
)

func main() {
	tasks := flag.Int("tasks", 24, "tasks in the graph (one level)")
	delay := flag.Duration("delay", 2*time.Second, "think time of each task's first model answer")
	perAgent := flag.Int("agent-workers", 2, "workers of each agent (and of the local run it is compared with)")
	zerg := flag.String("zerg", "", "zerg binary (default: build one)")
	flag.IntVar(&rounds, "rounds", 1, "rounds of the four runs, interleaved (the medians are reported)")
	flag.BoolVar(&keep, "keep", false, "keep the repositories, the agents' state and their output (printed at the end)")
	flag.Parse()
	if err := bench(*tasks, *delay, *perAgent, *zerg); err != nil {
		fmt.Fprintln(os.Stderr, "bench/cluster:", err)
		os.Exit(1)
	}
}

var (
	keep   bool
	rounds int
)

type result struct {
	name    string
	wall    time.Duration
	attempt time.Duration // mean
	n       int
}

func bench(tasks int, delay time.Duration, perAgent int, zerg string) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	for ; ; root = filepath.Dir(root) {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		if root == "/" {
			return fmt.Errorf("run it inside the zerg repository")
		}
	}
	tmp, err := os.MkdirTemp("", "zerg-bench-cluster-")
	if err != nil {
		return err
	}
	if keep {
		defer fmt.Println("kept in", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if zerg == "" {
		built, err := benchkit.BuildZerg(root, tmp)
		if err != nil {
			return err
		}
		zerg = built
	}
	claude := os.Getenv("ZERG_CLAUDE")
	if claude == "" {
		claude = filepath.Join(root, "tools", "claude", "node_modules", ".bin", "claude")
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "ZERG_CLAUDE=" + claude, "NO_COLOR=1", "LANG=C.UTF-8",
		"ZERG_WORKSPACES=" + filepath.Join(tmp, "workspaces")}

	scenario := filepath.Join(tmp, "scenario.yaml")
	if err := writeScenario(scenario, tasks, delay); err != nil {
		return err
	}
	mock := exec.Command(zerg, "mockapi", "serve", "--scenario", scenario)
	mock.Env = env
	var mockOut bytes.Buffer
	mock.Stdout = &mockOut
	if err := mock.Start(); err != nil {
		return err
	}
	defer func() { _ = mock.Process.Kill(); _ = mock.Wait() }()
	for i := 0; !strings.Contains(mockOut.String(), "\n"); i++ {
		if i > 100 {
			return fmt.Errorf("mockapi did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	api := strings.TrimSpace(mockOut.String())
	coordEnv := append(append([]string{}, env...), "ANTHROPIC_API_KEY=sk-ant-bench-0123456789abcdef", "ANTHROPIC_BASE_URL="+api)

	configs := []struct {
		name    string
		agents  int
		workers int
	}{
		{fmt.Sprintf("local, %d workers", perAgent), 0, perAgent},
		{fmt.Sprintf("local, %d workers", 3*perAgent), 0, 3 * perAgent},
		{fmt.Sprintf("cluster, 1 agent × %d workers", perAgent), 1, perAgent},
		{fmt.Sprintf("cluster, 3 agents × %d workers", perAgent), 3, 3 * perAgent},
	}
	// Interleaved rounds: the machine's load drifts, and each round sees
	// every configuration under about the same.
	samples := make([][]result, len(configs))
	for round := 1; round <= max(rounds, 1); round++ {
		for i, c := range configs {
			r, err := rush(tmp, zerg, env, coordEnv, tasks, c.agents, perAgent, c.workers)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			r.name = c.name
			samples[i] = append(samples[i], r)
			fmt.Fprintf(os.Stderr, "round %d, %s: %s, mean attempt %s\n", round, c.name, r.wall.Round(10*time.Millisecond), r.attempt.Round(10*time.Millisecond))
		}
	}
	var results []result
	for _, ss := range samples {
		results = append(results, median(ss))
	}
	fmt.Printf("%d tasks, %s think time each, %d worker(s) per agent (loopback, TLS), median of %d interleaved round(s)\n\n", tasks, delay, perAgent, max(rounds, 1))
	fmt.Println("| run | wall | tasks/min | mean attempt |")
	fmt.Println("|---|---|---|---|")
	for _, r := range results {
		fmt.Printf("| %s | %.1f s | %.1f | %.2f s |\n", r.name, r.wall.Seconds(), float64(r.n)/r.wall.Minutes(), r.attempt.Seconds())
	}
	fmt.Printf("\nadded latency per attempt, cluster vs local at %d workers: %.2f s (1 agent), %.2f s (3 agents vs local %d)\n",
		perAgent, (results[2].attempt - results[0].attempt).Seconds(), (results[3].attempt - results[1].attempt).Seconds(), 3*perAgent)
	return nil
}

func writeScenario(path string, tasks int, delay time.Duration) error {
	var b strings.Builder
	b.WriteString("title: bench\nusage: {input_tokens: 1000, output_tokens: 100}\ntasks:\n")
	for i := 1; i <= tasks; i++ {
		fmt.Fprintf(&b, "  - name: t%d\n    match: \"Task L1-t%d:\"\n    turns:\n      - delay: %s\n        tools: [{name: Write, input: {file_path: out/t%d.txt, content: \"L1-t%d\\n\"}}]\n      - text: done\n",
			i, i, delay, i, i)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// rush makes a fresh repository and rushes it, locally (agents 0) or on
// that many agents.
func rush(tmp, zerg string, env, coordEnv []string, tasks, agents, perAgent, workers int) (result, error) {
	dir, err := os.MkdirTemp(tmp, "repo-")
	if err != nil {
		return result{}, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return result{}, err
	}
	port, err := freePort()
	if err != nil {
		return result{}, err
	}
	cfg := fmt.Sprintf("version: 1\nworkers: %d\nmode: subprocess\nsecurity_rules:\n  enabled: false\n", workers)
	if agents > 0 {
		cfg += fmt.Sprintf("cluster:\n  url: tls://127.0.0.1:%d\n  embed: true\n  listen: 127.0.0.1:%d\n", port, port)
	}
	var graph strings.Builder
	graph.WriteString(`{"feature": "bench", "version": "2.0", "tasks": [`)
	for i := 1; i <= tasks; i++ {
		if i > 1 {
			graph.WriteString(",")
		}
		fmt.Fprintf(&graph, `{"id": "L1-t%d", "title": "file %d", "level": 1, "description": "Create out/t%d.txt.", "files": {"create": ["out/t%d.txt"], "modify": [], "read": []}, "verification": {"command": "test -s out/t%d.txt", "timeout_seconds": 30}, "estimate_minutes": 1}`, i, i, i, i, i)
	}
	graph.WriteString("]}\n")
	files := map[string]string{
		".zerg/config.yaml":                 cfg,
		".zerg/specs/bench/task-graph.json": graph.String(),
		".gitignore":                        ".zerg/runs/\n.zerg/cache/\n.zerg/audit.jsonl*\n",
		"README":                            "bench\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return result{}, err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return result{}, err
		}
	}
	if err := benchkit.CommitAll(dir); err != nil {
		return result{}, err
	}
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
			_ = p.Wait()
		}
	}()
	for i := 1; i <= agents; i++ {
		cmd := exec.Command(zerg, "cluster", "creds", fmt.Sprintf("a%d", i), "-o", filepath.Join(dir, fmt.Sprintf("a%d.json", i)))
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return result{}, fmt.Errorf("cluster creds: %v\n%s", err, out)
		}
	}
	for i := 1; i <= agents; i++ {
		creds := filepath.Join(dir, fmt.Sprintf("a%d.json", i))
		adir := filepath.Join(tmp, fmt.Sprintf("agent-%s-%d", filepath.Base(dir), i))
		if err := os.MkdirAll(adir, 0o755); err != nil {
			return result{}, err
		}
		ag := exec.Command(zerg, "agent", "--join", fmt.Sprintf("tls://127.0.0.1:%d", port), "--creds", creds, "--dir", adir, "--workers", fmt.Sprint(perAgent))
		ag.Env = env
		if log, err := os.Create(adir + ".log"); err == nil {
			defer log.Close()
			ag.Stdout, ag.Stderr = log, log
		}
		ag.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := ag.Start(); err != nil {
			return result{}, err
		}
		procs = append(procs, ag)
	}
	start := time.Now()
	cmd := exec.Command(zerg, "rush", "bench", "--plain", "--yes", "--no-check")
	cmd.Dir, cmd.Env = dir, coordEnv
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("tasks: %d of %d merged", tasks, tasks)) {
		return result{}, fmt.Errorf("rush: %v\n%s", err, out)
	}
	evs, err := eventlog.Read(filepath.Join(dir, ".zerg", "runs", "bench", "events.jsonl"))
	if err != nil {
		return result{}, err
	}
	started := map[string]time.Time{}
	var durs []time.Duration
	for _, e := range evs {
		key := fmt.Sprintf("%s/%d", e.Task, e.Attempt)
		switch e.Type {
		case "attempt_started":
			started[key] = e.Time
		case "attempt_finished":
			if s, ok := started[key]; ok {
				durs = append(durs, e.Time.Sub(s))
			}
		}
	}
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	var sum time.Duration
	for _, d := range durs {
		sum += d
	}
	mean := time.Duration(0)
	if len(durs) > 0 {
		mean = sum / time.Duration(len(durs))
	}
	return result{wall: wall, attempt: mean, n: tasks}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// median is the sample with the median wall time, with the median mean
// attempt time.
func median(ss []result) result {
	byWall := append([]result{}, ss...)
	sort.Slice(byWall, func(i, j int) bool { return byWall[i].wall < byWall[j].wall })
	m := byWall[len(byWall)/2]
	att := make([]time.Duration, len(ss))
	for i, s := range ss {
		att[i] = s.attempt
	}
	sort.Slice(att, func(i, j int) bool { return att[i] < att[j] })
	m.attempt = att[len(att)/2]
	return m
}
