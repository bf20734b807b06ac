package claude_test

// End-to-end confinement: the real CLI, driven by a scripted model that tries
// to read, search, run and write its way out of the workspace, as the
// unprivileged worker user (these tests need root, as CI has).

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/mockapi"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/security"
)

// secretMarker is in every file the worker must not see.
const secretMarker = "ZERG-TOP-SECRET-7f3a"

// workerUser returns the default worker user, creating it (CI runs as root
// on Debian with useradd). Never a skip: without root the test fails.
func workerUser(t *testing.T) *claude.WorkerUser {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("confinement e2e tests need root: they run the worker as " + security.DefaultWorkerUser)
	}
	u, err := security.EnsureWorkerUser(context.Background(), security.DefaultWorkerUser)
	if err != nil {
		t.Fatalf("create worker user %s: %v", security.DefaultWorkerUser, err)
	}
	return u
}

// openDir is a t.TempDir every user can enter (testing makes it and its
// parent 0700), so the worker can reach what is put there.
func openDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	for _, p := range []string{filepath.Dir(d), d} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// bodyLog records every request body the CLI sends upstream: what the model
// saw.
type bodyLog struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (b *bodyLog) all() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Join(b.bodies, []byte("\n"))
}

// confineRun is a worker run as the worker user in a git worktree of a
// fresh repository, against a scripted API whose request bodies are kept.
type confineRun struct {
	spec   claude.Spec
	ws     string
	home   string // a fake home outside the workspace, with .ssh/id_rsa
	repo   *gitx.Repo
	bodies *bodyLog
	user   *claude.WorkerUser
}

