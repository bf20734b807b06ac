// Package cliprobe learns what a Claude Code binary sends to the model API,
// the way zerg's workers run it: one real CLI turn per model, launched
// with the workers' flags, settings and environment, through a real
// gateway with the run's policy, against a local scripted model (no model
// cost, no network). It is zerg's launch check (a gateway that would
// refuse the CLI's own request stops the rush before any worker) and what
// `zerg doctor` and `make cli-compat` report of a release: the model ids
// its aliases resolve to, the betas, body fields and max_tokens it asks
// for, the stream events it prints. No worker can influence it: it runs
// before any worker starts, in a directory of its own, as zerg's own user,
// against zerg's own stub.
package cliprobe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/mockapi"
	"github.com/zergrush/zerg/internal/textx"
)

// Config is one probe.
type Config struct {
	// Worker is the workers' launch template: the binary, the hook, what
	// is passed of the environment (PassEnv, SetEnv), the fallback model,
	// --max-turns and --max-budget-usd. Its API says only the credential's
	// shape (a subscription token is sent as one); the probe's own
	// placeholder and gateway replace it.
	Worker claude.Spec
	// Models are the models to probe, each once (aliases or ids); empty:
	// Worker.Model.
	Models []string
	// Policy is the run's gateway policy; each probe adds its model and
	// the fallback, as an attempt's gateway does.
	Policy gateway.Policy
	// Scenario replaces the probe's scripted turn (make cli-compat runs a
	// longer session); nil: one Read of a file, then text.
	Scenario *mockapi.Scenario
	// Prompt is the prompt for Scenario; "" with the probe's own.
	Prompt string
	// Timeout bounds each model's turn; 0: DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout bounds one probe turn: the CLI starts in a second or two,
// the scripted model answers at once.
const DefaultTimeout = 90 * time.Second

// probePrompt is the probe's prompt, matched by its scenario.
const probePrompt = "zerg launch probe: read probe.txt, then say done."

// placeholder is the key the probe's CLI holds, as a sandbox's does.
const placeholder = "sk-ant-zerg-probe-placeholder"

// Report is what the probe saw.
type Report struct {
	Binary  string        `json:"binary"`
	Version string        `json:"version,omitempty"`
	Models  []ModelReport `json:"models"`
	// Betas, Fields and Events are the union over the models: the
	// anthropic-beta values, the top-level body fields, the stream events
	// ("type" or "type/subtype") with their counts.
	Betas  []string       `json:"betas"`
	Fields []string       `json:"fields"`
	Events map[string]int `json:"events"`
	// MaxTokens is the most a request asked for.
	MaxTokens int64 `json:"max_tokens"`
	// Unreviewed is what the gateway forwarded that zerg has not reviewed
	// ("beta x", "field y", "block z").
	Unreviewed []string `json:"unreviewed,omitempty"`
	// UnknownEvents counts stream events the driver does not know
	// (claude.KnownEvent): ignored, never fatal.
	UnknownEvents int `json:"unknown_events,omitempty"`
}

// ModelReport is one model's turn.
type ModelReport struct {
	Model string `json:"model"` // as configured: an alias or an id
	// Resolved is the model id the CLI sent for it (its first request's;
	// a later one may be the fallback's).
	Resolved  []string `json:"resolved"`
	MaxTokens int64    `json:"max_tokens"`
	Betas     []string `json:"betas"`
	// Refused is the gateway's first refusal of the CLI's requests, nil
	// when it refused none.
	Refused *gateway.Refusal `json:"refused,omitempty"`
	// Result is how the CLI's turn ended (its outcome's class and reason).
	Result string `json:"result"`
	// Problem is set when the turn did not run as a worker's would, for
	// another reason than a refusal (the CLI did not start, did not
	// finish, did not read the file): the probe says nothing then.
	Problem string `json:"problem,omitempty"`
}

// Refusal returns the first model whose requests the gateway refused, and
// the refusal; nil when none was.
func (r *Report) Refusal() (*ModelReport, *gateway.Refusal) {
	for i := range r.Models {
		if m := &r.Models[i]; m.Refused != nil {
			return m, m.Refused
		}
	}
	return nil, nil
}

// Problem returns the first model whose turn did not run, and why.
func (r *Report) Problem() (*ModelReport, string) {
	for i := range r.Models {
		if m := &r.Models[i]; m.Problem != "" {
			return m, m.Problem
		}
	}
	return nil, ""
}

// Resolved maps each probed model to the ids the CLI sent for it.
func (r *Report) Resolved() map[string][]string {
	out := map[string][]string{}
	for _, m := range r.Models {
		if len(m.Resolved) > 0 {
			out[m.Model] = slices.Clone(m.Resolved)
		}
	}
	return out
}

// Run probes the binary with each model, two at a time. An error is the
// probe's own failure (no scratch directory); a turn that did not run is
// the model's Problem, a refusal its Refused.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	models := dedupe(cfg.Models)
	if len(models) == 0 {
		models = []string{cfg.Worker.Model}
	}
	dir, err := os.MkdirTemp("", "zerg-probe-")
	if err != nil {
		return nil, fmt.Errorf("launch probe: %w", err)
	}
	defer os.RemoveAll(dir)
	rep := &Report{Binary: cfg.Worker.Binary, Events: map[string]int{}, Models: make([]ModelReport, len(models))}
	if v, err := claude.Version(ctx, cfg.Worker.Binary); err == nil {
		rep.Version = v
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, 2)
	for i, m := range models {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			mr, st, events, unknown := probeModel(ctx, cfg, m, filepath.Join(dir, fmt.Sprint(i)))
			mu.Lock()
			defer mu.Unlock()
			rep.Models[i] = mr
			for b := range st.Sent.Betas {
				rep.Betas = appendNew(rep.Betas, b)
			}
			for f := range st.Sent.Fields {
				rep.Fields = appendNew(rep.Fields, f)
			}
			for u := range st.Unreviewed {
				rep.Unreviewed = appendNew(rep.Unreviewed, u)
			}
			for k, n := range events {
				rep.Events[k] += n
			}
			rep.UnknownEvents += unknown
			rep.MaxTokens = max(rep.MaxTokens, st.Sent.MaxTokens)
		}()
	}
	wg.Wait()
	sort.Strings(rep.Betas)
	sort.Strings(rep.Fields)
	sort.Strings(rep.Unreviewed)
	return rep, nil
}

