package rush

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zergrush/zerg/e2e/e2ebin"
)

// TestRedTeamDirs: another account of the host makes zerg's directories
// before zerg does — root's workspaces at /var/tmp/zerg-0, an agent's at
// /var/tmp/zerg-agent, a ZERG_WORKSPACES in a shared directory, a symlink
// there — and zerg refuses each with one line naming it, exit 2, nothing
// written and nothing put in that account's directory. Issue 35: root's
// zerg rush used a /var/tmp/zerg-0 another uid had made, delivered, and
// that account read the workspace and swapped root's repository directory
// for its own.
//
// /var/tmp is a private tmpfs in a mount namespace of the test's own, so
// the real default paths are attacked without touching the machine's. The
// control is the same rush with nothing planted: it delivers, and makes
// /var/tmp/zerg-0 root's, mode 0711.
func TestRedTeamDirs(t *testing.T) {
	other := e2ebin.OtherAccount(t)
	p := newProject(t, nil)
	var env []string
	for _, kv := range p.env() {
		if !strings.HasPrefix(kv, "ZERG_WORKSPACES=") {
			env = append(env, kv)
		}
	}
	owner := "belongs to uid " + strconv.Itoa(other.UID) + " (" + other.Name + ")"
	refused := func(name string, r result, path string) {
		t.Helper()
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, path+" "+owner) {
			t.Errorf("%s: want exit 2 and one line naming %s; exit %d\nstdout:\n%s\nstderr:\n%s", name, path, r.code, r.stdout, r.stderr)
		}
	}
	nothingWritten := func(name string) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(p.dir, ".zerg", "runs", "demo", "events.jsonl")); err == nil {
			t.Errorf("%s: the run log was written", name)
		}
		if out, _ := exec.Command("git", "-C", p.dir, "branch", "--list", "zerg/*").Output(); len(out) > 0 {
			t.Errorf("%s: branches were made: %s", name, out)
		}
	}

	// Root's workspaces: /var/tmp/zerg-0, made by the other account.
	r, after := inPrivateVarTmp(t, p, env, other, "mkdir -p /var/tmp/zerg-0/worktrees", "find /var/tmp/zerg-0 -mindepth 1",
		"rush", "demo", "--rehearse")
	refused("a planted /var/tmp/zerg-0", r, "/var/tmp/zerg-0")
	if strings.TrimSpace(after) != "/var/tmp/zerg-0/worktrees" {
		t.Errorf("zerg put something in the other account's directory:\n%s", after)
	}
	nothingWritten("a planted /var/tmp/zerg-0")
	// What would read from or delete in it refuses too.
	r, _ = inPrivateVarTmp(t, p, env, other, "mkdir -p /var/tmp/zerg-0", "", "cleanup", "demo", "--all")
	refused("cleanup under a planted /var/tmp/zerg-0", r, "/var/tmp/zerg-0")

	// An agent's default directory, made by the other account.
	creds := filepath.Join(p.home, "a1.creds.json")
	mustDo(t, os.WriteFile(creds, []byte(`{"url": "nats://127.0.0.1:1", "user": "a1", "password": "not-a-password"}`), 0o600))
	r, after = inPrivateVarTmp(t, p, env, other, "mkdir /var/tmp/zerg-agent", "find /var/tmp/zerg-agent -mindepth 1",
		"agent", "--join", "nats://127.0.0.1:1", "--creds", creds, "--mode", "subprocess")
	refused("a planted /var/tmp/zerg-agent", r, "/var/tmp/zerg-agent")
	if strings.TrimSpace(after) != "" {
		t.Errorf("the agent put something in the other account's directory:\n%s", after)
	}

	// ZERG_WORKSPACES in a shared (sticky, world-writable) directory: a
	// directory or a symlink the other account made there first.
	shared := filepath.Join(p.home, "shared")
	mustDo(t, os.Mkdir(shared, 0o755))
	mustDo(t, os.Chmod(shared, 0o777|os.ModeSticky))
	mine := filepath.Join(p.home, "mine")
	mustDo(t, os.Mkdir(mine, 0o755))
	for _, c := range []struct{ name, plant string }{
		{"ws", "mkdir " + filepath.Join(shared, "ws")},
		{"link", "ln -s " + mine + " " + filepath.Join(shared, "link")},
	} {
		if out, err := other.As("sh", "-c", c.plant).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", c.plant, err, out)
		}
		ws := filepath.Join(shared, c.name)
		r := p.zergEnv(append(env, "ZERG_WORKSPACES="+ws), "rush", "demo", "--rehearse")
		refused("ZERG_WORKSPACES="+ws, r, ws)
		if !strings.Contains(r.stderr, "ZERG_WORKSPACES="+ws+" is not zerg's own") {
			t.Errorf("the line does not name ZERG_WORKSPACES: %s", r.stderr)
		}
		nothingWritten("ZERG_WORKSPACES=" + ws)
	}
	if entries, _ := os.ReadDir(mine); len(entries) > 0 {
		t.Errorf("zerg wrote through the other account's symlink: %v", entries)
	}

	// The control: nothing planted, the same rush delivers, in a
	// /var/tmp/zerg-0 of root's own that nobody else may list.
	r, after = inPrivateVarTmp(t, p, env, other, "", "stat -c '%a %U %n' /var/tmp/zerg-0 /var/tmp/zerg-0/worktrees",
		"rush", "demo", "--rehearse")
	if r.code != 0 || !strings.Contains(r.stdout, "DELIVERED") {
		t.Fatalf("control: the rush with nothing planted: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if want := "711 root /var/tmp/zerg-0\n711 root /var/tmp/zerg-0/worktrees\n"; after != want {
		t.Errorf("control: the workspaces' directories are\n%s\nwant\n%s", after, want)
	}
}

