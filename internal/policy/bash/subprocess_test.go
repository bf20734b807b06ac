package bash_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/policy"
	"github.com/zergrush/zerg/internal/policy/bash"
)

// subFixture is modeFixture's subprocess policy, its scratch dirs made.
func subFixture(t testing.TB) (ws string, p *policy.Policy, scratch, shared string) {
	t.Helper()
	ws, p, _ = modeFixture(t)
	scratch = mkdirs(t, p.Bash.Scratch[0])
	shared = p.Bash.SharedTmp
	p.Protected = []string{filepath.Dir(scratch)}
	for name, body := range map[string]string{
		filepath.Join(filepath.Dir(scratch), "policy.json"):               "{}",
		filepath.Join(shared, "mine.log"):                                 "log\n",
		filepath.Join(shared, "krb5cc_0"):                                 "ticket\n",
		filepath.Join(shared, "claude-1000", "-ws", "tasks", "b1.output"): "output\n",
	} {
		mkdirs(t, filepath.Dir(name))
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mkdirs(t, filepath.Join(shared, "open"))
	if err := os.Chmod(filepath.Join(shared, "open"), 0o777); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "/etc", filepath.Join(shared, "etc-link"))
	return ws, p, scratch, shared
}

// TestBashSubprocessRules: the broader subprocess policy: programs allowed
// with any arguments (still path-checked, never what reaches outside),
// wrappers and runners looked through, loops and substitutions checked
// command by command, text arguments that are no paths.
func TestBashSubprocessRules(t *testing.T) {
	ws, p, _, _ := subFixture(t)
	runBashCases(t, ws, p, []bashCase{
		// programs with any arguments
		{cmd: "mise run test -- -run TestX -v 2>&1 | tail -40", allow: true, want: "allowed"},
		{cmd: "mise run fmt && mise run lint", allow: true, want: "allowed"},
		{cmd: "npm install --save-dev happy-dom", allow: true, want: "allowed"},
		{cmd: "bd show x-1", allow: true, want: "allowed"},
		{cmd: "python3 -c 'import json; print(1)' < README.md", allow: true, want: "allowed"},
		{cmd: "python3 /etc/script.py", want: "outside the workspace"},
		{cmd: "npm install --prefix /opt/x y", want: "outside the workspace"},
		{cmd: "python3 -m http.server 8000", want: "loopback"},
		{cmd: "npm publish", want: "npm publish is not allowed"},
		{cmd: "mise trust", want: "mise trust is not allowed"},
		{cmd: "bd sync", want: "bd sync is not allowed"},
		{cmd: "pip install x", want: "pip install is not an allowed command"},
		// runners: the command they run is a command like any other
		{cmd: "uv run python3 -c 'print(1)'", allow: true, want: "allowed"},
		{cmd: "uv run pytest tests/", want: "pytest tests/ is not an allowed command"},
		{cmd: "uv run cat /etc/shadow", want: "outside the workspace"},
		{cmd: "uv run --directory /etc python3 x.py", want: "/etc is outside the workspace"},
		{cmd: "uv run --env-file /etc/shadow python3 x.py", want: "outside the workspace"},
		{cmd: "uv run -m http.server", want: "loopback"},
		{cmd: "mise exec -- python3 -c 1", allow: true, want: "allowed"},
		{cmd: "mise exec -- cat /etc/shadow", want: "outside the workspace"},
		{cmd: "mise exec -c 'ls'", want: "command line to run"},
		{cmd: "mise exec python3 x.py", want: "needs --"},
		{cmd: "npx vitest run", allow: true, want: "allowed"},
		{cmd: "npx vitest run /etc/x", want: "outside the workspace"},
		{cmd: "npx -c 'curl x'", want: "curl is not allowed"},
		{cmd: "npx -c 'ls'", want: "command line to run"},
		// wrappers
		{cmd: "time ./bin/greet-all", allow: true, want: "allowed"},
		{cmd: "time (cat README.md)", allow: true, want: "allowed"},
		{cmd: "time cat /etc/shadow", want: "outside the workspace"},
		{cmd: "A=1 time cat README.md", allow: true, want: "allowed"},
		{cmd: "A=1 time -o /etc/x cat README.md", want: "outside the workspace"},
		{cmd: "nohup sh tests/run.sh", allow: true, want: "allowed"},
		{cmd: "command -v go", allow: true, want: "allowed"},
		{cmd: "env -C /etc cat passwd", want: "directory to run in"},
		{cmd: "xargs cat < README.md", want: "xargs is not allowed"},
		{cmd: "busybox cat README.md", want: "busybox is not allowed"},
		// loops, branches, substitutions: every command inside is checked
		{cmd: "for i in 1 2 3; do time ./bin/greet-all > /dev/null; done", allow: true, want: "allowed"},
		{cmd: "for f in README.md bin/greet-all; do wc -l \"$f\"; done", allow: true, want: "allowed"},
		{cmd: "for f in README.md /etc/shadow; do cat \"$f\"; done", want: "/etc/shadow is outside the workspace"},
		{cmd: "for f in README.md; do cat ${f}; done", allow: true, want: "allowed"},
		{cmd: "for f in $(ls); do cat $f; done", want: "computed at run time or a pattern"},
		{cmd: "for f in *; do cat $f; done", want: "computed at run time or a pattern"},
		{cmd: "for i in a 'b c'; do echo $i; done", want: "quote the variable"},
		{cmd: "for i in a; do echo $j; done", want: "variables"},
		{cmd: "while true; do sleep 1; done", allow: true, want: "allowed"},
		{cmd: "until false; do cat /etc/shadow; done", want: "outside the workspace"},
		{cmd: "if [ -f README.md ]; then cat README.md; elif true; then ls; else echo no; fi", allow: true, want: "allowed"},
		{cmd: "echo \"exit: $?\"; echo $$", allow: true, want: "allowed"},
		{cmd: "cat $$", want: "computed at run time"},
		{cmd: "echo $1", want: "variables"},
		{cmd: "git commit -m \"$(cat <<'EOF'\nfix: a /etc thing\n\nCo-Authored-By: x\nEOF\n)\"", allow: true, want: "allowed"},
		{cmd: "git commit -m \"$(cat /etc/shadow)\"", want: "outside the workspace"},
		{cmd: "git commit -m $(cat README.md)", want: "split at run time"},
		{cmd: "git commit -F /etc/passwd", want: "outside the workspace"},
		{cmd: "git commit -am \"$(printf msg)\"", allow: true, want: "allowed"},
		{cmd: "git add \"$(echo README.md)\"", want: "computed at run time"},
		{cmd: "echo $((1+1))", allow: true, want: "allowed"},
		{cmd: "echo $((n+1))", want: "arithmetic"},
		// text that is no path
		{cmd: "grep -rn \"/etc/passwd\" .", allow: true, want: "allowed"},
		{cmd: "sed -n '/^\\/usr/p' README.md", allow: true, want: "allowed"},
		{cmd: "find . -type f \\( -name '*.md' -o -name '*.sh' \\) -not -path '*/.git/*' | sort", allow: true, want: "allowed"},
		{cmd: "find . -newer /etc/passwd", want: "outside the workspace"},
		{cmd: "git log --grep=/etc/x --format='%h %s' -n 3", allow: true, want: "allowed"},
		{cmd: "git show HEAD:README.md | head", allow: true, want: "allowed"},
		// find -exec runs commands that read
		{cmd: "find sub -name '*.go' -exec grep -l 'concurrent\\|x' {} \\;", allow: true, want: "allowed"},
		{cmd: "find . -name '*.md' -exec wc -l {} +", allow: true, want: "allowed"},
		{cmd: "find . -exec sh -c 'cat /etc/shadow' \\;", want: "only commands that read"},
		{cmd: "find . -exec cp {} x \\;", want: "only commands that read"},
		{cmd: "find . -exec grep -l x {}", want: "without ; or +"},
		// listing and dumping tools
		{cmd: "tree sub -L 3", allow: true, want: "allowed"},
		{cmd: "tree -o /etc/x", want: "outside the workspace"},
		{cmd: "tree -l", want: "tree -l is not allowed"},
		{cmd: "git status --porcelain -z | xxd | head -5", allow: true, want: "allowed"},
		{cmd: "xxd -r README.md /etc/x", want: "outside the workspace"},
		// brace lists, patterns of files to change
		{cmd: "mkdir -p gen/{commands,hooks,docs}", allow: true, want: "allowed"},
		{cmd: "cat {README.md,/etc/shadow}", want: "/etc/shadow is outside the workspace"},
		{cmd: "echo {1..3}", want: "brace range"},
		{cmd: "chmod +x bin/*", allow: true, want: "allowed"},
		{cmd: "chmod +x sub/*", want: "outside the workspace"}, // sub/out is a link out
		{cmd: "rm -f bin/*", want: "a pattern"},
		// a prefix that only adds search directories of the worker's own
		{cmd: "PYTHONPATH=sub python3 -c 1", allow: true, want: "allowed"},
		{cmd: "PYTHONPATH=/etc python3 -c 1", want: "setting PYTHONPATH: /etc is outside the workspace"},
		{cmd: "PYTHONPATH=:sub python3 -c 1", want: "empty entry"},
		// after cd DIR &&, the chain runs in DIR
		{cmd: "cd sub && cat ../README.md", allow: true, want: "allowed"},
		{cmd: "cd sub; cat ../README.md", want: "outside the workspace"},
		{cmd: "cd sub && cd deep && cat ../../README.md; cat ../../README.md", want: "outside the workspace"},
		{cmd: "! cd sub && cat ../README.md", want: "outside the workspace"},
	})
}

