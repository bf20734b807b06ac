package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/e2e/e2ebin"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/runstate"
)

// TestClusterAgentsOfTheWrongMode: a sandbox run whose agents were started
// without --mode (subprocess, the agent's default) can never have its
// attempts run. The rush says so, with the --mode to use, and stops
// launching instead of retrying for ever; the agents stay up (by design)
// and say they wait for a coordinator. Control: the agents joined and the
// coordinator heard their mode.
func TestClusterAgentsOfTheWrongMode(t *testing.T) {
	nw := newNetwork(t, 2)
	tmp := e2ebin.Traversable(t, t.TempDir())
	repo := filepath.Join(tmp, "repo")
	must(t, os.MkdirAll(repo, 0o755))
	writeProject(t, repo, nw.server, "sandbox", "")
	home := filepath.Join(tmp, "home")
	must(t, os.MkdirAll(home, 0o755))
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ZERG_CLAUDE=" + claudeBin, "NO_COLOR=1", "LANG=C.UTF-8"}
	join := "tls://" + nw.server + ":4222"
	apiURL := startMockAPI(t, nw.coord, repo, base, "--scenario", filepath.Join(repo, ".zerg", "specs", "fleet", "scenario.yaml"))
	var agents []*proc
	for i := range nw.agents {
		name := fmt.Sprintf("a%d", i+1)
		file := filepath.Join(tmp, name+".json")
		issueCreds(t, repo, base, name, file)
		dir := filepath.Join(tmp, "agent-"+name)
		must(t, os.MkdirAll(dir, 0o755))
		agents = append(agents, start(t, nw.agents[i], tmp, base, "agent", "--join", join, "--creds", file, "--dir", dir))
	}
	env := append(append([]string{}, base...), "ANTHROPIC_API_KEY="+fakeKey(), "ANTHROPIC_BASE_URL="+apiURL,
		"ZERG_WORKSPACES="+filepath.Join(tmp, "workspaces"))
	rush := start(t, nw.coord, repo, env, "rush", "fleet", "--plain", "--yes", "--no-check")
	select {
	case <-rush.done:
	case <-time.After(4 * time.Minute):
		t.Fatalf("the rush did not end within 4 minutes (it spins):\n%s", rush.output())
	}
	out := rush.output()
	if testing.Verbose() {
		t.Logf("rush:\n%s", out)
	}
	if code := rush.cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("the rush exited 0 with no agent able to run it:\n%s", out)
	}
	if !strings.Contains(out, "no joined agent can run this run's attempts") || !strings.Contains(out, "--mode sandbox") ||
		!strings.Contains(out, "the run needs mode sandbox and this agent runs subprocess") {
		t.Errorf("the rush does not say no agent can run it, nor which --mode to use:\n%s", out)
	}
	// It stopped launching: no task was started twice.
	evs, err := eventlog.Read(filepath.Join(repo, ".zerg", "runs", "fleet", "events.jsonl"))
	must(t, err)
	started := map[string]int{}
	for _, e := range evs {
		if e.Type == runstate.EvAttemptStarted {
			started[e.Task]++
		}
	}
	for task, n := range started {
		if n > 1 {
			t.Errorf("%s was started %d times: the run kept launching", task, n)
		}
	}
	// Control: both agents joined and the coordinator heard their mode.
	joined := 0
	for _, r := range readJournal(t, filepath.Join(repo, ".zerg", "runs", "fleet", "cluster.jsonl")) {
		if r["kind"] == "agent_joined" && r["mode"] == "subprocess" {
			joined++
		}
	}
	if joined != len(agents) || len(started) == 0 {
		t.Errorf("control: %d agents joined with mode subprocess (want %d), %d tasks started", joined, len(agents), len(started))
	}
	// The agents outlive the coordinator, and say what they wait for.
	for i, a := range agents {
		a.waitFor(t, "waiting for a coordinator", 30*time.Second)
		if a.exited() {
			t.Errorf("agent a%d exited with the coordinator:\n%s", i+1, a.output())
		}
	}
}
