package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/zergrush/zerg/internal/cluster"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"

	"github.com/zergrush/zerg/e2e/e2ebin"
)

// externalConf is what the external server is told: where it listens, its
// file store, and its users (name → password; cluster.CoordinatorUser is
// the coordinator, with every permission, the others agents).
type externalConf struct {
	Host  string            `json:"host"`
	Port  int               `json:"port"`
	Store string            `json:"store"`
	Users map[string]string `json:"users"`
}

// externalServer runs a NATS server as an operator would set one up for
// zerg (docs/cluster.md, "Using an existing NATS server"): JetStream with a
// file store, the coordinator a user with every permission, each agent a
// user with cluster.AgentPermissions. It prints "ready", then "client USER"
// for each connection it accepts, and runs until it is killed.
func externalServer(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var c externalConf
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	var users []*server.User
	for name, pw := range c.Users {
		u := &server.User{Username: name, Password: pw}
		if name != cluster.CoordinatorUser {
			u.Permissions = cluster.AgentPermissions(name)
		}
		users = append(users, u)
	}
	ns, err := server.NewServer(&server.Options{ServerName: "external", Host: c.Host, Port: c.Port,
		JetStream: true, StoreDir: c.Store, Users: users, NoSigs: true, NoLog: true})
	if err != nil {
		return err
	}
	ns.Start()
	if !ns.ReadyForConnections(10*time.Second) || !ns.JetStreamEnabled() {
		return fmt.Errorf("not ready with JetStream on %s within 10s", c.Store)
	}
	fmt.Println("ready")
	seen := map[uint64]bool{}
	for {
		if cz, err := ns.Connz(&server.ConnzOptions{Username: true}); err == nil {
			for _, ci := range cz.Conns {
				// A connection still in its handshake has no user yet:
				// it is listed once it has one (a loaded machine once
				// showed a1's reconnection as "client " for good).
				if !seen[ci.Cid] && ci.AuthorizedUser != "" {
					seen[ci.Cid] = true
					fmt.Printf("client %s\n", ci.AuthorizedUser)
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// clients are the users the server's output says connected.
func clients(out string) map[string]bool {
	got := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if u, ok := strings.CutPrefix(l, "client "); ok {
			got[u] = true
		}
	}
	return got
}

func password(t *testing.T) string {
	b := make([]byte, 32)
	_, err := rand.Read(b)
	must(t, err)
	return hex.EncodeToString(b)
}

// TestClusterExternalServerRestart: cluster.url points at a NATS server zerg
// does not embed (its own process, JetStream file store); it is SIGKILLed
// while an agent runs the slow task and started again on the same store.
// The coordinator and the agents reconnect to it and the run completes, each
// task merged exactly once.
func TestClusterExternalServerRestart(t *testing.T) {
	net := newNetwork(t, 2)
	tmp := e2ebin.Traversable(t, t.TempDir())
	repo := filepath.Join(tmp, "repo")
	must(t, os.MkdirAll(repo, 0o755))
	url := "nats://" + net.server + ":4222"
	conf := externalConf{Host: net.server, Port: 4222, Store: filepath.Join(tmp, "nats-store"),
		Users: map[string]string{cluster.CoordinatorUser: password(t), "a1": password(t), "a2": password(t)}}
	credsFile := func(user string) string {
		f := filepath.Join(tmp, user+".creds.json")
		must(t, cluster.Creds{URL: url, User: user, Password: conf.Users[user]}.WriteCreds(f))
		return f
	}
	writeProject(t, repo, net.server, "subprocess",
		fmt.Sprintf("  url: %s\n  embed: false\n  creds: %s\n", url, credsFile(cluster.CoordinatorUser)))
	confFile := filepath.Join(tmp, "nats.json")
	b, _ := json.Marshal(conf)
	must(t, os.WriteFile(confFile, b, 0o600))
	self, err := os.Executable()
	must(t, err)
	home := filepath.Join(tmp, "home")
	must(t, os.MkdirAll(home, 0o755))
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ZERG_CLAUDE=" + claudeBin, "NO_COLOR=1", "LANG=C.UTF-8"}
	startServer := func() *proc {
		p := startBin(t, net.coord, tmp, append(append([]string{}, base...), "ZERG_E2E_NATS_SERVER="+confFile), self)
		p.waitFor(t, "ready", 20*time.Second)
		return p
	}
	first := startServer()

	mock := start(t, net.coord, repo, base, "mockapi", "serve", "--scenario", filepath.Join(repo, ".zerg", "specs", "fleet", "scenario.yaml"))
	mock.waitFor(t, "http://", 10*time.Second)
	apiURL := strings.TrimSpace(strings.SplitN(mock.output(), "\n", 2)[0])
	var agents []*proc
	for i, ns := range net.agents {
		name := fmt.Sprintf("a%d", i+1)
		dir := filepath.Join(tmp, "agent-"+name)
		must(t, os.MkdirAll(dir, 0o755))
		agents = append(agents, start(t, ns, tmp, base, "agent", "--join", url, "--creds", credsFile(name), "--dir", dir, "--workers", "3"))
	}
	env := append(append([]string{}, base...), "ANTHROPIC_API_KEY="+fakeKey(), "ANTHROPIC_BASE_URL="+apiURL,
		"ZERG_WORKSPACES="+filepath.Join(tmp, "workspaces"))
	rush := start(t, net.coord, repo, env, "rush", "fleet", "--plain", "--yes", "--no-check")

	// Kill the server while the slow task runs on an agent.
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(agents[0].output()+agents[1].output(), "runs L1-t1 attempt 1") {
		if time.Now().After(deadline) || rush.exited() {
			t.Fatalf("no agent took L1-t1:\nrush:\n%s\nserver:\n%s\nagents:\n%s\n%s", rush.output(), first.output(), agents[0].output(), agents[1].output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	// Control: all three were the first server's clients, so the second's
	// list is a reconnection, not the output of a server nobody left.
	if c := clients(first.output()); !c[cluster.CoordinatorUser] || !c["a1"] || !c["a2"] {
		t.Errorf("control: the first server did not list the coordinator and both agents as clients:\n%s", first.output())
	}
	must(t, syscall.Kill(-first.cmd.Process.Pid, syscall.SIGKILL))
	<-first.done
	if ws, ok := first.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the server did not die of SIGKILL: %v", first.cmd.ProcessState)
	}
	if rush.exited() {
		t.Fatalf("the rush ended before the server was killed:\n%s", rush.output())
	}
	time.Sleep(3 * time.Second)
	second := startServer()

	select {
	case <-rush.done:
	case <-time.After(4 * time.Minute):
		t.Fatalf("the rush did not end within 4 minutes of the restart:\n%s\nagents:\n%s\n%s", rush.output(), agents[0].output(), agents[1].output())
	}
	if code := rush.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(rush.output(), fmt.Sprintf("tasks: %d of %d merged", tasks, tasks)) {
		t.Fatalf("rush exit %d:\n%s\nagents:\n%s\n%s", code, rush.output(), agents[0].output(), agents[1].output())
	}
	if c := clients(second.output()); !c[cluster.CoordinatorUser] || !c["a1"] || !c["a2"] {
		t.Errorf("the restarted server's clients are %v; want the coordinator, a1 and a2 reconnected\n%s", c, second.output())
	}
	for i, a := range agents {
		if a.exited() {
			t.Errorf("agent a%d exited with the server:\n%s", i+1, a.output())
		}
	}
	evs, err := eventlog.Read(filepath.Join(repo, ".zerg", "runs", "fleet", "events.jsonl"))
	must(t, err)
	if problems := mergedOnce(evs, git(t, repo, "log", "--format=%(trailers:key=Task-Id,valueonly)", run.IntegrationBranch("fleet"))); len(problems) > 0 {
		t.Errorf("%s", strings.Join(problems, "\n"))
	}
	// The restart is the infrastructure's: no attempt is charged to its
	// task for it (a lease the coordinator did not see after the restart
	// once had the tunnel refuse the worker, judged a forged result).
	for _, e := range evs {
		var af runstate.AttemptFinished
		if e.Type == runstate.EvAttemptFinished && e.Decode(&af) == nil && af.Class != outcome.Success && af.Class != outcome.Infra {
			t.Errorf("%s attempt %d finished %s/%s: the restart was charged to the task", e.Task, e.Attempt, af.Class, af.Reason)
		}
	}
	if testing.Verbose() {
		t.Logf("rush:\n%s", rush.output())
		for i, a := range agents {
			t.Logf("agent a%d:\n%s", i+1, a.output())
		}
	}
}
