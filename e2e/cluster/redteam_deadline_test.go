package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zergrush/zerg/e2e/e2ebin"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cluster"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/run"
)

// The red team's rogue agent: genuine credentials of its own, it takes
// attempts and keeps them without working on them. In the red team's
// round it held all three it could for 75 s with JetStream in-progress acks
// (stall_timeout 30 s, ack_wait 5 s), the coordinator revoked nothing and
// its journal never named it. Now the coordinator hands attempts out and
// takes them back itself.

// rogueHolds is how many attempts the rogue holds; the first
// rogueSilent it names in no heartbeat, the others it names with no
// progress.
const (
	rogueHolds  = 3
	rogueSilent = 2
)

// holdAttempts is the rogue (the test binary again, in an agent's
// namespace): it claims rogueHolds attempts, names some in its heartbeat
// (phase preparing, no events: no progress) and none of the others, waits
// until the coordinator's journal (a file on the shared disk) records each
// taken back, then publishes a successful result for each: a late result
// the coordinator must refuse.
func holdAttempts(file, url, journal string) error {
	creds, err := cluster.ReadCreds(file)
	if err != nil {
		return err
	}
	creds.URL = url
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The embedded server starts with the run's first attempt.
	nc, err := cluster.Connect(ctx, creds)
	for err != nil && ctx.Err() == nil {
		time.Sleep(500 * time.Millisecond)
		nc, err = cluster.Connect(ctx, creds)
	}
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	caps := cluster.Capabilities{Mode: "subprocess"}
	var mu sync.Mutex
	var held []*cluster.Claimed
	var wg sync.WaitGroup
	for range rogueHolds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c, err := cluster.Claim(ctx, nc, creds.User, caps, nil); err == nil {
				mu.Lock()
				held = append(held, c)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(held) != rogueHolds {
		return fmt.Errorf("claimed %d attempts, want %d", len(held), rogueHolds)
	}
	for i, c := range held {
		fmt.Printf("holds %s delivery %d (%s)\n", c.Attempt.ID, c.Lease.Delivery, map[bool]string{true: "silent", false: "named, no progress"}[i < rogueSilent])
	}
	named := held[rogueSilent:]
	hb, err := cluster.StartHeartbeat(ctx, js, creds.User, 0, func() cluster.Heartbeat {
		h := cluster.Heartbeat{Capabilities: caps, Workers: rogueHolds, Progress: map[string]cluster.LeaseProgress{}}
		for _, c := range named {
			h.Running = append(h.Running, c.Lease)
			h.Progress[c.Attempt.ID] = cluster.LeaseProgress{Phase: cluster.PhasePreparing}
		}
		return h
	})
	if err != nil {
		return err
	}
	defer hb.Stop(context.Background())
	for {
		// One journal line must say both: the attempt's id is in its
		// lease's line too, long before it is taken back.
		b, _ := os.ReadFile(journal)
		taken := 0
		for _, c := range held {
			for line := range strings.Lines(string(b)) {
				if strings.Contains(line, `"kind":"lease_taken_back"`) && strings.Contains(line, `"attempt":"`+c.Attempt.ID+`"`) {
					taken++
					break
				}
			}
		}
		if taken == len(held) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d attempts taken back before the rogue gave up", taken, len(held))
		case <-time.After(200 * time.Millisecond):
		}
	}
	rep, _ := json.Marshal(driver.ClusterReport{Class: outcome.Success, Reason: outcome.ReasonCompleted,
		Worker: claude.Outcome{Class: outcome.Success, Reason: outcome.ReasonCompleted}, Verified: true})
	for _, c := range held {
		if err := cluster.PublishResult(ctx, js, &cluster.Result{Lease: c.Lease, Outcome: rep}); err != nil {
			return err
		}
		fmt.Printf("sent a late result for %s\n", c.Attempt.ID)
	}
	return nil
}

