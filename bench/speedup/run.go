package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zergrush/zerg/bench/internal/benchkit"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/mockapi"
)

// feature is the synthetic graphs' feature name.
const feature = "bench"

// errRefused: the zerg binary refused the config (a schedule it does not
// have yet); the run is skipped, not failed.
var errRefused = errors.New("refused by this zerg")

// rushResult is one zerg rush of a graph.
type rushResult struct {
	Shape    string        `json:"shape"`
	Schedule string        `json:"schedule"`
	Workers  int           `json:"workers"`
	Wall     time.Duration `json:"wall_ns"`
	Makespan time.Duration `json:"makespan_ns"`
	Bound    time.Duration `json:"lower_bound_ns"`
	// ModelBound is the lower bound of the think times alone: the least
	// makespan of any schedule of the graph on that many workers if zerg
	// and the CLI cost nothing (0 in -json files written before it was).
	ModelBound time.Duration `json:"model_bound_ns,omitempty"`
	// Best is bestSchedule over the same durations (0: not searched, or a
	// -json file written before it was).
	Best      time.Duration `json:"best_schedule_ns,omitempty"`
	Delivered int           `json:"delivered"`
	Tasks     int           `json:"tasks"`
	Usage     usage         `json:"usage"`
	Skipped   string        `json:"skipped,omitempty"`
	// Breakdown is where the time went (nil in -json files written
	// before it was measured).
	Breakdown *breakdown `json:"breakdown,omitempty"`
	// CPUBusy is the share of the machine's CPU time that was busy while
	// the rush ran (every process's, from /proc/stat; 0: not read).
	CPUBusy float64 `json:"cpu_busy,omitempty"`
}

// singleResult is the one claude -p session doing every task in order.
type singleResult struct {
	Shape     string        `json:"shape"`
	Wall      time.Duration `json:"wall_ns"`
	Delivered int           `json:"delivered"` // tasks whose files are all there
	Tasks     int           `json:"tasks"`
	Usage     usage         `json:"usage"`
	Requests  int           `json:"model_requests"`
	// FirstTokens and LastTokens are the scripted server's count (request
	// chars/4) of the session's first and last model request: its context
	// growing as it goes from task to task.
	FirstTokens int64 `json:"first_request_tokens"`
	LastTokens  int64 `json:"last_request_tokens"`
}

// makeRepo writes a git repository holding the graph, its scenario and
// zerg's config.
func makeRepo(dir string, ts []task, rushSc []byte, config string) error {
	spec := filepath.Join(dir, ".zerg", "specs", feature)
	if err := os.MkdirAll(spec, 0o755); err != nil {
		return err
	}
	g, err := graphJSON(feature, ts)
	if err != nil {
		return err
	}
	for p, c := range map[string][]byte{
		filepath.Join(spec, "task-graph.json"):     g,
		filepath.Join(spec, "scenario.yaml"):       rushSc,
		filepath.Join(dir, ".gitignore"):           []byte(".zerg/runs/\n.zerg/cache/\n.zerg/audit.jsonl*\n"),
		filepath.Join(dir, ".zerg", "config.yaml"): []byte(config),
		filepath.Join(dir, "README.md"):            []byte("speedup bench project\n"),
	} {
		if err := os.WriteFile(p, c, 0o644); err != nil {
			return err
		}
	}
	return benchkit.CommitAll(dir)
}

// zergConfig: no task retries (the script is right the first time, so a
// retry could only hide an environment failure), security rules off (they
// only add to the prompt), and every task on model, the model the single
// session uses too, so that both are priced alike.
// A gate, when given, is one required gate on every merged level.
func zergConfig(mode, schedule, model, gate string) string {
	c := "version: 1\nmode: " + mode + "\nschedule: " + schedule +
		"\nmodels:\n  implement: " + model + "\n  simple: " + model +
		"\nretry:\n  task_retries: 0\n  infra_backoff_initial: 1s\nsecurity_rules:\n  enabled: false\n"
	if gate != "" {
		q, _ := json.Marshal(gate) // a JSON string is a YAML string
		c += "gates:\n  - name: level-check\n    command: " + string(q) + "\n    required: true\n"
	}
	return c
}

