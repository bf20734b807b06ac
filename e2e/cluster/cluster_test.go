// Package cluster holds the end-to-end test of cluster mode: a coordinator
// with the embedded server and three `zerg agent` processes, each in a
// network namespace of its own joined to the coordinator's by a veth pair on
// a bridge, so that every byte between them crosses a real interface. The
// real binary, real git, the real Claude Code CLI against `zerg mockapi`.
// It needs root and ip netns: without them it fails and says so.
package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cluster"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"

	"github.com/zergrush/zerg/e2e/e2ebin"
)

var (
	zergBin   string
	claudeBin string
	repoRoot  string
)

func TestMain(m *testing.M) {
	if file := os.Getenv("ZERG_E2E_ROGUE_CREDS"); file != "" {
		// The test binary again, in an agent's namespace: a rogue agent.
		delivery, _ := strconv.ParseUint(os.Getenv("ZERG_E2E_ROGUE_DELIVERY"), 10, 64)
		if err := rogue(file, os.Getenv("ZERG_E2E_ROGUE_URL"), os.Getenv("ZERG_E2E_ROGUE_ATTEMPT"), delivery); err != nil {
			fmt.Fprintln(os.Stderr, "rogue:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if file := os.Getenv("ZERG_E2E_ROGUE_HOLD"); file != "" {
		// The test binary again, in an agent's namespace: a rogue agent
		// that holds attempts without working on them.
		if err := holdAttempts(file, os.Getenv("ZERG_E2E_ROGUE_URL"), os.Getenv("ZERG_E2E_ROGUE_JOURNAL")); err != nil {
			fmt.Fprintln(os.Stderr, "rogue:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if conf := os.Getenv("ZERG_E2E_NATS_SERVER"); conf != "" {
		// The test binary again, in the coordinator's namespace: a NATS
		// server zerg does not embed, until it is killed.
		if err := externalServer(conf); err != nil {
			fmt.Fprintln(os.Stderr, "nats server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if err := needNetns(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e/cluster:", err)
		os.Exit(1)
	}
	e2ebin.Main(m, "e2e/cluster", func(t e2ebin.Tools) {
		repoRoot, zergBin, claudeBin = t.Root, t.Zerg, t.Claude
	})
}

// needNetns fails the suite (not skips it) where it cannot put the
// coordinator and each agent in a network namespace of its own.
func needNetns() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("the cluster test needs root: it puts the coordinator and each agent in a network namespace of its own (ip netns); run it as root (make test does)")
	}
	probe := fmt.Sprintf("zcp%d", os.Getpid()%100000)
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns is not available here (%v: %s): the cluster test needs network namespaces and veth pairs (iproute2, CAP_NET_ADMIN)", err, bytes.TrimSpace(out))
	}
	_ = exec.Command("ip", "netns", "del", probe).Run()
	return nil
}

// network is the coordinator's namespace with a bridge, and one namespace
// per agent on a veth pair whose other end is on the bridge.
type network struct {
	coord  string
	agents []string
	server string // the coordinator's address on the bridge
}

func newNetwork(t *testing.T, agents int) *network {
	t.Helper()
	id := fmt.Sprintf("%d", rand.IntN(9000)+1000)
	n := &network{coord: "zc" + id + "c", server: "10.77.0.1"}
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	ip("netns", "add", n.coord)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", n.coord).Run() })
	ip("-n", n.coord, "link", "set", "lo", "up")
	ip("-n", n.coord, "link", "add", "br0", "type", "bridge")
	ip("-n", n.coord, "addr", "add", n.server+"/24", "dev", "br0")
	ip("-n", n.coord, "link", "set", "br0", "up")
	for i := 1; i <= agents; i++ {
		ns := fmt.Sprintf("zc%sa%d", id, i)
		n.agents = append(n.agents, ns)
		ip("netns", "add", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
		host, peer := fmt.Sprintf("zc%sh%d", id, i), fmt.Sprintf("zc%sp%d", id, i)
		ip("link", "add", host, "type", "veth", "peer", "name", peer)
		ip("link", "set", host, "netns", n.coord)
		ip("link", "set", peer, "netns", ns)
		ip("-n", n.coord, "link", "set", host, "master", "br0", "up")
		ip("-n", ns, "link", "set", "lo", "up")
		ip("-n", ns, "addr", "add", fmt.Sprintf("10.77.0.%d/24", 10+i), "dev", peer)
		ip("-n", ns, "link", "set", peer, "up")
	}
	return n
}

// proc is a zerg process started in a namespace.
type proc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// waitFor waits until the output has s, or fails.
func (p *proc) waitFor(t *testing.T, s string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(p.output(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q within %s; output:\n%s", s, within, p.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// start runs zerg args in namespace ns with env, in its own process group;
// the test's end kills the group.
func start(t *testing.T, ns, dir string, env []string, args ...string) *proc {
	t.Helper()
	return startBin(t, ns, dir, env, zergBin, args...)
}

// startBin is start for any binary.
func startBin(t *testing.T, ns, dir string, env []string, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, bin}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p, p
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
	return p
}

// startMockAPI runs zerg mockapi serve args in namespace ns and returns its
// address once it listens.
func startMockAPI(t *testing.T, ns, dir string, env []string, args ...string) string {
	t.Helper()
	mock := start(t, ns, dir, env, append([]string{"mockapi", "serve"}, args...)...)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(mock.output(), "http://") {
		if time.Now().After(deadline) || mock.exited() {
			t.Fatalf("mockapi: %s", mock.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return strings.TrimSpace(strings.SplitN(mock.output(), "\n", 2)[0])
}

// fakeKey is a key of the Anthropic API's shape, made at run time, so no
// file holds one.
func fakeKey() string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 90)
	for i := range b {
		b[i] = chars[rand.IntN(len(chars))]
	}
	return strings.Join([]string{"sk-", "ant-", "api03-", string(b), "AA"}, "")
}

const tasks = 6

// writeProject makes the repository: tasks tasks, each writing one file;
// L1-t1's first model answer takes slowDelay, long enough to kill its agent.
// clusterCfg is the config's cluster block ("" for the embedded server at
// server:4222).
func writeProject(t *testing.T, dir, server, mode, clusterCfg string) {
	t.Helper()
	var graph struct {
		Feature string           `json:"feature"`
		Version string           `json:"version"`
		Tasks   []map[string]any `json:"tasks"`
	}
	graph.Feature, graph.Version = "fleet", "2.0"
	var scenario strings.Builder
	scenario.WriteString("title: fleet\nusage: {input_tokens: 1000, output_tokens: 100}\ntasks:\n")
	for i := 1; i <= tasks; i++ {
		id := fmt.Sprintf("L1-t%d", i)
		file := fmt.Sprintf("out/t%d.txt", i)
		graph.Tasks = append(graph.Tasks, map[string]any{
			"id": id, "title": "file " + file, "level": 1, "description": "Create " + file + " holding the task's name.",
			"files":            map[string]any{"create": []string{file}, "modify": []string{}, "read": []string{}},
			"verification":     map[string]any{"command": "grep -qx " + id + " " + file, "timeout_seconds": 30},
			"estimate_minutes": 1,
		})
		delay := "200ms"
		if i == 1 {
			delay = "12s"
		}
		fmt.Fprintf(&scenario, "  - name: t%d\n    match: \"Task %s:\"\n    turns:\n      - delay: %s\n        tools: [{name: Write, input: {file_path: %s, content: \"%s\\n\"}}]\n      - text: \"Wrote %s.\"\n",
			i, id, delay, file, id, file)
	}
	spec := filepath.Join(dir, ".zerg", "specs", "fleet")
	must(t, os.MkdirAll(spec, 0o755))
	b, _ := json.MarshalIndent(graph, "", "  ")
	must(t, os.WriteFile(filepath.Join(spec, "task-graph.json"), b, 0o644))
	must(t, os.WriteFile(filepath.Join(spec, "scenario.yaml"), []byte(scenario.String()), 0o644))
	if clusterCfg == "" {
		clusterCfg = fmt.Sprintf("  url: tls://%s:4222\n  embed: true\n  listen: 0.0.0.0:4222\n", server)
	}
	cfg := fmt.Sprintf(`version: 1
workers: 6
mode: %s
retry:
  infra_backoff_initial: 1s
  infra_backoff_max: 5s
security_rules:
  enabled: false
cluster:
%s  ack_wait: 5s
  max_deliver: 8
`, mode, clusterCfg)
	must(t, os.WriteFile(filepath.Join(dir, ".zerg", "config.yaml"), []byte(cfg), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".zerg/runs/\n.zerg/cache/\n.zerg/audit.jsonl*\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "README"), []byte("fleet\n"), 0o644))
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "fleet"}} {
		git(t, dir, args...)
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=t@example.invalid"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestClusterRun: a graph runs to completion on three agents, each task
// merged exactly once; the agent running the slow task is SIGKILLed and the
// task is delivered to another agent and merged once; agents with a wrong
// password or another agent's name are refused; the key the coordinator was
// given is nowhere on the agents' side.
func TestClusterRun(t *testing.T) {
	net := newNetwork(t, 3)
	tmp := e2ebin.Traversable(t, t.TempDir())
	repo := filepath.Join(tmp, "repo")
	must(t, os.MkdirAll(repo, 0o755))
	writeProject(t, repo, net.server, "sandbox", "")
	home := filepath.Join(tmp, "home")
	must(t, os.MkdirAll(home, 0o755))
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ZERG_CLAUDE=" + claudeBin, "NO_COLOR=1", "LANG=C.UTF-8"}

	// Credentials for three agents, and two forgeries.
	creds := make([]string, 3)
	for i := range creds {
		creds[i] = filepath.Join(tmp, fmt.Sprintf("a%d.json", i+1))
		out := issueCreds(t, repo, base, fmt.Sprintf("a%d", i+1), creds[i])
		fi, err := os.Stat(creds[i])
		must(t, err)
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %o, want 0600", creds[i], fi.Mode().Perm())
		}
		if strings.Contains(out, readCreds(t, creds[i])["password"].(string)) {
			t.Errorf("zerg cluster creds printed the password")
		}
	}
	rogueCreds := filepath.Join(tmp, "rogue.json")
	issueCreds(t, repo, base, "rogue", rogueCreds)
	wrongPassword := forge(t, creds[1], filepath.Join(tmp, "wrong.json"), func(c map[string]any) { c["password"] = "x" + c["password"].(string)[1:] })
	otherName := forge(t, creds[1], filepath.Join(tmp, "other.json"), func(c map[string]any) { c["user"] = "a1" })

	// The scripted API, in the coordinator's namespace.
	key := fakeKey()
	apiLog := filepath.Join(tmp, "api.jsonl")
	apiURL := startMockAPI(t, net.coord, repo, base, "--scenario", filepath.Join(repo, ".zerg", "specs", "fleet", "scenario.yaml"), "--log", apiLog)

	// The agents: no key in their environment, state in their own dirs.
	join := "tls://" + net.server + ":4222"
	agents := make([]*proc, 3)
	agentDirs := make([]string, 3)
	for i := range agents {
		agentDirs[i] = filepath.Join(tmp, fmt.Sprintf("agent%d", i+1))
		must(t, os.MkdirAll(agentDirs[i], 0o755))
		// a1 and a2 give the run's isolation (sandbox); a3 only
		// subprocess mode, so it must refuse every attempt.
		mode := "sandbox"
		if i == 2 {
			mode = "subprocess"
		}
		agents[i] = start(t, net.agents[i], tmp, base, "agent", "--join", join, "--creds", creds[i], "--dir", agentDirs[i], "--workers", "2", "--mode", mode)
	}

	// The coordinator, with the key.
	coordEnv := append(append([]string{}, base...), "ANTHROPIC_API_KEY="+key, "ANTHROPIC_BASE_URL="+apiURL,
		"ZERG_WORKSPACES="+filepath.Join(tmp, "workspaces"))
	rush := start(t, net.coord, repo, coordEnv, "rush", "fleet", "--plain", "--yes", "--no-check")
	for i, a := range agents {
		a.waitFor(t, "joined "+join, 60*time.Second)
		_ = i
	}

	t.Run("refused credentials", func(t *testing.T) {
		for name, file := range map[string]string{"a wrong password": wrongPassword, "another agent's name": otherName} {
			p := start(t, net.agents[2], tmp, base, "agent", "--join", join, "--creds", file, "--dir", filepath.Join(tmp, "forger"))
			select {
			case <-p.done:
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: the agent was not refused within 30s:\n%s", name, p.output())
			}
			if code := p.cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(p.output(), "refused the credentials") {
				t.Errorf("%s: exit %d, output:\n%s", name, code, p.output())
			}
		}
		// Control: the genuine file of the same agent joined (above).
		if !strings.Contains(agents[1].output(), "joined") {
			t.Errorf("control: a2's own credentials did not join:\n%s", agents[1].output())
		}
	})

	// Kill the agent that runs the slow task, mid-task.
	var killed int = -1
	var roguedAttempt string
	deadline := time.Now().Add(90 * time.Second)
	for killed < 0 {
		for i, a := range agents {
			if strings.Contains(a.output(), "runs L1-t1 attempt 1") {
				killed = i
			}
		}
		if time.Now().After(deadline) || rush.exited() {
			t.Fatalf("no agent took L1-t1; rush:\n%s", rush.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second) // its worker is waiting on the model
	killedName := fmt.Sprintf("a%d", killed+1)
	var killedDelivery uint64
	if m := regexp.MustCompile(`runs L1-t1 attempt 1 \(\S+, delivery (\d+)\)`).FindStringSubmatch(agents[killed].output()); m != nil {
		killedDelivery, _ = strconv.ParseUint(m[1], 10, 64)
	}

	t.Run("a result for an attempt the agent does not hold", func(t *testing.T) {
		m := regexp.MustCompile(`runs L1-t1 attempt 1 \((\S+), delivery (\d+)\)`).FindStringSubmatch(agents[killed].output())
		if m == nil {
			t.Fatalf("no attempt id in:\n%s", agents[killed].output())
		}
		self, err := os.Executable()
		must(t, err)
		cmd := exec.Command("ip", "netns", "exec", net.agents[2], self)
		cmd.Env = append(append([]string{}, base...), "ZERG_E2E_ROGUE_CREDS="+rogueCreds, "ZERG_E2E_ROGUE_URL="+join, "ZERG_E2E_ROGUE_ATTEMPT="+m[1], "ZERG_E2E_ROGUE_DELIVERY="+m[2])
		// Control: the server took the publish (its permissions allow an
		// agent its own result subject); refusing it is the coordinator's.
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the rogue could not publish: %v\n%s", err, out)
		}
		roguedAttempt = m[1]
	})

	t.Run("status names the agent", func(t *testing.T) {
		cmd := exec.Command(zergBin, "status", "fleet")
		cmd.Dir, cmd.Env = repo, base
		out, _ := cmd.CombinedOutput()
		var line string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "L1-t1") {
				line = l
			}
		}
		if !strings.Contains(line, "on agent "+killedName) {
			t.Errorf("status does not say L1-t1 runs on %s:\n%s", killedName, out)
		}
		// Control: no more of its tasks are running on it than it has
		// workers (a task it finished, being verified, may still name it).
		running := 0
		for _, l := range strings.Split(string(out), "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[2] == "running" && strings.Contains(l, "on agent "+killedName) {
				running++
			}
		}
		if running > 2 {
			t.Errorf("status names %s for %d running tasks, more than its 2 workers:\n%s", killedName, running, out)
		}
	})

	must(t, agents[killed].cmd.Process.Signal(syscall.SIGKILL))

	select {
	case <-rush.done:
	case <-time.After(4 * time.Minute):
		t.Fatalf("the rush did not end within 4 minutes:\n%s", rush.output())
	}
	if code := rush.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(rush.output(), fmt.Sprintf("tasks: %d of %d merged", tasks, tasks)) {
		t.Fatalf("rush exit %d:\n%s", code, rush.output())
	}
	if testing.Verbose() {
		t.Logf("rush:\n%s", rush.output())
		for i, a := range agents {
			t.Logf("agent a%d:\n%s", i+1, a.output())
		}
	}

	t.Run("an agent weaker than the run gets none of its attempts", func(t *testing.T) {
		if strings.Contains(agents[2].output(), "runs L1-") {
			t.Errorf("the subprocess agent ran an attempt of a sandbox run:\n%s", agents[2].output())
		}
		// Control: it was live during the run, said it runs subprocess
		// mode, the coordinator saw that it cannot run the run's
		// attempts, and handed them to the sandbox agents.
		if !strings.Contains(rush.output(), "agent a3 joined (mode subprocess") || !strings.Contains(rush.output(), "the run needs mode sandbox and this agent runs subprocess") {
			t.Errorf("the coordinator did not see the subprocess agent for what it is:\n%s", rush.output())
		}
		leases := map[string]int{}
		for _, r := range readJournal(t, filepath.Join(repo, ".zerg", "runs", "fleet", "cluster.jsonl")) {
			if r["kind"] == "lease" {
				leases[r["agent"].(string)]++
			}
		}
		if leases["a3"] != 0 || leases["a1"]+leases["a2"] < tasks {
			t.Errorf("leases by agent %v: want none for a3, every task's for a1 and a2", leases)
		}
	})

	t.Run("each task merged once", func(t *testing.T) {
		evs, err := eventlog.Read(filepath.Join(repo, ".zerg", "runs", "fleet", "events.jsonl"))
		must(t, err)
		if problems := mergedOnce(evs, git(t, repo, "log", "--format=%(trailers:key=Task-Id,valueonly)", run.IntegrationBranch("fleet"))); len(problems) > 0 {
			t.Errorf("%s", strings.Join(problems, "\n"))
		}
		// Control: the same check on a history with a task merged twice.
		if problems := mergedOnce(evs, git(t, repo, "log", "--format=%(trailers:key=Task-Id,valueonly)", run.IntegrationBranch("fleet"))+"\nL1-t2\n"); len(problems) == 0 {
			t.Errorf("control: a task merged twice was not noticed")
		}
	})

	t.Run("the killed agent's task went to another agent", func(t *testing.T) {
		journal := readJournal(t, filepath.Join(repo, ".zerg", "runs", "fleet", "cluster.jsonl"))
		var accepted, revokedOrDead bool
		for _, r := range journal {
			if r["kind"] == "result_accepted" && r["task"] == "L1-t1" {
				accepted = true
				if r["agent"] == killedName {
					t.Errorf("L1-t1's accepted result came from the killed agent %s", killedName)
				}
				if d, _ := r["delivery"].(float64); uint64(d) <= killedDelivery {
					t.Errorf("L1-t1's accepted result is delivery %v; the killed agent held delivery %d", r["delivery"], killedDelivery)
				}
			}
			if (r["kind"] == "lease_revoked" && r["agent"] == killedName) || r["kind"] == "agent_expired" && r["agent"] == killedName {
				revokedOrDead = true
			}
		}
		if !accepted || !revokedOrDead {
			t.Errorf("journal: accepted %v, killed agent's lease revoked or agent expired %v:\n%v", accepted, revokedOrDead, journal)
		}
		// Control: the killed agent did start it.
		if !strings.Contains(agents[killed].output(), "runs L1-t1 attempt 1") {
			t.Errorf("control: %s never ran L1-t1", killedName)
		}
	})

	t.Run("the rogue result was refused and audited", func(t *testing.T) {
		if roguedAttempt == "" {
			t.Skip("no rogue result was sent")
		}
		var refused bool
		for _, r := range readJournal(t, filepath.Join(repo, ".zerg", "runs", "fleet", "cluster.jsonl")) {
			if r["kind"] == "report_refused" && r["agent"] == "rogue" && r["attempt"] == roguedAttempt {
				refused = true
			}
			if r["kind"] == "result_accepted" && r["agent"] == "rogue" {
				t.Errorf("the rogue's result was accepted: %v", r)
			}
		}
		audit, _ := os.ReadFile(filepath.Join(repo, ".zerg", "audit.jsonl"))
		if !refused || !bytes.Contains(audit, []byte("cluster_report_refused")) || !bytes.Contains(audit, []byte(`"rogue"`)) {
			t.Errorf("journal refusal %v; audit log:\n%s", refused, audit)
		}
	})

	t.Run("no key on the agents' side", func(t *testing.T) {
		// Control: the search finds the key where it is (the coordinator's
		// environment as its process was given it).
		if !strings.Contains(strings.Join(coordEnv, "\n"), key) {
			t.Fatal("control: the key is not in the coordinator's environment")
		}
		for i, a := range agents {
			if !a.exited() {
				if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", a.cmd.Process.Pid)); err == nil && bytes.Contains(env, []byte(key)) {
					t.Errorf("agent a%d's environment holds the key", i+1)
				}
			}
			if found := grepTree(t, agentDirs[i], key); len(found) > 0 {
				t.Errorf("agent a%d wrote the key to %v", i+1, found)
			}
		}
		if found := grepTree(t, filepath.Join(repo, ".zerg", "runs", ".cluster", "jetstream"), key); len(found) > 0 {
			t.Errorf("the NATS store holds the key in %v", found)
		}
		// Control: grepTree finds a key that is there.
		probe := filepath.Join(agentDirs[0], "probe")
		must(t, os.WriteFile(probe, []byte("x"+key+"x"), 0o600))
		if found := grepTree(t, agentDirs[0], key); len(found) != 1 {
			t.Errorf("control: grepTree found %v, want the probe", found)
		}
		os.Remove(probe)
	})
}

// TestClusterCoordinatorRestart: the coordinator (and with it the embedded
// server) is SIGKILLed while agents run its attempts; the agents stay up,
// the resumed coordinator restarts the server on the same file store, the
// agents reconnect, and the run completes with each task merged once.
func TestClusterCoordinatorRestart(t *testing.T) {
	net := newNetwork(t, 2)
	tmp := e2ebin.Traversable(t, t.TempDir())
	repo := filepath.Join(tmp, "repo")
	must(t, os.MkdirAll(repo, 0o755))
	writeProject(t, repo, net.server, "subprocess", "")
	home := filepath.Join(tmp, "home")
	must(t, os.MkdirAll(home, 0o755))
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ZERG_CLAUDE=" + claudeBin, "NO_COLOR=1", "LANG=C.UTF-8"}
	join := "tls://" + net.server + ":4222"
	apiURL := startMockAPI(t, net.coord, repo, base, "--scenario", filepath.Join(repo, ".zerg", "specs", "fleet", "scenario.yaml"))
	var agents []*proc
	for i := range net.agents {
		file := filepath.Join(tmp, fmt.Sprintf("a%d.json", i+1))
		issueCreds(t, repo, base, fmt.Sprintf("a%d", i+1), file)
		dir := filepath.Join(tmp, fmt.Sprintf("agent%d", i+1))
		must(t, os.MkdirAll(dir, 0o755))
		agents = append(agents, start(t, net.agents[i], tmp, base, "agent", "--join", join, "--creds", file, "--dir", dir, "--workers", "3"))
	}
	env := append(append([]string{}, base...), "ANTHROPIC_API_KEY="+fakeKey(), "ANTHROPIC_BASE_URL="+apiURL,
		"ZERG_WORKSPACES="+filepath.Join(tmp, "workspaces"))
	first := start(t, net.coord, repo, env, "rush", "fleet", "--plain", "--yes", "--no-check")
	// Kill it while the slow task runs on an agent.
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(agents[0].output()+agents[1].output(), "runs L1-t1 attempt 1") {
		if time.Now().After(deadline) || first.exited() {
			t.Fatalf("no agent took L1-t1:\n%s", first.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	must(t, syscall.Kill(-first.cmd.Process.Pid, syscall.SIGKILL))
	<-first.done

	second := start(t, net.coord, repo, env, "rush", "fleet", "--resume", "--plain", "--yes", "--no-check")
	select {
	case <-second.done:
	case <-time.After(4 * time.Minute):
		t.Fatalf("the resumed rush did not end within 4 minutes:\n%s", second.output())
	}
	if code := second.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(second.output(), fmt.Sprintf("tasks: %d of %d merged", tasks, tasks)) {
		t.Fatalf("resumed rush exit %d:\n%s\nagents:\n%s\n%s", code, second.output(), agents[0].output(), agents[1].output())
	}
	for i, a := range agents {
		if a.exited() {
			t.Errorf("agent a%d exited with the coordinator:\n%s", i+1, a.output())
		}
	}
	evs, err := eventlog.Read(filepath.Join(repo, ".zerg", "runs", "fleet", "events.jsonl"))
	must(t, err)
	if problems := mergedOnce(evs, git(t, repo, "log", "--format=%(trailers:key=Task-Id,valueonly)", run.IntegrationBranch("fleet"))); len(problems) > 0 {
		t.Errorf("%s", strings.Join(problems, "\n"))
	}
	if testing.Verbose() {
		t.Logf("first:\n%s\nsecond:\n%s", first.output(), second.output())
		for i, a := range agents {
			t.Logf("agent a%d:\n%s", i+1, a.output())
		}
	}
}

// mergedOnce lists what is wrong with the run's merges: each task of the
// graph with one successful attempt in the event log and one commit on
// the integration branch (trailers is git log's Task-Id trailers).
func mergedOnce(evs []eventlog.Event, trailers string) []string {
	var problems []string
	success := map[string]int{}
	for _, e := range evs {
		if e.Type != runstate.EvAttemptFinished {
			continue
		}
		var d runstate.AttemptFinished
		if e.Decode(&d) == nil && d.Class == "success" {
			success[e.Task]++
		}
	}
	commits := map[string]int{}
	for _, l := range strings.Split(trailers, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			commits[l]++
		}
	}
	for i := 1; i <= tasks; i++ {
		id := fmt.Sprintf("L1-t%d", i)
		if success[id] != 1 || commits[id] != 1 {
			problems = append(problems, fmt.Sprintf("%s: %d successful attempts in the log, %d commits on the integration branch; want 1 and 1", id, success[id], commits[id]))
		}
	}
	return problems
}

// issueCreds runs zerg cluster creds NAME -o FILE in the repository and
// returns what it printed.
func issueCreds(t *testing.T, repo string, env []string, name, file string) string {
	t.Helper()
	cmd := exec.Command(zergBin, "cluster", "creds", name, "-o", file)
	cmd.Dir, cmd.Env = repo, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cluster creds %s: %v\n%s", name, err, out)
	}
	return string(out)
}

func readCreds(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	must(t, err)
	var c map[string]any
	must(t, json.Unmarshal(b, &c))
	return c
}

// forge writes a copy of the credentials in from, edited.
func forge(t *testing.T, from, to string, edit func(map[string]any)) string {
	t.Helper()
	c := readCreds(t, from)
	edit(c)
	b, _ := json.Marshal(c)
	must(t, os.WriteFile(to, b, 0o600))
	return to
}

func readJournal(t *testing.T, file string) []map[string]any {
	t.Helper()
	f, err := os.Open(file)
	must(t, err)
	defer f.Close()
	var out []map[string]any
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		var r map[string]any
		if json.Unmarshal(s.Bytes(), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// grepTree lists the files under dir that hold s.
func grepTree(t *testing.T, dir, s string) []string {
	t.Helper()
	var found []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		b, _ := io.ReadAll(io.LimitReader(f, 256<<20))
		if bytes.Contains(b, []byte(s)) {
			found = append(found, p)
		}
		return nil
	})
	return found
}

// rogue publishes, with its own genuine credentials, a successful result
// for an attempt another agent holds (the holder's delivery number).
func rogue(file, url, attempt string, delivery uint64) error {
	creds, err := cluster.ReadCreds(file)
	if err != nil {
		return err
	}
	creds.URL = url
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nc, err := cluster.Connect(ctx, creds)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	rep, _ := json.Marshal(driver.ClusterReport{Class: outcome.Success, Reason: outcome.ReasonCompleted,
		Worker: claude.Outcome{Class: outcome.Success, Reason: outcome.ReasonCompleted}, Verified: true})
	return cluster.PublishResult(ctx, js, &cluster.Result{Lease: cluster.Lease{AttemptID: attempt, Agent: creds.User, Delivery: delivery}, Outcome: rep})
}
