package cli

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/projectinit"
	"github.com/zergrush/zerg/internal/textx"
)

// TestHelperZergProcess is not a test: git hooks started by the tests below
// run the test binary through a "zerg" wrapper script, and it lands here to
// act as zerg (the helper-process pattern).
func TestHelperZergProcess(t *testing.T) {
	if os.Getenv("ZERG_TEST_HELPER") != "1" {
		return
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(Run(context.Background(), args, os.Stdout, os.Stderr))
}

// zergOnPath writes a "zerg" wrapper running this test binary as zerg and
// returns a PATH with it first.
func zergOnPath(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nZERG_TEST_HELPER=1 exec " + textx.ShellQuote(self) + " -test.run='^TestHelperZergProcess$' -- \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "zerg"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin + string(os.PathListSeparator) + os.Getenv("PATH")
}

// fakeAnthropicKey is built from pieces at run time so no secret scanner
// flags this source file.
func fakeAnthropicKey(seed uint64) string {
	const cs = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	r := rand.New(rand.NewPCG(seed, seed+1))
	b := make([]byte, 93)
	for i := range b {
		b[i] = cs[r.IntN(len(cs))]
	}
	return "sk-" + "ant-" + "api03-" + string(b) + "AA"
}

type testRepo struct {
	t    *testing.T
	dir  string
	path string // PATH for git commands, with the zerg wrapper
}

func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	r := &testRepo{t: t, dir: t.TempDir(), path: os.Getenv("PATH")}
	r.git("init", "-q", "-b", "main")
	r.git("commit", "-q", "--allow-empty", "-m", "initial")
	return r
}

func (r *testRepo) run(args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "user.name=Zerg Test", "-c", "user.email=test@zerg.invalid"}, args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "HOME="+r.dir, "GIT_CONFIG_NOSYSTEM=1", "PATH="+r.path, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (r *testRepo) git(args ...string) string {
	r.t.Helper()
	out, err := r.run(args...)
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return out
}

func (r *testRepo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *testRepo) commits() string { return strings.TrimSpace(r.git("rev-list", "--count", "HEAD")) }

func (r *testRepo) installHook() *initReport {
	r.t.Helper()
	var out, errb bytes.Buffer
	env := &initEnv{ctx: context.Background(), a: newApp(&out, &errb), root: r.dir}
	step := precommitStep()
	if err := step.check(env); err != nil {
		r.t.Fatalf("check: %v", err)
	}
	rep := &initReport{}
	if err := step.apply(env, rep); err != nil {
		r.t.Fatalf("apply: %v", err)
	}
	return rep
}

// withExecutable makes the hook pin exe as the zerg binary.
func withExecutable(t *testing.T, exe string) {
	old := precommitExecutable
	precommitExecutable = func() (string, error) { return exe, nil }
	t.Cleanup(func() { precommitExecutable = old })
}

func TestPrecommitHookRefusesSecrets(t *testing.T) {
	// A pinned path that does not exist: the hook falls back to zerg on PATH,
	// which is this test binary behind a wrapper.
	withExecutable(t, "/nonexistent/zerg")
	r := newTestRepo(t)
	r.path = zergOnPath(t)

	rep := r.installHook()
	if len(rep.Created) != 1 || rep.Created[0] != ".git/hooks/pre-commit" {
		t.Fatalf("report %+v", rep)
	}
	hook := filepath.Join(r.dir, ".git", "hooks", "pre-commit")
	first, err := os.ReadFile(hook)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(first), projectinit.PrecommitMarker) || !strings.Contains(string(first), "'/nonexistent/zerg'") {
		t.Fatalf("hook:\n%s", first)
	}
	if fi, _ := os.Stat(hook); fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("hook not executable: %v", fi.Mode())
	}
	// Idempotent: a second install changes nothing.
	rep = r.installHook()
	if len(rep.Existing) != 1 || len(rep.Created)+len(rep.Updated) != 0 {
		t.Fatalf("second install: %+v", rep)
	}
	if again, _ := os.ReadFile(hook); !bytes.Equal(again, first) {
		t.Fatal("second install rewrote the hook")
	}

	// A clean commit passes.
	r.write("README.md", "# demo\n")
	r.git("add", "README.md")
	r.git("commit", "-q", "-m", "clean")
	if r.commits() != "2" {
		t.Fatal("clean commit was not made")
	}

	// A commit adding a key is refused, and the output names file and rule, not the key.
	key := fakeAnthropicKey(1)
	r.write("app/.env", "DEBUG=1\nANTHROPIC_API_KEY="+key+"\n")
	r.git("add", "app/.env")
	out, err := r.run("commit", "-q", "-m", "leak")
	if err == nil {
		t.Fatalf("commit with a key was accepted:\n%s", out)
	}
	if !strings.Contains(out, "app/.env:2: anthropic-api-key:") || strings.Contains(out, key[8:30]) {
		t.Fatalf("hook output:\n%s", out)
	}
	if r.commits() != "2" {
		t.Fatal("a commit was made")
	}

	// "git commit -a" commits through a temporary index (GIT_INDEX_FILE): still refused.
	r.git("reset", "-q")
	r.write("README.md", "# demo\ntoken: "+fakeAnthropicKey(2)+"\n")
	if out, err := r.run("commit", "-q", "-a", "-m", "leak via -a"); err == nil {
		t.Fatalf("commit -a with a key was accepted:\n%s", out)
	}
	r.git("checkout", "-q", "README.md")

	// An allowlisted false positive passes.
	r.write(".zerg/secrets-allow", "# demo fixture\napp/.env anthropic-api-key\n")
	r.git("add", "app/.env")
	r.git("commit", "-q", "-m", "allowed fixture")
	if r.commits() != "3" {
		t.Fatal("allowlisted commit was not made")
	}
}