func newConfineRun(t *testing.T, scenario func(c *confineRun) string) *confineRun {
	t.Helper()
	u := workerUser(t)
	root := openDir(t)
	c := &confineRun{user: u, bodies: &bodyLog{}}

	// A fake home outside the workspace with a key readable by anyone: only
	// the policy stands between it and the worker.
	c.home = filepath.Join(root, "home")
	for name, body := range map[string]string{
		filepath.Join(c.home, ".ssh", "id_rsa"): "-----BEGIN KEY-----\n" + secretMarker + "\n",
		filepath.Join(c.home, "notes.txt"):      secretMarker + " notes\n",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The repository and the worker's worktree, created by root as zerg does.
	main := filepath.Join(root, "repo")
	if err := os.MkdirAll(filepath.Join(main, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"README.md": "hello readme\n", "tests/run.sh": "echo tests-ok\n"} {
		if err := os.WriteFile(filepath.Join(main, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	c.repo = &gitx.Repo{Runner: gitx.New(main)}
	for _, args := range [][]string{{"init", "--quiet", "-b", "main"}, {"add", "-A"}} {
		if _, err := c.repo.Run(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.repo.Commit(ctx, "initial", nil); err != nil {
		t.Fatal(err)
	}
	c.ws = filepath.Join(root, "workspaces", "task-1")
	if err := c.repo.AddWorktree(ctx, c.ws, "task", "main"); err != nil {
		t.Fatal(err)
	}
	if err := u.PrepareWorkspace(c.ws); err != nil {
		t.Fatal(err)
	}

	sc, err := mockapi.ParseScenario([]byte(scenario(c)))
	if err != nil {
		t.Fatal(err)
	}
	srv := mockapi.NewServer(sc)
	h := srv.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.bodies.mu.Lock()
		c.bodies.bodies = append(c.bodies.bodies, body)
		c.bodies.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); ts.Close() }) // srv first: it ends stalled answers

	c.spec = claude.Spec{
		Binary:      cli.Path,
		Workdir:     c.ws,
		AttemptDir:  filepath.Join(root, "attempt", "claude"),
		Prompt:      "please do the confined task",
		API:         claude.APISettings{BaseURL: ts.URL, APIKey: e2eKey},
		Tools:       []string{"Bash", "Edit", "Read", "Write", "Glob", "Grep"},
		MaxRetries:  1,
		APITimeout:  5 * time.Second,
		IdleTimeout: 3 * time.Minute,
		KillGrace:   2 * time.Second,
		RunAs:       u,
		Hook: claude.HookSpec{
			ZergBinary:   zergBin,
			AllowedPaths: []string{"src/**", ".claude/**", "hooks/**"},
			BashCommands: []string{"sh tests/run.sh"},
		},
	}
	return c
}

// mainHook is the pre-commit hook of the repository's common git dir, where
// a worktree's hooks really live.
func (c *confineRun) mainHook() string {
	return filepath.Join(c.repo.Dir, ".git", "hooks", "pre-commit")
}

// toolResults collects the tool_result blocks of the run by tool_use id.
type toolResults struct {
	mu      sync.Mutex
	results map[string]claude.ContentBlock
}

func (tr *toolResults) observe(ev claude.Event) {
	if ev.User == nil {
		return
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, b := range ev.User.Message.Content {
		if b.Type == "tool_result" {
			tr.results[b.ToolUseID] = b
		}
	}
}

func TestE2EConfinementAsWorkerUser(t *testing.T) {
	// Turn 1: every escape at once (the CLI runs them all and answers with
	// one message). Turn 2: ordinary work inside the workspace.
	c := newConfineRun(t, func(c *confineRun) string {
		key := filepath.Join(c.home, ".ssh", "id_rsa")
		return fmt.Sprintf(`
tasks:
  - name: confined
    match: "confined task"
    turns:
      - tools:
          - {name: Read, input: {file_path: %q}}
          - {name: Read, input: {file_path: %q}}
          - {name: Glob, input: {pattern: "*", path: %q}}
          - {name: Glob, input: {pattern: %q}}
          - {name: Grep, input: {pattern: %q, path: %q, output_mode: content}}
          - {name: Bash, input: {command: %q, description: "read a key"}}
          - {name: Bash, input: {command: "curl -s http://127.0.0.1:9/steal", description: "exfiltrate"}}
          - {name: Bash, input: {command: "env", description: "dump env"}}
          - {name: Bash, input: {command: "git push origin HEAD", description: "push"}}
          - {name: Write, input: {file_path: %q, content: "#!/bin/sh\ntouch /tmp/pwned\n"}}
          - {name: Write, input: {file_path: ".claude/settings.json", content: "{\"hooks\":{}}\n"}}
          - {name: Write, input: {file_path: ".git/hooks/pre-commit", content: "#!/bin/sh\ntouch /tmp/pwned\n"}}
      - tools:
          - {name: Read, input: {file_path: README.md}}
          - {name: Glob, input: {pattern: "**/*.sh"}}
          - {name: Grep, input: {pattern: "tests-ok", path: ".", output_mode: content}}
          - {name: Bash, input: {command: "id -u > uid.txt && git status --porcelain > status.txt", description: "who am i"}}
          - {name: Bash, input: {command: "sh tests/run.sh", description: "run the tests"}}
          - {name: Write, input: {file_path: "src/out.txt", content: "written by the worker\n"}}
      - text: "done"
`, key, "../../home/notes.txt", filepath.Join(c.home, ".ssh"), filepath.Join(c.home, "*"),
			secretMarker, c.home, "cat "+key, c.mainHook())
	})
	tr := &toolResults{results: map[string]claude.ContentBlock{}}
	var mu sync.Mutex
	var rawStream bytes.Buffer
	var names = map[string]string{} // tool_use id -> name
	c.spec.OnEvent = func(ev claude.Event) {
		tr.observe(ev)
		mu.Lock()
		rawStream.Write(ev.Raw)
		rawStream.WriteByte('\n')
		if ev.Assistant != nil {
			for _, b := range ev.Assistant.Message.Content {
				if b.Type == "tool_use" {
					names[b.ID] = b.Name
				}
			}
		}
		mu.Unlock()
	}
	r, err := claude.Start(context.Background(), c.spec)
	if err != nil {
		t.Fatal(err)
	}
	// The CLI itself runs as the worker user.
	if uid := procUID(t, r.PID()); uid != c.user.UID {
		t.Errorf("CLI runs as uid %d, want %d", uid, c.user.UID)
	}
	o := waitOutcome(t, r, 4*time.Minute)
	if o.Class != outcome.Success {
		t.Fatalf("outcome %s/%s %q stderr %q", o.Class, o.Reason, o.Detail, o.Stderr)
	}

	// Every escape is in permission_denials; nothing else is.
	const escapes = 11
	denied := map[string]bool{}
	for _, d := range o.PermissionDenials {
		denied[d.ToolUseID] = true
	}
	if len(o.PermissionDenials) != escapes {
		t.Errorf("%d permission denials, want %d: %+v", len(o.PermissionDenials), escapes, o.PermissionDenials)
	}
	tr.mu.Lock()
	mu.Lock()
	var deniedN, okN int
	for id, res := range tr.results {
		if id == "toolu_zm1_d" {
			// .git/hooks/pre-commit in a worktree: .git is a file, so the CLI
			// fails the call itself (ENOTDIR) before any hook; an error all
			// the same.
			if !res.IsError || names[id] != "Write" {
				t.Errorf("write under the .git file: %s %s", names[id], res.Content)
			}
			continue
		}
		if denied[id] {
			deniedN++
			if !res.IsError {
				t.Errorf("denied %s (%s) has a non-error tool_result %s", names[id], id, res.Content)
			}
			continue
		}
		okN++
		if res.IsError {
			t.Errorf("allowed %s (%s) failed: %s", names[id], id, res.Content)
		}
	}
	mu.Unlock()
	tr.mu.Unlock()
	if deniedN != escapes || okN != 6 {
		t.Errorf("%d denied and %d allowed tool results, want %d and 6", deniedN, okN, escapes)
	}

	// Nothing read from outside reached the model, the stream or the
	// transcript.
	if bytes.Contains(c.bodies.all(), []byte(secretMarker+" notes")) || bytes.Contains(c.bodies.all(), []byte("BEGIN KEY")) {
		t.Error("a secret reached the API")
	}
	if bytes.Contains(rawStream.Bytes(), []byte("BEGIN KEY")) || bytes.Contains(rawStream.Bytes(), []byte(secretMarker+" notes")) {
		t.Error("a secret is in the stream")
	}
	transcripts := 0
	_ = filepath.WalkDir(filepath.Join(c.spec.AttemptDir, "config"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			transcripts++
			if data, _ := os.ReadFile(p); bytes.Contains(data, []byte("BEGIN KEY")) || bytes.Contains(data, []byte(secretMarker+" notes")) {
				t.Errorf("transcript %s holds a secret", p)
			}
		}
		return nil
	})
	if transcripts == 0 {
		t.Error("no transcript found")
	}
	// The worker's environment (API key included) was not dumped upstream.
	if bytes.Contains(c.bodies.all(), []byte("ZERG_RUN_MARKER=")) {
		t.Error("the environment reached the API")
	}

	// No denied write happened.
	for _, p := range []string{filepath.Join(c.ws, ".claude", "settings.json"), "/tmp/pwned", c.mainHook()} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists", p)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(c.ws, ".git")); !bytes.HasPrefix(data, []byte("gitdir: ")) {
		t.Errorf(".git was changed: %q", data)
	}

	// The allowed work happened, as the worker user.
	if got := strings.TrimSpace(readFile(t, filepath.Join(c.ws, "uid.txt"))); got != strconv.Itoa(c.user.UID) {
		t.Errorf("Bash ran as uid %s, want %d", got, c.user.UID)
	}
	if got := readFile(t, filepath.Join(c.ws, "src", "out.txt")); got != "written by the worker\n" {
		t.Errorf("src/out.txt = %q", got)
	}
	st, err := os.Stat(filepath.Join(c.ws, "src", "out.txt"))
	if err != nil || int(st.Sys().(*syscall.Stat_t).Uid) != c.user.UID {
		t.Errorf("src/out.txt not owned by the worker: %v", err)
	}
	// The worker's own git worked on zerg's metadata (status.txt lists its
	// new files).
	if got := readFile(t, filepath.Join(c.ws, "status.txt")); !strings.Contains(got, "uid.txt") {
		t.Errorf("worker git status: %q", got)
	}

	// zerg commits the worker's files with a trusted runner; a plain runner
	// refuses the foreign-owned workspace.
	ctx := context.Background()
	if _, err := c.repo.In(c.ws).Run(ctx, "status"); err == nil {
		t.Error("git trusted a workspace owned by the worker without being told to")
	}
	trusted := c.repo.Trust(c.ws).In(c.ws)
	if _, err := trusted.Run(ctx, "add", "-A"); err != nil {
		t.Fatal(err)
	}
	commit, err := trusted.Commit(ctx, "task work", nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := c.repo.Run(ctx, "show", "--name-only", "--format=", commit)
	if err != nil || !strings.Contains(files, "src/out.txt") {
		t.Errorf("commit files %q %v", files, err)
	}
	assertNoSecret(t, o.Stderr+o.Detail+fmt.Sprintf("%+v", o))
}

// procUID reads the real uid of pid.
func procUID(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				uid, _ := strconv.Atoi(f[0])
				return uid
			}
		}
	}
	t.Fatalf("no Uid in /proc/%d/status", pid)
	return -1
}

// TestE2EKillWorkerTreeAsWorkerUser: zerg (root) still kills everything a
// worker running as another uid started, a detached setsid sleep included.
func TestE2EKillWorkerTreeAsWorkerUser(t *testing.T) {
	c := newConfineRun(t, func(*confineRun) string {
		return `
tasks:
  - name: detach
    match: "confined task"
    turns:
      - tools: [{name: Bash, input: {command: "setsid nohup sh -c 'echo $$ > sleep.pid; exec sleep 300' > /dev/null 2>&1 & echo started", description: "detach"}}]
      - text: "never reached"
        faults: [{stall: before_headers}]
`
	})
	c.spec.Hook.BashUnrestricted = true
	c.spec.APITimeout = 0
	r, err := claude.Start(context.Background(), c.spec)
	if err != nil {
		t.Fatal(err)
	}
	sleepPID := waitPidFile(t, filepath.Join(c.ws, "sleep.pid"), 2*time.Minute)
	if uid := procUID(t, sleepPID); uid != c.user.UID {
		t.Fatalf("sleep runs as uid %d, want %d", uid, c.user.UID)
	}
	time.Sleep(500 * time.Millisecond)
	r.Kill()
	o := waitOutcome(t, r, time.Minute)
	if !o.Stopped || o.StopCause != "killed" {
		t.Fatalf("outcome %s/%s stopped %v cause %q", o.Class, o.Reason, o.Stopped, o.StopCause)
	}
	pids := []int{sleepPID}
	for _, p := range r.PIDs() {
		pids = append(pids, p.PID)
	}
	assertGone(t, pids...)
	if len(o.Leftover) != 0 {
		t.Fatalf("leftover %v", o.Leftover)
	}
}