// TestBashScratch: the worker's TMPDIR is its own; in the shared /tmp only
// entries it makes or owns are (never names other programs keep their
// state under, never /tmp itself), and Claude Code's task output files may
// be read.
func TestBashScratch(t *testing.T) {
	ws, p, scratch, shared := subFixture(t)
	att := filepath.Dir(scratch)
	runBashCases(t, ws, p, []bashCase{
		{cmd: "echo x > " + scratch + "/a.txt && cat " + scratch + "/a.txt", allow: true, want: "allowed"},
		{cmd: "cat " + att + "/policy.json", want: "protected"},
		{cmd: "cat " + scratch + "/../policy.json", want: "protected"},
		{cmd: "cp README.md " + shared + "/new.txt && cat " + shared + "/new.txt", allow: true, want: "allowed"},
		{cmd: "cat " + shared + "/mine.log | tail -30", allow: true, want: "allowed"},
		{cmd: "rm " + shared + "/mine.log", allow: true, want: "allowed"},
		{cmd: "cat " + shared + "/krb5cc_0", want: "outside the workspace"},
		{cmd: "cat " + shared + "/.X0-lock", want: "outside the workspace"},
		{cmd: "echo x > " + shared + "/open/x", want: "outside the workspace"},
		{cmd: "cat " + shared + "/etc-link/passwd", want: "outside the workspace"},
		{cmd: "tail -30 " + shared + "/claude-1000/-ws/tasks/b1.output", allow: true, want: "allowed"},
		{cmd: "echo x > " + shared + "/claude-1000/-ws/tasks/b1.output", want: "b1.output"},
		{cmd: "ls " + shared + "/claude-1000", want: "outside the workspace"},
		{cmd: "ls " + shared, want: "outside the workspace"},
		{cmd: "cat " + shared + "/*.log", want: "lists a directory"},
		// a program built or written there
		{cmd: shared + "/entire-test --help", allow: true, want: "allowed"},
		{cmd: shared + "/open", want: "outside the workspace"},
		// /tmp as the working directory
		{cmd: "cd " + shared + " && rm -rf t && mkdir t && cd t && git init && echo c > f.txt && git add f.txt && git status --porcelain", allow: true, want: "allowed"},
		{cmd: "cd " + shared + " && ls", want: "only commands that name their files"},
		{cmd: "cd " + shared + " && git init", want: "only commands that name their files"},
		{cmd: "cd " + shared + "; mkdir t; cd t; git init", want: "only commands that name their files"},
		{cmd: "cd " + shared + "/t && go test ./...", want: "in a directory of the shared"},
		{cmd: "cd " + shared + "/t && ls -la", allow: true, want: "allowed"},
		{cmd: "ls", cwd: "../sharedtmp", want: "only commands that name their files"},
	})
	if os.Geteuid() == 0 {
		other := filepath.Join(shared, "other.log")
		if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		runBashCases(t, ws, p, []bashCase{{cmd: "cat " + other, want: "outside the workspace"}})
	}
	// A workspace that lives in the shared /tmp: its entry is zerg's.
	p.Bash.SharedTmp = filepath.Dir(filepath.Dir(ws))
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	runBashCases(t, ws, p, []bashCase{
		{cmd: "echo x > " + filepath.Join(filepath.Dir(ws), "next-to-ws.txt"), want: "outside the workspace"},
		{cmd: "echo x > .git/x", want: "inside .git"},
	})
}