func TestPrecommitHookKeepsUsersHook(t *testing.T) {
	withExecutable(t, "/opt/zerg/bin/zerg")
	r := newTestRepo(t)
	hook := filepath.Join(r.dir, ".git", "hooks", "pre-commit")
	mine := "#!/bin/sh\nmake lint\n"
	if err := os.WriteFile(hook, []byte(mine), 0o755); err != nil {
		t.Fatal(err)
	}
	rep := r.installHook()
	if len(rep.Existing) != 1 || len(rep.Created)+len(rep.Updated) != 0 {
		t.Fatalf("report %+v", rep)
	}
	if line := strings.Join(rep.lines, "\n"); !strings.Contains(line, "'/opt/zerg/bin/zerg' scan --staged") || !strings.Contains(line, "not zerg's") {
		t.Fatalf("report line %q: want how to add the scan", line)
	}
	if got, _ := os.ReadFile(hook); string(got) != mine {
		t.Fatalf("user's hook changed:\n%s", got)
	}

	// A user's hook that already runs the scan is reported as such.
	if err := os.WriteFile(hook, []byte(mine+"zerg scan --staged\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	rep = r.installHook()
	if !strings.Contains(strings.Join(rep.lines, "\n"), "already runs zerg scan --staged") {
		t.Fatalf("report %q", rep.lines)
	}
}

func TestPrecommitHookUpdatesOwnHook(t *testing.T) {
	withExecutable(t, "/opt/zerg-1/zerg")
	r := newTestRepo(t)
	r.installHook()
	withExecutable(t, "/opt/zerg-2/zerg")
	rep := r.installHook()
	if len(rep.Updated) != 1 {
		t.Fatalf("report %+v: want the hook updated to the new binary", rep)
	}
	got, _ := os.ReadFile(filepath.Join(r.dir, ".git", "hooks", "pre-commit"))
	if string(got) != projectinit.PrecommitScript("/opt/zerg-2/zerg") {
		t.Fatalf("hook:\n%s", got)
	}
}

func TestPrecommitHookRespectsHooksPath(t *testing.T) {
	withExecutable(t, "/opt/zerg/bin/zerg")
	r := newTestRepo(t)
	r.git("config", "core.hooksPath", "tools/githooks")
	rep := r.installHook()
	if len(rep.Created) != 1 || rep.Created[0] != "tools/githooks/pre-commit" {
		t.Fatalf("report %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "tools", "githooks", "pre-commit")); err != nil {
		t.Fatal(err)
	}

	// Hooks switched off on purpose: nothing is installed, and it is said.
	r2 := newTestRepo(t)
	r2.git("config", "core.hooksPath", "/dev/null")
	rep = r2.installHook()
	if len(rep.Created)+len(rep.Updated) != 0 || !strings.Contains(strings.Join(rep.lines, "\n"), "skipped") {
		t.Fatalf("report %+v %q", rep, rep.lines)
	}
}