// inPrivateVarTmp runs zerg with argv in the project, in a mount namespace
// whose /var/tmp is an empty tmpfs of its own (mode 1777, as the real one):
// first plant as the other account (a shell command, none when ""), then
// zerg as root, then after (a shell command as root, "" for none), whose
// output it returns with zerg's. zerg is killed after two minutes: an agent
// that took another account's directory would wait for its server for
// ever, and the test must fail, not hang.
func inPrivateVarTmp(t *testing.T, p *project, env []string, other e2ebin.Account, plant, after string, argv ...string) (result, string) {
	t.Helper()
	out := t.TempDir()
	script := `set -e
mount -t tmpfs -o mode=1777 zerg-rt-vartmp /var/tmp
if [ -n "$RT_PLANT" ]; then runuser -u "$RT_OTHER" -- sh -c "$RT_PLANT"; fi
set +e
cd "$RT_REPO"
timeout -s KILL 120 "$RT_ZERG" "$@" >"$RT_OUT/stdout" 2>"$RT_OUT/stderr"
echo $? >"$RT_OUT/code"
if [ -n "$RT_AFTER" ]; then sh -c "$RT_AFTER" >"$RT_OUT/after" 2>&1; fi
`
	cmd := exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "--", "sh", "-c", script, "sh"}, argv...)...)
	cmd.Env = append(env, "RT_PLANT="+plant, "RT_OTHER="+other.Name, "RT_REPO="+p.dir, "RT_ZERG="+zergBin, "RT_OUT="+out, "RT_AFTER="+after)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the namespace: %v\n%s", err, b)
	}
	read := func(name string) string { b, _ := os.ReadFile(filepath.Join(out, name)); return string(b) }
	code := strings.TrimSpace(read("code"))
	r := result{stdout: read("stdout"), stderr: read("stderr"), code: -1}
	if n, err := strconv.Atoi(code); err == nil {
		r.code = n
	}
	return r, read("after")
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