// TestRedTeamClusterRogueHolder: a rogue agent with genuine credentials
// holds three attempts, two named in no heartbeat and one named with no
// progress (ack_wait 5 s, stall_timeout 20 s). Each is taken back and
// queued again under a new id; the journal names the rogue for each; zerg
// status shows the take-back; an honest agent that joins afterwards
// delivers every task once; the rogue's late results are refused. The
// control: the rogue did get the attempts (the journal's leases name it).
// Without the coordinator's deadline (checked by disabling it) the rush
// never ends and the test fails on the take-backs.
func TestRedTeamClusterRogueHolder(t *testing.T) {
	nw := newNetwork(t, 2)
	tmp := e2ebin.Traversable(t, t.TempDir())
	repo := filepath.Join(tmp, "repo")
	must(t, os.MkdirAll(repo, 0o755))
	writeProject(t, repo, nw.server, "subprocess", "")
	// The stall timeout is above the slow task's 12 s answer.
	cfgFile := filepath.Join(repo, ".zerg", "config.yaml")
	cfg, err := os.ReadFile(cfgFile)
	must(t, err)
	must(t, os.WriteFile(cfgFile, append(cfg, []byte("heartbeat:\n  stall_timeout: 20s\n")...), 0o644))
	git(t, repo, "commit", "-q", "-am", "stall timeout")
	home := filepath.Join(tmp, "home")
	must(t, os.MkdirAll(home, 0o755))
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ZERG_CLAUDE=" + claudeBin, "NO_COLOR=1", "LANG=C.UTF-8"}
	join := "tls://" + nw.server + ":4222"
	honestCreds, rogueCreds := filepath.Join(tmp, "a1.json"), filepath.Join(tmp, "rogue.json")
	issueCreds(t, repo, base, "a1", honestCreds)
	issueCreds(t, repo, base, "rogue", rogueCreds)
	journal := filepath.Join(repo, ".zerg", "runs", "fleet", "cluster.jsonl")

	apiURL := startMockAPI(t, nw.coord, repo, base, "--scenario", filepath.Join(repo, ".zerg", "specs", "fleet", "scenario.yaml"))
	env := append(append([]string{}, base...), "ANTHROPIC_API_KEY="+fakeKey(), "ANTHROPIC_BASE_URL="+apiURL,
		"ZERG_WORKSPACES="+filepath.Join(tmp, "workspaces"))
	rush := start(t, nw.coord, repo, env, "rush", "fleet", "--plain", "--yes", "--no-check")

	self, err := os.Executable()
	must(t, err)
	rogue := startBin(t, nw.agents[1], tmp, append(append([]string{}, base...), "ZERG_E2E_ROGUE_HOLD="+rogueCreds,
		"ZERG_E2E_ROGUE_URL="+join, "ZERG_E2E_ROGUE_JOURNAL="+journal), self)
	rogue.waitFor(t, "holds ", 90*time.Second)

	// The silent leases are taken back after ack_wait; with no other agent
	// yet, their attempts wait, and status says from whom they were taken.
	silentTaken := func() int {
		n := 0
		if _, err := os.Stat(journal); err != nil {
			return 0
		}
		for _, r := range readJournal(t, journal) {
			if r["kind"] == "lease_taken_back" && r["agent"] == "rogue" && strings.Contains(fmt.Sprint(r["why"]), "cluster.ack_wait") {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(60 * time.Second)
	for silentTaken() < rogueSilent {
		if time.Now().After(deadline) || rush.exited() {
			t.Fatalf("the silent leases were not taken back within 60 s (ack_wait 5 s):\nrush:\n%s\nrogue:\n%s", rush.output(), rogue.output())
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Run("status shows the take-back", func(t *testing.T) {
		cmd := exec.Command(zergBin, "status", "fleet")
		cmd.Dir, cmd.Env = repo, base
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), "taken back from agent rogue") {
			t.Errorf("status does not show the take-back:\n%s", out)
		}
	})

	agentDir := filepath.Join(tmp, "agent1")
	must(t, os.MkdirAll(agentDir, 0o755))
	honest := start(t, nw.agents[0], tmp, base, "agent", "--join", join, "--creds", honestCreds, "--dir", agentDir, "--workers", "3")
	select {
	case <-rush.done:
	case <-time.After(4 * time.Minute):
		t.Fatalf("the rush did not end within 4 minutes:\n%s\nrogue:\n%s\nagent:\n%s", rush.output(), rogue.output(), honest.output())
	}
	if code := rush.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(rush.output(), fmt.Sprintf("tasks: %d of %d merged", tasks, tasks)) {
		t.Fatalf("rush exit %d:\n%s\nrogue:\n%s\nagent:\n%s", code, rush.output(), rogue.output(), honest.output())
	}
	select {
	case <-rogue.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the rogue did not see its attempts taken back:\n%s", rogue.output())
	}
	if testing.Verbose() {
		t.Logf("rush:\n%s\nrogue:\n%s\nagent:\n%s", rush.output(), rogue.output(), honest.output())
	}

	recs := readJournal(t, journal)
	leases, taken, stalls, refused := 0, map[string]bool{}, 0, map[string]bool{}
	for _, r := range recs {
		if r["agent"] != "rogue" {
			continue
		}
		switch r["kind"] {
		case "lease":
			leases++
		case "lease_taken_back":
			if r["queued_as"] == nil || r["queued_as"] == r["attempt"] {
				t.Errorf("taken back without a new id: %v", r)
			}
			taken[r["attempt"].(string)] = true
			if strings.Contains(fmt.Sprint(r["why"]), "heartbeat.stall_timeout") {
				stalls++
			}
		case "report_refused":
			if r["what"] == "a result" {
				refused[r["attempt"].(string)] = true
			}
		case "result_accepted":
			t.Errorf("a result of the rogue was accepted: %v", r)
		}
	}
	// Control: the rogue got the attempts it says it holds.
	if leases != rogueHolds || strings.Count(rogue.output(), "holds ") != rogueHolds {
		t.Fatalf("control: the journal has %d leases of the rogue, want %d:\n%s", leases, rogueHolds, rogue.output())
	}
	if len(taken) != rogueHolds || stalls != rogueHolds-rogueSilent {
		t.Errorf("taken back from the rogue: %d attempts (%d for no progress), want %d (%d):\n%v", len(taken), stalls, rogueHolds, rogueHolds-rogueSilent, recs)
	}
	if len(refused) != rogueHolds {
		t.Errorf("the rogue's late results refused: %d, want %d", len(refused), rogueHolds)
	}
	evs, err := eventlog.Read(filepath.Join(repo, ".zerg", "runs", "fleet", "events.jsonl"))
	must(t, err)
	if problems := mergedOnce(evs, git(t, repo, "log", "--format=%(trailers:key=Task-Id,valueonly)", run.IntegrationBranch("fleet"))); len(problems) > 0 {
		t.Errorf("%s", strings.Join(problems, "\n"))
	}
}
