package cluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"

	"github.com/zergrush/zerg/e2e/e2ebin"
)

// mockRequests reads a zerg mockapi request log: the kind of each request.
func mockRequests(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var kinds []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var rec struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			kinds = append(kinds, rec.Path)
		}
	}
	return kinds
}

// TestClusterAgentKeyLocal, in subprocess and in sandbox mode (the
// agent's gateway, or its sandbox's): with cluster.agent_key local, an agent with a
// key of its own (and its own API, a mockapi in its namespace that takes
// only that key) runs the attempts; the coordinator's API gets no model
// request (only the launch probe's count_tokens); the run log has each
// attempt's cost; an agent without a key gets no attempt (control: the
// coordinator saw it live and keyless) and a1's key is in no file the agent
// wrote.
func TestClusterAgentKeyLocal(t *testing.T) {
	for _, mode := range []string{"subprocess", "sandbox"} {
		t.Run(mode, func(t *testing.T) { agentKeyLocal(t, mode) })
	}
}

func agentKeyLocal(t *testing.T, mode string) {
	net := newNetwork(t, 2)
	tmp := e2ebin.Traversable(t, t.TempDir())
	repo := filepath.Join(tmp, "repo")
	must(t, os.MkdirAll(repo, 0o755))
	writeProject(t, repo, net.server, mode,
		fmt.Sprintf("  url: tls://%s:4222\n  embed: true\n  listen: 0.0.0.0:4222\n  agent_key: local\n", net.server))
	home := filepath.Join(tmp, "home")
	must(t, os.MkdirAll(home, 0o755))
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ZERG_CLAUDE=" + claudeBin, "NO_COLOR=1", "LANG=C.UTF-8"}
	creds := make([]string, 2)
	for i := range creds {
		creds[i] = filepath.Join(tmp, fmt.Sprintf("a%d.json", i+1))
		issueCreds(t, repo, base, fmt.Sprintf("a%d", i+1), creds[i])
	}
	// Two scripted APIs, each taking only its own key: the coordinator's
	// (for the launch probe) and agent a1's, in a1's namespace.
	scenario, err := os.ReadFile(filepath.Join(repo, ".zerg", "specs", "fleet", "scenario.yaml"))
	must(t, err)
	serve := func(ns, key, name string) (url, log string) {
		file := filepath.Join(tmp, name+"-scenario.yaml")
		must(t, os.WriteFile(file, append([]byte("api_key: "+key+"\n"), scenario...), 0o644))
		log = filepath.Join(tmp, name+"-api.jsonl")
		m := start(t, ns, tmp, base, "mockapi", "serve", "--scenario", file, "--log", log)
		m.waitFor(t, "http://", 10*time.Second)
		return strings.TrimSpace(strings.SplitN(m.output(), "\n", 2)[0]), log
	}
	coordKey, agentKey := fakeKey(), fakeKey()
	coordURL, coordLog := serve(net.coord, coordKey, "coordinator")
	agentURL, agentLog := serve(net.agents[0], agentKey, "agent")

	join := "tls://" + net.server + ":4222"
	dirs := []string{filepath.Join(tmp, "agent1"), filepath.Join(tmp, "agent2")}
	for _, d := range dirs {
		must(t, os.MkdirAll(d, 0o755))
	}
	withKey := append(append([]string{}, base...), "ANTHROPIC_API_KEY="+agentKey, "ANTHROPIC_BASE_URL="+agentURL)
	a1 := start(t, net.agents[0], tmp, withKey, "agent", "--join", join, "--creds", creds[0], "--dir", dirs[0], "--workers", "3", "--mode", mode)
	a2 := start(t, net.agents[1], tmp, base, "agent", "--join", join, "--creds", creds[1], "--dir", dirs[1], "--workers", "1", "--mode", mode)
	coordEnv := append(append([]string{}, base...), "ANTHROPIC_API_KEY="+coordKey, "ANTHROPIC_BASE_URL="+coordURL,
		"ZERG_WORKSPACES="+filepath.Join(tmp, "workspaces"))
	rush := start(t, net.coord, repo, coordEnv, "rush", "fleet", "--plain", "--yes", "--no-check")
	select {
	case <-rush.done:
	case <-time.After(4 * time.Minute):
		t.Fatalf("the rush did not end within 4 minutes:\n%s\na1:\n%s\na2:\n%s", rush.output(), a1.output(), a2.output())
	}
	if code := rush.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(rush.output(), fmt.Sprintf("tasks: %d of %d merged", tasks, tasks)) {
		t.Fatalf("rush exit %d:\n%s\na1:\n%s\na2:\n%s", code, rush.output(), a1.output(), a2.output())
	}

	// a2 has no key: the coordinator handed it nothing, knowing why
	// (the control: it was live and said so).
	if out := a2.output(); strings.Contains(out, " runs L1-") || !strings.Contains(out, "refused (no ANTHROPIC_API_KEY)") {
		t.Errorf("the keyless agent's output:\n%s", out)
	}
	if out := rush.output(); !strings.Contains(out, "agent a2 joined") || !strings.Contains(out, "this agent started without ANTHROPIC_API_KEY") {
		t.Errorf("the coordinator did not see the keyless agent for what it is:\n%s", out)
	}
	// The model traffic went to a1's API, none to the coordinator's.
	var agentMessages int
	for _, p := range mockRequests(t, agentLog) {
		if p == "/v1/messages" {
			agentMessages++
		}
	}
	if agentMessages < tasks {
		t.Errorf("agent a1's API got %d model requests, want at least %d", agentMessages, tasks)
	}
	coordPaths := mockRequests(t, coordLog)
	for _, p := range coordPaths {
		if p == "/v1/messages" {
			t.Errorf("the coordinator's API got a model request: %v", coordPaths)
			break
		}
	}
	if len(coordPaths) == 0 {
		t.Errorf("control: the coordinator's API log is empty (the launch probe is missing), so its silence shows nothing")
	}
	// The attempts' usage and cost reached the coordinator's run log.
	evs, err := eventlog.Read(filepath.Join(repo, ".zerg", "runs", "fleet", "events.jsonl"))
	must(t, err)
	costed := 0
	for _, e := range evs {
		var af runstate.AttemptFinished
		if e.Type == runstate.EvAttemptFinished && e.Decode(&af) == nil && af.Class == outcome.Success {
			if af.CostUSD > 0 && af.Tokens > 0 {
				costed++
			} else {
				t.Errorf("%s attempt %d succeeded with cost $%v and %d tokens in the run log", e.Task, e.Attempt, af.CostUSD, af.Tokens)
			}
		}
	}
	if costed < tasks {
		t.Errorf("%d successful attempts carry a cost, want %d", costed, tasks)
	}
	// The agent's key is in no file it wrote (workers' state, streams,
	// audit); control: the same search finds a planted copy.
	if found := grepTree(t, dirs[0], agentKey); len(found) > 0 {
		t.Errorf("agent a1's key is in %v", found)
	}
	planted := filepath.Join(dirs[0], "planted")
	must(t, os.WriteFile(planted, []byte(agentKey), 0o600))
	if found := grepTree(t, dirs[0], agentKey); len(found) != 1 {
		t.Errorf("control: the search found %v, want the planted copy", found)
	}
	if testing.Verbose() {
		t.Logf("rush:\n%s\na1:\n%s\na2:\n%s", rush.output(), a1.output(), a2.output())
	}
}
