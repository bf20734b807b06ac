package cliprobe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/gateway"
)

// The unit tier starts no real CLI: this test binary, run under the name
// claude, stands in for one. It sends one Messages request the way the
// environment tells it (FAKE_BETAS, FAKE_MAX_TOKENS, the model its alias
// resolves to) and prints a stream like the CLI's, with an event of a
// type the driver does not know.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "claude" {
		os.Exit(fakeCLI(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeCLI(args []string) int {
	if len(args) == 1 && args[0] == "--version" {
		fmt.Println("2.1.400 (Claude Code)")
		return 0
	}
	model := ""
	for i, a := range args {
		if a == "--model" && i+1 < len(args) {
			model = args[i+1]
		}
	}
	if os.Getenv("FAKE_SILENT") != "" {
		return 1
	}
	resolved := map[string]string{"sonnet": "claude-sonnet-5-5", "haiku": "claude-haiku-5-5", "mythos": "claude-mythos-1"}[model]
	body := fmt.Sprintf(`{"model":%q,"max_tokens":%s,"messages":[{"role":"user","content":"x"}],"new_field":1}`, resolved, os.Getenv("FAKE_MAX_TOKENS"))
	req, _ := http.NewRequest(http.MethodPost, os.Getenv("ANTHROPIC_BASE_URL")+"/v1/messages", strings.NewReader(body))
	req.Header.Set("x-api-key", os.Getenv("ANTHROPIC_API_KEY"))
	req.Header.Set("anthropic-beta", os.Getenv("FAKE_BETAS"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if side := os.Getenv("FAKE_SIDE_MODEL"); side != "" && resp.StatusCode == 200 {
		// A side request of another model (a summary, a classifier).
		req, _ := http.NewRequest(http.MethodPost, os.Getenv("ANTHROPIC_BASE_URL")+"/v1/messages",
			strings.NewReader(fmt.Sprintf(`{"model":%q,"max_tokens":100,"messages":[{"role":"user","content":"x"}]}`, side)))
		req.Header.Set("x-api-key", os.Getenv("ANTHROPIC_API_KEY"))
		if r, err := http.DefaultClient.Do(req); err == nil {
			r.Body.Close()
		}
	}
	fmt.Println(`{"type":"system","subtype":"init","session_id":"s","model":"` + resolved + `"}`)
	fmt.Println(`{"type":"system","subtype":"turn_meter_2027"}`)
	if resp.StatusCode != 200 {
		msg, _ := json.Marshal(fmt.Sprintf("API Error: %d %s", resp.StatusCode, data))
		fmt.Printf(`{"type":"result","subtype":"success","is_error":true,"api_error_status":%d,"result":%s,"session_id":"s"}`+"\n", resp.StatusCode, msg)
		return 1
	}
	fmt.Println(`{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s","num_turns":1}`)
	return 0
}

// fakeBinary is this test binary under the name claude.
func fakeBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

func probe(t *testing.T, env map[string]string, policy gateway.Policy, models ...string) *Report {
	t.Helper()
	w := claude.Spec{Binary: fakeBinary(t), FallbackModel: "haiku", SetEnv: env, Hook: claude.HookSpec{Disabled: true}}
	rep, err := Run(context.Background(), Config{Worker: w, Models: models, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A release the gateway takes: what it sent is reported per model (the
// id its alias resolved to, its max_tokens, its betas), the unreviewed
// beta and field are named, the unknown event counted.
func TestProbeReportsWhatTheCLISends(t *testing.T) {
	env := map[string]string{"FAKE_BETAS": "claude-code-20250219,future-2027-01-01", "FAKE_MAX_TOKENS": "200000"}
	rep := probe(t, env, gateway.Policy{}, "sonnet", "mythos", "sonnet")
	if rep.Version != "2.1.400" || len(rep.Models) != 2 {
		t.Fatalf("report %+v", rep)
	}
	if m, r := rep.Refusal(); r != nil {
		t.Fatalf("%s refused: %+v", m.Model, r)
	}
	if m, why := rep.Problem(); why != "" {
		t.Fatalf("%s: %s", m.Model, why)
	}
	if got := fmt.Sprint(rep.Resolved()); got != "map[mythos:[claude-mythos-1] sonnet:[claude-sonnet-5-5]]" {
		t.Errorf("resolved %s", got)
	}
	if rep.MaxTokens != 200000 || strings.Join(rep.Betas, ",") != "claude-code-20250219,future-2027-01-01" {
		t.Errorf("max_tokens %d, betas %v", rep.MaxTokens, rep.Betas)
	}
	if strings.Join(rep.Unreviewed, ",") != "beta future-2027-01-01,field new_field" {
		t.Errorf("unreviewed %v", rep.Unreviewed)
	}
	if rep.UnknownEvents != 2 || rep.Events["system/init"] != 2 || rep.Events["result/success"] != 2 {
		t.Errorf("events %v, %d unknown", rep.Events, rep.UnknownEvents)
	}
}

// What the run's settings refuse of the CLI's own request is the probe's
// verdict, with the setting and the fix: a cap below what it asks for, a
// beta under gateway.strict. A CLI that sends nothing is a problem, not a
// pass.
func TestProbeFindsWhatTheGatewayRefuses(t *testing.T) {
	env := map[string]string{"FAKE_BETAS": "future-2027-01-01", "FAKE_MAX_TOKENS": "128000"}
	for _, tc := range []struct {
		name   string
		policy gateway.Policy
		env    map[string]string
		reason string
		fix    string
	}{
		{"max_tokens", gateway.Policy{MaxTokens: 64000}, env, "above the cap of 64000 (gateway.max_tokens)", "at least 128000"},
		{"strict", gateway.Policy{Strict: true}, env, `"future-2027-01-01" is not one zerg has reviewed (gateway.strict)`, `add "future-2027-01-01" to gateway.betas`},
		{"a side request of a model outside the policy", gateway.Policy{}, map[string]string{"FAKE_SIDE_MODEL": "claude-opus-5-5", "FAKE_MAX_TOKENS": "1000"},
			`model "claude-opus-5-5" is not this task's (sonnet or haiku)`, "models.fallback"},
		{"a denied family", gateway.Policy{}, map[string]string{"FAKE_BETAS": "mcp-client-2025-04-04", "FAKE_MAX_TOKENS": "1000"}, "reaches past the sandbox", "gateway.betas"},
	} {
		rep := probe(t, tc.env, tc.policy, "sonnet")
		m, r := rep.Refusal()
		if r == nil || !strings.Contains(r.Reason, tc.reason) || !strings.Contains(r.Fix, tc.fix) || m.Model != "sonnet" {
			t.Errorf("%s: refusal %+v, want %q fixed by %q", tc.name, r, tc.reason, tc.fix)
		}
	}
	// The control: the same CLI with the cap it asks for passes.
	if _, r := probe(t, env, gateway.Policy{MaxTokens: 128000}, "sonnet").Refusal(); r != nil {
		t.Errorf("control: refused %+v", r)
	}
	silent := probe(t, map[string]string{"FAKE_SILENT": "1"}, gateway.Policy{}, "sonnet")
	if _, why := silent.Problem(); !strings.Contains(why, "sent no request") {
		t.Errorf("a CLI that sent nothing: problem %q", why)
	}
}
