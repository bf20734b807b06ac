package rush

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/mockapi"
)

// TestGatewayRefusesNothingRealWorkersSend: the gateway's policy must not
// refuse what a real worker's CLI sends. The 1,660 real tool calls of the
// corpus (internal/cli/testdata/toolcalls: 22 sessions of real Claude Code
// work in Go, Elixir, Python and JavaScript repositories) are replayed, one
// call a turn, by the scripted model to the real CLI, whose every request
// goes through a gateway with the policy of a sonnet task with a haiku
// fallback (and the default cap on max_tokens). Bash, Edit and Write are
// denied by permission rules, so nothing
// runs; each request still carries the history of every call and its
// result back, as a worker's does. The gateway must refuse none of them.
func TestGatewayRefusesNothingRealWorkersSend(t *testing.T) {
	t.Parallel()
	sessions := corpusSessions(t)
	var names []string
	for n := range sessions {
		names = append(names, n)
	}
	sort.Strings(names)

	dir := t.TempDir()
	var scTasks []map[string]any
	calls := 0
	for _, n := range names {
		var turns []map[string]any
		for _, c := range sessions[n] {
			turns = append(turns, map[string]any{"tools": []any{map[string]any{"name": c.Tool, "input": c.Input}}})
			calls++
		}
		turns = append(turns, map[string]any{"text": "done"})
		scTasks = append(scTasks, map[string]any{"name": n, "match": "Replay session " + n + ".", "turns": turns})
	}
	scJSON, _ := json.Marshal(map[string]any{"tasks": scTasks})
	sc, err := mockapi.ParseScenario(scJSON)
	if err != nil {
		t.Fatal(err)
	}
	srv := mockapi.NewServer(sc)
	upstream, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	sockDir, err := os.MkdirTemp("", "zerg-gwc-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	sock := filepath.Join(sockDir, "s")
	gw, err := gateway.Start(gateway.Config{Upstream: upstream, APIKey: "real-key-of-the-test-0123456789",
		Placeholder: "sk-ant-zerg-sandbox-placeholder",
		Policy:      gateway.Policy{Models: []string{"sonnet", "haiku"}, MaxTokens: gateway.DefaultMaxTokens}}, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	addr, stopForward, err := cliprobe.Forward(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer stopForward()

	settings := filepath.Join(dir, "settings.json")
	os.WriteFile(settings, []byte(`{"permissions":{"deny":["Bash","Edit","Write","NotebookEdit"]}}`), 0o644)
	start := time.Now()
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(2)
	var mu sync.Mutex
	turns := 0
	for _, n := range names {
		g.Go(func() error {
			ws := filepath.Join(dir, n)
			os.MkdirAll(ws, 0o755)
			cmd := exec.CommandContext(ctx, claudeBin, "-p", "Replay session "+n+".", "--output-format", "json",
				"--model", "sonnet", "--fallback-model", "haiku", "--max-turns", "400", "--tools", "Bash,Edit,Read,Write,Glob,Grep",
				"--permission-mode", "default", "--setting-sources", "", "--settings", settings, "--strict-mcp-config")
			cmd.Dir = ws
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "CLAUDE_CONFIG_DIR=" + filepath.Join(dir, n+"-config"),
				"ANTHROPIC_BASE_URL=http://" + addr, "ANTHROPIC_API_KEY=sk-ant-zerg-sandbox-placeholder",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_MAX_RETRIES=0",
				"CLAUDE_CODE_DISABLE_AUTO_MEMORY=1", "CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS=1"}
			out, err := cmd.Output()
			var res struct {
				Subtype  string `json:"subtype"`
				IsError  bool   `json:"is_error"`
				NumTurns int    `json:"num_turns"`
				Result   string `json:"result"`
			}
			if json.Unmarshal(out, &res) != nil || res.IsError || res.NumTurns < len(sessions[n]) {
				return fmt.Errorf("session %s: %v: %s", n, err, clipBytes(out, 600))
			}
			mu.Lock()
			turns += res.NumTurns
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Error(err)
	}
	st := gw.Stats()
	t.Logf("%d sessions, %d real tool calls, %d turns, %d requests through the gateway in %s: %d refused",
		len(names), calls, turns, st.Requests, time.Since(start).Round(time.Second), len(st.Refused)+st.RefusedOmitted)
	t.Logf("betas sent: %v; forwarded unreviewed: %v; largest max_tokens %d", st.Sent.Betas, st.Unreviewed, st.Sent.MaxTokens)
	for _, r := range st.Refused {
		t.Errorf("refused %s %s: %s", r.Method, r.Path, r.Reason)
	}
	if st.Requests < calls {
		t.Errorf("%d requests for %d calls: the replay did not run", st.Requests, calls)
	}
}

// corpusCall is one real tool call of the corpus.
type corpusToolCall struct {
	Session string         `json:"session"`
	Tool    string         `json:"tool"`
	Input   map[string]any `json:"input"`
}

// corpusSessions reads the corpus's calls by session, in order, with the
// project root placeholder made relative.
func corpusSessions(t *testing.T) map[string][]corpusToolCall {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "internal", "cli", "testdata", "toolcalls", "calls.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]corpusToolCall{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := strings.ReplaceAll(sc.Text(), "@WS@/", "")
		line = strings.ReplaceAll(line, "@WS@", ".")
		var c corpusToolCall
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		out[c.Session] = append(out[c.Session], c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func clipBytes(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