// probeModel runs one turn with model m in dir.
func probeModel(ctx context.Context, cfg Config, m, dir string) (ModelReport, gateway.Stats, map[string]int, int) {
	mr := ModelReport{Model: m}
	events := map[string]int{}
	unknown := 0
	fail := func(format string, a ...any) (ModelReport, gateway.Stats, map[string]int, int) {
		mr.Problem = fmt.Sprintf(format, a...)
		return mr, gateway.Stats{}, events, unknown
	}
	ws, attemptDir := filepath.Join(dir, "ws"), filepath.Join(dir, "attempt")
	for _, d := range []string{ws, attemptDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fail("%v", err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "probe.txt"), []byte("zerg\n"), 0o600); err != nil {
		return fail("%v", err)
	}

	sc, prompt := cfg.Scenario, cfg.Prompt
	if sc == nil {
		sc, prompt = probeScenario(), probePrompt
	}
	stub := mockapi.NewServer(sc)
	upstream, err := stub.Start("127.0.0.1:0")
	if err != nil {
		return fail("start the scripted model: %v", err)
	}
	defer stub.Close()

	sp := cfg.Worker
	sp.Model, sp.Workdir, sp.AttemptDir, sp.Prompt = m, ws, attemptDir, prompt
	sp.SessionID, sp.RunAs, sp.Isolation, sp.OnEvent = "", nil, nil, nil
	sp.MaxRetries, sp.IdleTimeout = 0, 0
	// Any model passes the probe's gateway, so that it learns what the CLI
	// resolves m to; the models are checked against the run's policy below.
	policy := cfg.Policy
	policy.Models = nil
	gwc := gateway.Config{Upstream: upstream, APIKey: "zerg-probe-key", Placeholder: placeholder, Policy: policy}
	sp.API = claude.APISettings{APIKey: placeholder}
	if cfg.Worker.API.Subscription() {
		// Sent the way a worker with a subscription sends it.
		gwc.APIKey, gwc.OAuthToken = "", "zerg-probe-token"
		sp.API = claude.APISettings{OAuthToken: placeholder}
	}
	gw, err := gateway.Start(gwc, filepath.Join(dir, "gw.sock"))
	if err != nil {
		return fail("start the gateway: %v", err)
	}
	defer gw.Close()
	addr, stopFwd, err := Forward(filepath.Join(dir, "gw.sock"))
	if err != nil {
		return fail("%v", err)
	}
	defer stopFwd()
	sp.API.BaseURL = "http://" + addr
	if sp.Hook.ZergBinary == "" {
		sp.Hook = claude.HookSpec{Disabled: true}
	} else {
		sp.Hook.AllowedPaths = nil
	}
	var evMu sync.Mutex
	sp.OnEvent = func(ev claude.Event) {
		if !ev.IsJSON() {
			return
		}
		k := ev.Type
		if ev.Subtype != "" {
			k += "/" + ev.Subtype
		}
		evMu.Lock()
		events[k]++
		if !claude.KnownEvent(ev.Type, ev.Subtype) {
			unknown++
		}
		evMu.Unlock()
	}

	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	run, err := claude.Start(tctx, sp)
	if err != nil {
		return fail("the CLI did not start: %v", err)
	}
	out := run.Wait()
	_ = gw.Close()
	st := gw.Stats()
	mr.Result = string(out.Class) + " " + out.Reason
	mr.MaxTokens, mr.Betas = st.Sent.MaxTokens, slices.Sorted(maps.Keys(st.Sent.Betas))
	if st.Sent.FirstModel != "" {
		mr.Resolved = []string{st.Sent.FirstModel}
	}
	for _, r := range st.Refused {
		if r.Kind == gateway.RefusedPolicy {
			mr.Refused = &r
			break
		}
	}
	if mr.Refused == nil {
		mr.Refused = checkModels(cfg.Policy, m, sp.FallbackModel, st.Sent)
	}
	evMu.Lock()
	defer evMu.Unlock()
	switch {
	case mr.Refused != nil:
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		mr.Problem = fmt.Sprintf("the CLI's turn did not end within %s", timeout)
	case st.Requests == 0:
		mr.Problem = fmt.Sprintf("the CLI sent no request to the model API (%s: %s)", mr.Result, textx.Clip(textx.OneLine(out.Detail), 200))
	case cfg.Scenario == nil && out.Class != "success":
		mr.Problem = fmt.Sprintf("the CLI's turn ended %s: %s", mr.Result, textx.Clip(textx.OneLine(out.Detail), 200))
	}
	return mr, st, events, unknown
}