// TestBashGitHooks: git commands that change the repository run only where
// no hook can run.
func TestBashGitHooks(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_COUNT", "")
	ws := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &policy.Policy{Version: policy.Version, Workspace: ws, Bash: bash.Policy{Allow: bash.DefaultAllow()}}
	changes := []string{
		"git add README.md && git commit -m x",
		"git checkout -b feat",
		"git stash && git stash pop",
		"git reset --hard HEAD~1",
		"git rebase --continue",
		"git -C . tag v1",
	}
	reads := []string{"git status", "git diff HEAD", "git log --oneline", "git -C . status"}
	decide := func(cmd string) policy.Decision {
		return p.Decide(hookInput(t, ws, "Bash", map[string]any{"command": cmd}))
	}
	check := func(what string, allow bool, want string) {
		t.Helper()
		for _, c := range changes {
			if d := decide(c); d.Allow != allow || !strings.Contains(d.Reason, want) {
				t.Errorf("%s: %q: allow %v, want %v with %q (%s)", what, c, d.Allow, allow, want, d.Reason)
			}
		}
		for _, c := range reads {
			if d := decide(c); !d.Allow {
				t.Errorf("%s: %q is read-only and denied: %s", what, c, d.Reason)
			}
		}
	}
	check("no hook", true, "allowed")

	hooks := filepath.Join(ws, ".git", "hooks")
	mkdirs(t, hooks)
	for name, mode := range map[string]os.FileMode{"pre-commit.sample": 0o755, "post-checkout": 0o644} {
		if err := os.WriteFile(filepath.Join(hooks, name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	check("samples and hooks that are not executable", true, "allowed")
	if err := os.Chmod(filepath.Join(hooks, "post-checkout"), 0o755); err != nil {
		t.Fatal(err)
	}
	check("an executable hook", false, "the repository has the hook post-checkout")
	if err := os.Remove(filepath.Join(hooks, "post-checkout")); err != nil {
		t.Fatal(err)
	}

	cfg := filepath.Join(ws, ".git", "config")
	orig, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range []string{"[core]\n\thooksPath = .githooks\n", "[include]\n\tpath = ../x\n", "[includeIf \"gitdir:/\"]\n\tpath = x\n"} {
		if err := os.WriteFile(cfg, append(append([]byte{}, orig...), extra...), 0o644); err != nil {
			t.Fatal(err)
		}
		check("the repository's config: "+strings.Fields(extra)[0], false, "could run")
	}
	if err := os.WriteFile(cfg, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\thooksPath = /x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("the user's config", false, "hookspath")
	if err := os.Remove(filepath.Join(home, ".gitconfig")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "core.hooksPath")
	check("the environment's config", false, "environment")
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "safe.directory")
	check("safe.directory in the environment", true, "allowed")

	// A worktree: the hooks are the common directory's.
	common := filepath.Join(t.TempDir(), "main.git")
	wt := filepath.Join(common, "worktrees", "w")
	mkdirs(t, filepath.Join(common, "hooks"))
	mkdirs(t, wt)
	if err := os.WriteFile(filepath.Join(wt, "commondir"), []byte("../..\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws2 := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws2, ".git"), []byte("gitdir: "+wt+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p2 := &policy.Policy{Version: policy.Version, Workspace: ws2, Bash: bash.Policy{Allow: bash.DefaultAllow()}}
	if d := p2.Decide(hookInput(t, ws2, "Bash", map[string]any{"command": "git commit -m x"})); !d.Allow {
		t.Errorf("worktree without hooks: %s", d.Reason)
	}
	if err := os.WriteFile(filepath.Join(common, "hooks", "pre-commit"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if d := p2.Decide(hookInput(t, ws2, "Bash", map[string]any{"command": "git commit -m x"})); d.Allow || !strings.Contains(d.Reason, "pre-commit") {
		t.Errorf("worktree whose common dir has a pre-commit hook: %s", d.Reason)
	}

	// Options that run programs or editors, whatever the hooks.
	for cmd, want := range map[string]string{
		"git rebase -i HEAD~2":             "rebase -i",
		"git rebase --exec 'make' HEAD~2":  "rebase --exec",
		"git bisect run make":              "bisect run",
		"git apply --unsafe-paths x.patch": "--unsafe-paths",
		"git init --template=/x sub":       "--template",
		"git add -p":                       "add -p",
		"git difftool":                     "not an allowed command",
		"git worktree add ../x":            "not an allowed command",
	} {
		if d := decide(cmd); d.Allow || !strings.Contains(d.Reason, want) {
			t.Errorf("%q: %s, want a denial naming %q", cmd, d.Reason, want)
		}
	}

	// A repository the line is about to make: the user's config must not
	// bring templates.
	scratch := t.TempDir()
	p.Bash.Scratch = []string{scratch}
	newRepo := "cd " + scratch + " && git init && git add . && git commit -m init"
	if d := decide(newRepo); !d.Allow {
		t.Errorf("a new repository in the scratch dir: %s", d.Reason)
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[init]\n\ttemplateDir = /x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := decide(newRepo); d.Allow || !strings.Contains(d.Reason, "templatedir") {
		t.Errorf("a new repository with the user's init.templateDir: %s", d.Reason)
	}
}

// TestCommandPrograms: the programs of a verification command may run with
// any arguments; wrappers are looked through, builtins, scripts and what
// reaches outside are left out, and so are names that are patterns.
func TestCommandPrograms(t *testing.T) {
	for line, want := range map[string]string{
		"go test ./...":                          "go",
		"python -m pytest":                       "python",
		"node --check fed.js":                    "node",
		"cd sub && make test":                    "make",
		"timeout 600 env CI=1 npm test":          "npm",
		"sh tests/run.sh && curl -s http://x/ok": "sh",
		"./scripts/check.sh; echo done":          "",
		"mix test $X":                            "",
		// A rule is a pattern: a program named by one would allow others.
		"py* -m pytest; {go,vet} test": "go", // go vet test
	} {
		got := strings.Join(bash.CommandPrograms(line), " ")
		if got != want {
			t.Errorf("bash.CommandPrograms(%q) = %q, want %q", line, got, want)
		}
	}
}

// TestValidateBashPolicyFields: the deny list names programs, the scratch
// dirs are absolute.
func TestValidateBashPolicyFields(t *testing.T) {
	for _, b := range []bash.Policy{
		{Deny: []string{"/usr/bin/curl"}},
		{Deny: []string{""}},
		{Deny: []string{"git push"}},
		{Scratch: []string{"tmp"}},
		{SharedTmp: "tmp"},
		{SharedTmp: "/"},
	} {
		p := &policy.Policy{Version: policy.Version, Workspace: "/ws", Bash: b}
		if err := p.Validate(); err == nil {
			t.Errorf("%+v validated", b)
		}
	}
	p := &policy.Policy{Version: policy.Version, Workspace: "/ws", Bash: bash.Policy{Deny: []string{"bd"}, Scratch: []string{"/a/tmp"}, SharedTmp: "/tmp", Sandboxed: true}}
	if err := p.Validate(); err != nil {
		t.Error(err)
	}
}

// TestBashConstantArithmetic: $(( )) over decimal numbers with + - * / %
// and parentheses is the number, known before the line runs, and the word
// holding it is judged as if the number had been written (head -n 290).
// Anything else in it stays refused: a name is a variable (its subscript
// may run a command), an assignment changes one, 010 is 8 in bash and 10
// in zsh, a division by zero or an overflow is an error.
func TestBashConstantArithmetic(t *testing.T) {
	ws, p, _, _ := subFixture(t)
	runBashCases(t, ws, p, []bashCase{
		{cmd: "git show HEAD:README.md | tail -n +1311 | head -n $(( 1601 - 1311 ))", allow: true, want: "allowed"},
		{cmd: "head -n $((10*(2+3)%7)) README.md", allow: true, want: "allowed"},
		{cmd: "sleep $((-1+2))", allow: true, want: "allowed"},
		{cmd: "cat README$((1)).md", allow: true, want: "allowed"},
		// the twins: what the number makes is judged like any other word
		{cmd: "cat /etc/passwd$((0))", want: "outside the workspace"},
		{cmd: "cat /etc/pass$((1-1))wd", want: "outside the workspace"},
		// and what is no constant stays refused
		{cmd: "head -n $((n+1)) README.md", want: "arithmetic"},
		{cmd: "echo $((a[$(cat /etc/shadow)]))", want: "arithmetic"},
		{cmd: "echo $((x=1))", want: "arithmetic"},
		{cmd: "echo $((010))", want: "arithmetic"},
		{cmd: "echo $((1/0))", want: "arithmetic"},
		{cmd: "echo $((9223372036854775807+1))", want: "arithmetic"},
		{cmd: "echo $((2**3))", want: "arithmetic"},
		{cmd: "echo $[1+1]", want: "arithmetic"},
		{cmd: "((1+1))", want: "arithmetic"},
	})
}