// rush runs zerg rush --rehearse in dir and reads what its event log says.
func rush(ctx context.Context, zerg, claudeBin, dir, wsRoot, feature string, ts []task, think map[string]time.Duration, workers int) (rushResult, error) {
	r := rushResult{Workers: workers, Tasks: len(ts)}
	cmd := exec.CommandContext(ctx, zerg, "rush", feature, "--rehearse", "--workers", strconv.Itoa(workers))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ZERG_WORKSPACES="+wsRoot, "NO_COLOR=1", "ZERG_CLAUDE="+claudeBin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	before, cpuErr := readCPU()
	err := cmd.Run()
	r.Wall = time.Since(start)
	if after, err2 := readCPU(); cpuErr == nil && err2 == nil {
		r.CPUBusy = after.busySince(before)
	}
	if err != nil {
		if strings.Contains(out.String(), "not available in this version") {
			// The refusal names the run's temporary config file; keep
			// what it says about the schedule.
			r.Skipped = firstLine(strings.TrimSpace(out.String()))
			if i := strings.Index(r.Skipped, "schedule:"); i >= 0 {
				r.Skipped = "zerg: " + r.Skipped[i:]
			}
			return r, errRefused
		}
		return r, fmt.Errorf("zerg rush (%d workers): %v\n%s", workers, err, tail(out.String(), 30))
	}
	runDir := filepath.Join(dir, ".zerg", "runs", feature)
	evs, err := eventlog.Read(filepath.Join(runDir, "events.jsonl"))
	if err != nil {
		return r, err
	}
	reqs, err := readRequests(filepath.Join(runDir, "mockapi.jsonl"))
	if err != nil {
		return r, fmt.Errorf("the scripted model's request log: %w", err)
	}
	bd := breakDown(evs, reqs, ts, think, workers)
	r.Breakdown = &bd
	sp := spans(evs)
	r.Delivered = len(sp)
	r.Makespan = makespan(sp)
	r.Bound = lowerBound(ts, durations(sp), workers)
	r.ModelBound = lowerBound(ts, think, workers)
	r.Best = bestSchedule(ts, durations(sp), workers)
	r.Usage = rushUsage(evs)
	return r, nil
}

// single runs one claude -p session against the scripted model (the same
// server zerg rehearses with, in this process) with a prompt listing every
// task, in a repository like the rush's.
func single(ctx context.Context, claudeBin, model, dir, feature string, ts []task, sc []byte, plain bool) (singleResult, error) {
	r := singleResult{Tasks: len(ts)}
	parsed, err := mockapi.ParseScenario(sc)
	if err != nil {
		return r, fmt.Errorf("single-session scenario: %v", err)
	}
	srv := mockapi.NewServer(parsed)
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		return r, err
	}
	defer srv.Close()
	home := filepath.Join(dir, ".home")
	if err := os.MkdirAll(filepath.Join(home, "cfg"), 0o755); err != nil {
		return r, err
	}
	cmd := exec.CommandContext(ctx, claudeBin, "-p", "--output-format", "json",
		"--setting-sources", "", "--strict-mcp-config", "--permission-mode", "acceptEdits", "--model", model,
		"--tools", "Bash,Edit,Read,Write,Glob,Grep", "--allowedTools", "Bash(*)", "--", singlePrompt(feature, ts))
	cmd.Dir = dir
	// The key is the scripted server's, which takes any: not a secret.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, "cfg"),
		"ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=scripted", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CLAUDE_CODE_MAX_RETRIES=2", "API_TIMEOUT_MS=120000"}
	// The Go toolchain's caches and settings, so that a real project's tests
	// find its modules where the user has them, as zerg's workers do.
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GO") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, goCaches...)
	if !plain {
		// What zerg sets for its workers: without them each request of
		// the CLI carries some 4,900 more tokens (its git instructions
		// and auto memory), which would be counted against the single
		// session and not against parallelism.
		cmd.Env = append(cmd.Env, "CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS=1", "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1")
	}
	cmd.Stdin = nil
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err = cmd.Run()
	r.Wall = time.Since(start)
	if err != nil {
		return r, fmt.Errorf("claude -p: %v\n%s%s", err, tail(out.String(), 10), tail(errb.String(), 10))
	}
	var res struct {
		IsError bool    `json:"is_error"`
		Cost    float64 `json:"total_cost_usd"`
		Usage   struct {
			Input      int64 `json:"input_tokens"`
			Output     int64 `json:"output_tokens"`
			CacheRead  int64 `json:"cache_read_input_tokens"`
			CacheWrite int64 `json:"cache_creation_input_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return r, fmt.Errorf("claude -p result: %v\n%s", err, tail(out.String(), 10))
	}
	if res.IsError {
		return r, fmt.Errorf("claude -p ended with an error: %s", tail(out.String(), 10))
	}
	r.Usage = usage{Input: res.Usage.Input + res.Usage.CacheRead + res.Usage.CacheWrite, Output: res.Usage.Output, USD: res.Cost}
	for _, q := range srv.Requests() {
		if q.Kind == mockapi.KindMain {
			if r.Requests == 0 {
				r.FirstTokens = int64(q.TokenEstimate)
			}
			r.LastTokens = int64(q.TokenEstimate)
			r.Requests++
		}
	}
	for _, t := range ts {
		ok := true
		for _, f := range files(t) {
			if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
				ok = false
			}
		}
		if ok {
			r.Delivered++
		}
	}
	return r, nil
}

// goCaches are GOMODCACHE, GOCACHE and GOPATH as the user's go command
// has them (set by main), given to the single session, whose HOME is its
// own.
var goCaches []string

func loadGoCaches() {
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOCACHE", "GOPATH").Output()
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, name := range []string{"GOMODCACHE", "GOCACHE", "GOPATH"} {
		if i < len(lines) && lines[i] != "" {
			goCaches = append(goCaches, name+"="+lines[i])
		}
	}
	goCaches = append(goCaches, "GOWORK=off")
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