// checkModels refuses, as an attempt's gateway would, a model the CLI
// sent that the run's policy for model m (and the fallback) does not
// allow, once m's own resolution (the first request's) is learnt.
func checkModels(p gateway.Policy, m, fallback string, sent gateway.Sent) *gateway.Refusal {
	p.Models = dedupe([]string{m, fallback})
	if sent.FirstModel != "" {
		p.Resolved = map[string][]string{m: {sent.FirstModel}}
	}
	for _, id := range slices.Sorted(maps.Keys(sent.Models)) {
		if !p.ModelAllowed(id) {
			return &gateway.Refusal{Kind: gateway.RefusedPolicy, Method: "POST", Path: gateway.MessagesPath, Status: 400, First: true,
				Reason: fmt.Sprintf("model %q is not this task's (%s)", id, strings.Join(p.Models, " or ")),
				Fix:    fmt.Sprintf("the CLI sends %q besides %s: set models.fallback (or the task's model) to it, or to an alias of its family", id, m)}
		}
	}
	return nil
}

// probeScenario is the probe's turn: one Read (so that a request carries
// a tool call and its result back, as a worker's do), then text.
func probeScenario() *mockapi.Scenario {
	sc, err := mockapi.ParseScenario([]byte(`{"usage": {"input_tokens": 10, "output_tokens": 2},
 "tasks": [{"name": "probe", "match": "zerg launch probe:", "turns": [
  {"tools": [{"name": "Read", "input": {"file_path": "probe.txt"}}]},
  {"text": "done"}]}]}`))
	if err != nil {
		panic(err) // a constant
	}
	return sc
}

// Forward listens on a loopback port and pipes each connection to the
// gateway's socket, as a sandbox's forwarder does: a CLI outside a sandbox
// reaches a gateway at the address it returns. stop closes the listener.
func Forward(sock string) (addr string, stop func(), _ error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("listen for the CLI: %w", err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("unix", sock)
				if err != nil {
					return
				}
				defer u.Close()
				go func() { _, _ = io.Copy(u, c) }()
				_, _ = io.Copy(c, u)
			}()
		}
	}()
	return ln.Addr().String(), func() { ln.Close(); wg.Wait() }, nil
}

func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			out = appendNew(out, s)
		}
	}
	return out
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
