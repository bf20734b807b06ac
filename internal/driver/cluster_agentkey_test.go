package driver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/cluster"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/outcome"
)

const agentOwnKey = "sk-ant-agent-own-key-9876543210"

// keyRecorder is a Messages API that records the key of each request.
func keyRecorder(t *testing.T, who string, keys chan<- string) *httptest.Server {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		keys <- who + ":" + req.Header.Get("X-Api-Key")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens": 3}`)
	}))
	t.Cleanup(api.Close)
	return api
}

// postCountTokens sends a worker's request (the placeholder key) to url
// through client.
func postCountTokens(t *testing.T, client *http.Client, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/v1/messages/count_tokens", strings.NewReader(`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("X-Api-Key", ClusterPlaceholderKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// With cluster.agent_key local, the agent's route for an attempt goes to
// its own upstream with its own key and never over the tunnel, and the
// coordinator serves that attempt no tunnel; control: a coordinator job's
// route goes over the tunnel to the coordinator's key.
func TestAgentKeyRoute(t *testing.T) {
	t.Parallel() // its own server and repository
	for _, agentKey := range []string{config.AgentKeyCoordinator, config.AgentKeyLocal} {
		t.Run(agentKey, func(t *testing.T) {
			keys := make(chan string, 8)
			coordAPI := keyRecorder(t, "coordinator", keys)
			agentAPI := keyRecorder(t, "agent", keys)
			r := newClusterRig(t, cluster.StreamsConfig{AckWait: 5 * time.Second, MaxDeliver: 3, HeartbeatTTL: time.Second}, coordAPI.URL)
			r.d.AgentKey = agentKey
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			a1 := r.agent("a1")
			a1.caps.LocalKey = true
			if err := r.d.start(context.Background()); err != nil {
				t.Fatal(err)
			}
			ch := r.launch(ctx, "T1")
			r.ready(a1)
			c := a1.claim(t)
			job, err := ParseClusterJob(c.Attempt.Spec)
			if err != nil {
				t.Fatal(err)
			}
			if job.LocalKey() != (agentKey == config.AgentKeyLocal) {
				t.Fatalf("the job says agent_key %q, the run %q", job.AgentKey, agentKey)
			}
			ag := &Agent{Name: a1.name, NC: a1.nc, Mode: config.ModeSubprocess, LocalKey: agentOwnKey, LocalUpstream: agentAPI.URL, Out: io.Discard}
			route, err := ag.route(job, c.Attempt.ID, func(string, map[string]any) error { return nil }, job.Policy.gateway())
			if err != nil {
				t.Fatal(err)
			}
			defer route.close()
			code, body := postCountTokens(t, http.DefaultClient, route.url)
			want := "coordinator:" + r.d.APIKey
			if agentKey == config.AgentKeyLocal {
				want = "agent:" + agentOwnKey
			}
			select {
			case k := <-keys:
				if k != want {
					t.Errorf("the worker's request reached %q, want %q", k, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("the worker's request reached no API: %d %s", code, body)
			}
			// The holder's own request on the tunnel: served for a
			// coordinator job, refused for a local one.
			tunnel := &http.Client{Transport: &cluster.Tunnel{NC: a1.nc, Subject: cluster.APISubject(a1.name, c.Attempt.ID), HeadTimeout: 10 * time.Second}}
			code, body = postCountTokens(t, tunnel, "http://x")
			if agentKey == config.AgentKeyLocal {
				if code != http.StatusForbidden {
					t.Errorf("the tunnel served a local run's attempt: %d %s", code, body)
				}
				if st := route.gw.Stats(); st.CountTokens != 1 {
					t.Errorf("the agent's gateway recorded %d count_tokens requests, want 1", st.CountTokens)
				}
			} else if code != http.StatusOK {
				t.Errorf("the tunnel refused the holder of a coordinator job: %d %s", code, body)
			}
			select {
			case k := <-keys:
				if agentKey == config.AgentKeyLocal {
					t.Errorf("a request on the tunnel of a local run reached %q", k)
				}
			case <-time.After(300 * time.Millisecond):
				if agentKey != config.AgentKeyLocal {
					t.Error("the tunnel's request reached no API")
				}
			}
			cancel()
			wait(t, ch)
		})
	}
}

// An agent without a key of its own refuses a local job, and the attempt
// goes back to the queue for another agent; control: with a key (or for a
// coordinator job) it takes it.
func TestAgentWithoutKeyRefusesLocalJob(t *testing.T) {
	t.Parallel() // its own server and repository
	local := ClusterJob{Mode: config.ModeSubprocess, AgentKey: config.AgentKeyLocal}
	coordinator := ClusterJob{Mode: config.ModeSubprocess}
	keyless := &Agent{Mode: config.ModeSubprocess}
	keyed := &Agent{Mode: config.ModeSubprocess, LocalKey: agentOwnKey}
	if why := keyless.refusal(local); !strings.Contains(why, "ANTHROPIC_API_KEY") {
		t.Errorf("a keyless agent's answer to a local job: %q", why)
	}
	if why := keyed.refusal(local); why != "" {
		t.Errorf("an agent with a key refused a local job: %s", why)
	}
	if why := keyless.refusal(coordinator); why != "" {
		t.Errorf("a keyless agent refused a coordinator job: %s", why)
	}

	// Through the coordinator: the refused attempt is delivered again.
	r := newClusterRig(t, cluster.StreamsConfig{AckWait: 20 * time.Second, MaxDeliver: 3, HeartbeatTTL: time.Second}, "")
	r.d.AgentKey = config.AgentKeyLocal
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a1, a2 := r.agent("a1"), r.agent("a2")
	// a1 says it has a key (the coordinator hands out what an agent says
	// it runs); the Agent that runs the job has none.
	a1.caps.LocalKey, a2.caps.LocalKey = true, true
	if err := r.d.start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ch := r.launch(ctx, "T2")
	r.ready(a1, a2)
	c := a1.claim(t)
	var out bytes.Buffer
	ag := &Agent{Name: a1.name, NC: a1.nc, Mode: config.ModeSubprocess, Out: &out, RefusalPause: 100 * time.Millisecond}
	ag.runOne(ctx, c)
	if !strings.Contains(out.String(), "refuses "+c.Attempt.ID) || !strings.Contains(out.String(), "ANTHROPIC_API_KEY") {
		t.Errorf("the agent's line: %q", out.String())
	}
	again := a2.claim(t)
	if again.Attempt.ID != c.Attempt.ID || again.Lease.Delivery != 2 {
		t.Errorf("after the refusal the coordinator delivered %s (delivery %d), want %s again", again.Attempt.ID, again.Lease.Delivery, c.Attempt.ID)
	}
	cancel()
	wait(t, ch)
}

// A local attempt's verdict, usage and cost are its agent's report's, and
// its cost counts against the run's budget here; an account error of the
// agent's key is not the run's. Control: the report's verdict stands as is
// otherwise.
func TestLocalVerdict(t *testing.T) {
	meter := gateway.NewMeter(10, 1)
	rep := ClusterReport{Class: outcome.Success, Reason: outcome.ReasonCompleted}
	rep.Worker.CostUSD = 0.25
	v := localVerdict(rep, meter)
	if v.Class != outcome.Success || v.Worker.CostUSD != 0.25 || meter.Spent() != 1.25 {
		t.Errorf("verdict %+v, run spent %v; want success, $0.25, run $1.25", v, meter.Spent())
	}
	rep.Class, rep.Reason, rep.Detail = outcome.Account, "billing_error", "credit balance too low"
	if v := localVerdict(rep, nil); v.Class != outcome.Infra || !strings.Contains(v.Detail, "own key") {
		t.Errorf("an agent's account error: %+v", v)
	}
	if b := localBudget(gateway.Policy{TaskUSD: 5, Run: gateway.NewMeter(10, 8)}); b != 2 {
		t.Errorf("the agent's budget is %v, want the run's $2 left", b)
	}
	if b := localBudget(gateway.Policy{TaskUSD: 1, Run: gateway.NewMeter(10, 8)}); b != 1 {
		t.Errorf("the agent's budget is %v, want the task's $1", b)
	}
}
