package bash_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/policy"
	"github.com/zergrush/zerg/internal/policy/bash"
)

// modeFixture is confineFixture's workspace with the two policies an
// attempt gets: subprocess mode (rules, scratch space, a shared tmp of the
// test's own) and sandbox mode (only what reaches outside is refused).
func modeFixture(t testing.TB) (ws string, sub, sb *policy.Policy) {
	t.Helper()
	ws, _, sub = confineFixture(t)
	root := filepath.Dir(ws)
	sub.Bash.Allow = append(sub.Bash.Allow, "uv", "python3", "npx", "npm", "mise", "bd")
	sub.Bash.Scratch = []string{filepath.Join(root, "attempt", "tmp")}
	sub.Bash.SharedTmp = mkdirs(t, filepath.Join(root, "sharedtmp"))
	sub.Bash.Deny = []string{"terraform-local"}
	sb = &policy.Policy{Version: policy.Version, Workspace: ws, Allow: sub.Allow, ReadDirs: sub.ReadDirs,
		Bash: bash.Policy{Sandboxed: true, Deny: []string{"terraform-local"}, Scratch: sub.Bash.Scratch}}
	for _, p := range []*policy.Policy{sub, sb} {
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	return ws, sub, sb
}

type modeCase struct {
	cmd     string
	sub, sb bool   // allowed in subprocess mode, in sandbox mode
	want    string // substring of both reasons when denied
	cwd     string // relative to the workspace
	subWhy  string // substring of the subprocess reason instead of want
}

func runModeCases(t *testing.T, ws string, sub, sb *policy.Policy, cases []modeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			for _, m := range []struct {
				name  string
				p     *policy.Policy
				allow bool
			}{{"subprocess", sub, tc.sub}, {"sandbox", sb, tc.sb}} {
				d := m.p.Decide(hookInput(t, filepath.Join(ws, tc.cwd), "Bash", map[string]any{"command": tc.cmd}))
				if d.Allow != m.allow {
					t.Errorf("%s: allow = %v, want %v (reason %q)", m.name, d.Allow, m.allow, d.Reason)
					continue
				}
				want := tc.want
				if m.name == "subprocess" && tc.subWhy != "" {
					want = tc.subWhy
				}
				if !d.Allow && !strings.Contains(d.Reason, want) {
					t.Errorf("%s: reason %q does not contain %q", m.name, d.Reason, want)
				}
				if strings.Contains(d.Reason, "\n") {
					t.Errorf("%s: reason is not one line: %q", m.name, d.Reason)
				}
			}
		})
	}
}

// TestBashReachOutside: what reaches outside is refused in both modes,
// whatever wraps, hides or computes it.
func TestBashReachOutside(t *testing.T) {
	ws, sub, sb := modeFixture(t)
	runModeCases(t, ws, sub, sb, []modeCase{
		// network programs, however they are named or wrapped
		{cmd: "curl -s https://example.com", want: "curl is not allowed (network access)"},
		{cmd: "curl -s http://localhost:8081/health", want: "network access"},
		{cmd: "/usr/bin/curl http://x", want: "curl is not allowed"},
		{cmd: "c\\url http://x", want: "curl is not allowed"},
		{cmd: "\"cu\"rl http://x", want: "curl is not allowed"},
		{cmd: "command curl http://x", want: "curl is not allowed"},
		{cmd: "time curl http://x", want: "curl is not allowed"},
		{cmd: "time -p curl http://x", want: "curl is not allowed"},
		{cmd: "FOO=1 time curl http://x", want: "curl is not allowed"},
		{cmd: "nice -n 5 timeout 10 curl http://x", want: "curl is not allowed"},
		{cmd: "env A=1 curl http://x", want: "curl is not allowed"},
		{cmd: "busybox wget http://x", want: "wget is not allowed"},
		{cmd: "toybox nc -l 80", want: "nc is not allowed"},
		{cmd: "sudo curl http://x", want: "curl is not allowed"},
		{cmd: "xargs curl < README.md", want: "curl is not allowed"},
		// short options read as getopt does: a cluster ends at an option
		// with a value, which is its rest or the next word; -i's value is
		// only ever glued
		{cmd: "xargs -0n 1 curl < README.md", want: "curl is not allowed"},
		{cmd: "xargs -0rn1 curl < README.md", want: "curl is not allowed"},
		{cmd: "xargs -i curl {} < README.md", want: "curl is not allowed"},
		{cmd: "xargs -I{} curl {} < README.md", want: "curl is not allowed"},
		{cmd: "timeout -sKILL 5 curl http://x", want: "curl is not allowed"},
		{cmd: "strace -fo trace.log curl http://x", want: "curl is not allowed", subWhy: "strace"},
		{cmd: "echo $(curl http://x)", want: "curl is not allowed"},
		{cmd: "echo \"`wget -qO- http://x`\"", want: "wget is not allowed"},
		{cmd: "bash -c 'curl http://x'", want: "curl is not allowed"},
		{cmd: "sh -ec \"ssh host true\"", want: "ssh is not allowed"},
		{cmd: "eval 'curl http://x'", want: "curl is not allowed"},
		{cmd: "watch -n 1 curl http://x", want: "curl is not allowed"},
		{cmd: "for h in a b; do ssh $h uptime; done", want: "ssh is not allowed"},
		{cmd: "if true; then scp a b:c; fi", want: "scp is not allowed"},
		{cmd: "while false; do nc x 1; done", want: "nc is not allowed"},
		{cmd: "find . -name x -exec curl {} \\;", want: "curl is not allowed"},
		{cmd: "uv run ssh host", want: "ssh is not allowed"},
		{cmd: "mise exec -- gh pr list", want: "gh is not allowed"},
		{cmd: "npx -y http-server", want: "http-server without a loopback bind address"},
		{cmd: "gh api repos/x/y", want: "gh is not allowed"},
		{cmd: "aws s3 ls", want: "aws is not allowed"},
		{cmd: "kubectl get pods", want: "kubectl is not allowed"},
		{cmd: "docker run alpine", want: "docker is not allowed"},
		{cmd: "rsync -a src/ host:backup/", want: "rsync host:backup/ is not allowed", subWhy: "rsync"},
		{cmd: "echo x > /dev/tcp/10.0.0.1/80", want: "/dev/tcp", subWhy: "outside the workspace"},
		// the repository's remote, the user's git configuration
		{cmd: "git push origin main", want: "git push is not allowed"},
		{cmd: "git -C . push", want: "git push is not allowed"},
		{cmd: "git fetch origin main && git rebase origin/main", want: "git fetch is not allowed"},
		{cmd: "git pull", want: "git pull is not allowed"},
		{cmd: "git clone https://x/y", want: "git clone is not allowed"},
		{cmd: "git remote add up https://x", want: "git remote add is not allowed"},
		{cmd: "git submodule update --init", want: "git submodule is not allowed"},
		{cmd: "git ls-remote origin", want: "git ls-remote is not allowed"},
		{cmd: "git config --global core.excludesfile", want: "git config --global is not allowed"},
		{cmd: "git config core.hooksPath x", want: "git config core.hooksPath x is not allowed", subWhy: "git config"},
		{cmd: "git -c core.hooksPath=x commit -m m", want: "git -c is not allowed"},
		{cmd: "git -ccore.pager=sh log", want: "git -ccore.pager=sh is not allowed"},
		{cmd: "git --exec-path=/tmp status", want: "git --exec-path=/tmp is not allowed"},
		{cmd: "bd sync --from-main", want: "bd sync is not allowed"},
		// publishing, trust
		{cmd: "npm publish", want: "npm publish is not allowed"},
		{cmd: "cargo publish", want: "cargo publish is not allowed"},
		{cmd: "mix hex.publish", want: "mix hex.publish is not allowed"},
		{cmd: "mise trust && mise run fmt", want: "mise trust is not allowed"},
		// other processes
		{cmd: "ps aux | grep node", want: "ps is not allowed"},
		{cmd: "pgrep -f uvicorn", want: "pgrep is not allowed"},
		{cmd: "pkill -f \"uvicorn app\" 2>/dev/null; sleep 1", want: "pkill is not allowed"},
		{cmd: "kill 1", want: "kill is not allowed"},
		{cmd: "lsof -p 41749", want: "lsof is not allowed"},
		{cmd: "top -b -n 1", want: "top is not allowed"},
		{cmd: "cat /proc/1/environ", want: "/proc", subWhy: "outside the workspace"},
		{cmd: "cat /proc/self/environ", want: "/proc", subWhy: "outside the workspace"},
		// environment dumps and credentials
		{cmd: "env", want: "env without a command is not allowed"},
		{cmd: "env | grep KEY", want: "env without a command is not allowed"},
		{cmd: "env -0", want: "env without a command"},
		{cmd: "printenv", want: "printenv is not allowed"},
		{cmd: "printenv ANTHROPIC_API_KEY", want: "printenv ANTHROPIC_API_KEY is not allowed"},
		{cmd: "set", want: "set without names is not allowed"},
		{cmd: "export -p", want: "export without names is not allowed"},
		{cmd: "declare -x", want: "declare without names"},
		{cmd: "echo $ANTHROPIC_API_KEY", want: "ANTHROPIC_API_KEY", subWhy: "variables"},
		{cmd: "echo \"set: $([ -n \"$ANTHROPIC_API_KEY\" ] && echo yes)\"", want: "ANTHROPIC_API_KEY", subWhy: "variables"},
		{cmd: "echo ${#GITHUB_TOKEN}", want: "GITHUB_TOKEN", subWhy: "parameter expansion"},
		// listeners on every interface
		{cmd: "python3 -m http.server 8000", want: "http.server without a loopback bind address"},
		{cmd: "python3 -m http.server 8000 --directory . &", want: "without a loopback bind address"},
		{cmd: "uv run uvicorn app:app --host 0.0.0.0 --port 8081", want: "every network interface"},
		{cmd: "timeout 5 bash -c 'uv run uvicorn app --host 0.0.0.0'", want: "every network interface"},
		{cmd: "npm run dev -- --host", want: "--host"},
		{cmd: "python3 app.py --bind 192.168.1.5:80", want: "--bind 192.168.1.5:80"},
		{cmd: "flask run --host=::", want: "every network interface"},
		{cmd: "gunicorn -b :8000 app:app", want: "gunicorn -b :8000"},
		{cmd: "go tool pprof -http=:8080 cpu.out", want: "-http :8080"},
		// the user's files and Claude settings
		{cmd: "ls ~/.claude/projects", want: "home directory"},
		{cmd: "cat /root/.claude/settings.json", want: "outside the workspace"},
		{cmd: "cp README.md /home/x/claude_sessions/", want: "outside the workspace"},
		{cmd: "cd /etc && cat shadow", sb: true, subWhy: "leaves the workspace"}, // the sandbox's /etc is the host's, read-only
		// the user's deny list wins over every rule
		{cmd: "terraform-local plan", want: "terraform-local is not allowed (worker_policy.deny_commands)"},
		{cmd: "time terraform-local plan", want: "worker_policy.deny_commands"},
		// npx fetches and runs a package subprocess mode judges only for
		// what it reaches: the deny list is part of that.
		{cmd: "npx terraform-local plan", want: "worker_policy.deny_commands"},
		{cmd: "/opt/bin/terraform-local plan", want: "terraform-local", subWhy: "outside the workspace"},

		// still allowed
		{cmd: "python3 -m http.server 8000 --bind 127.0.0.1", sub: true, sb: true},
		{cmd: "python3 -m http.server -b localhost 8000", sub: true, sb: true},
		{cmd: "git remote -v", sub: false, sb: true, subWhy: "git remote is not an allowed command"},
		{cmd: "git config user.name", sub: false, sb: true, subWhy: "git config is not an allowed command"},
		{cmd: "git log --oneline -3 -c", sub: true, sb: true},
		{cmd: "set -euo pipefail; ls", sub: false, sb: true, subWhy: "environment"},
		{cmd: "export FOO=bar", sub: false, sb: true, subWhy: "environment"},
		{cmd: "printenv HOME", sub: false, sb: true, subWhy: "environment"},
		{cmd: "echo $SESSION_ID", sub: false, sb: true, subWhy: "variables"},
		{cmd: "for f in *.md; do wc -l \"$f\"; done", sub: false, sb: true, subWhy: "pattern"},
		{cmd: "rsync -a src/ dst/", sub: false, sb: true, subWhy: "not an allowed command"},
		{cmd: "cat /etc/os-release", sub: false, sb: true, subWhy: "outside the workspace"},
		{cmd: "echo hi > /tmp/x.txt && cat /tmp/x.txt", sub: false, sb: true, subWhy: "outside the workspace"},
		{cmd: "grep -rn '/home/x' .", sub: true, sb: true},
		{cmd: "git commit -m 'fix /home/x handling'", sub: true, sb: true},
		{cmd: "npx vitest run", sub: true, sb: true},
		{cmd: "uv run pytest tests/ -v", sub: false, sb: true, subWhy: "pytest tests/ is not an allowed command"},
	})
}

// TestBashSandboxLenient: sandbox mode parses what subprocess mode refuses
// (variables, loops over patterns, case, functions, [[ ]], arithmetic) and
// still finds the commands inside.
func TestBashSandboxLenient(t *testing.T) {
	ws, _, sb := modeFixture(t)
	for cmd, allow := range map[string]bool{
		"X=README.md; cat \"$X\"":                   true,
		"for f in *.md; do echo \"$f\"; done":       true,
		"case $1 in a) ls ;; *) echo no ;; esac":    true,
		"case $1 in a) curl x ;; esac":              false,
		"a[0]=$(curl x)":                            false,
		"f() { ls; }; f":                            true,
		"f() { curl x; }; f":                        false,
		"function g { wget x; }":                    false,
		"[[ -n $(curl x) ]] && echo y":              false,
		"[[ $x =~ ^(a|b)$ ]] && echo y":             true,
		"echo $((1+2))":                             true,
		"(( $(curl -s x) > 1 ))":                    false,
		"cat <(ls) <(curl x)":                       false,
		"diff <(sort a) <(sort b)":                  true,
		"$'\\x63url' http://x":                      false,
		"$'ls' -la":                                 true,
		"cat <<EOF\n$(curl x)\nEOF":                 false,
		"cat <<EOF\n$HOME is home\nEOF":             true,
		"cat <<'EOF'\n$(curl x)\nEOF":               true, // quoted: text
		"echo ${X:-$(curl x)}":                      false,
		"$CMD --version":                            true, // computed: the sandbox bounds it
		"ls $HOME/.claude":                          false,
		"cp x \"${HOME}/y\"":                        false,
		"echo {a,b}.txt":                            true,
		"echo $GIT_AUTHOR_NAME":                     true,
		"echo $GH_PAT":                              false,
		"echo $DB_PASSWORD":                         false,
		"cat <<'EOF' > m.hs\nf :: Int -> Int\nEOF":  true,
		"echo 'bind [::]:80'":                       false,
		"{curl,http://x}":                           false,
		"python3 test_api.py /api/users":            true,
		"python3 client.py /Users/x/.ssh/id_rsa":    false,
		"{c,u}rl x":                                 true,  // a brace list is not looked into as a command
		"echo 'unterminated":                        true,  // not parsed: the sandbox bounds it
		"echo 'unterminated; curl x":                false, // not parsed: judged by its words
		"ls; curl x; echo 'unterminated":            false,
		"git status; git push 'unterminated":        false,
		"cd \"$DIR\" && cat ../../../etc/shadow":    true, // lost track of the directory
		"cd sub && cat ../README.md":                true,
		"cat ../outside/id_rsa":                     false,
		"mkdir -p /usr/local/x":                     false,
		"ls /usr/lib > /tmp/libs.txt":               true,
		"ps":                                        false,
		"tail -n +3 /proc/net/dev | cut -d: -f1":    true, // the sandbox's own network namespace
		"cat /proc/cpuinfo | grep -c processor":     true,
		"cat /proc/self/environ":                    false,
		"cat /proc/1/cmdline":                       false,
		"echo x > /proc/net/dev":                    false,
		"jq -r '.a | env' x.json":                   true, // jq's env is the sandbox's
		"python3 -c 'import os; print(os.environ)'": true,
		"python3 -c 'import socket; socket.create_server((\"0.0.0.0\", 80))'": false,
	} {
		d := sb.Decide(hookInput(t, ws, "Bash", map[string]any{"command": cmd}))
		if d.Allow != allow {
			t.Errorf("%q: allow = %v, want %v (%s)", cmd, d.Allow, allow, d.Reason)
		}
	}
}

func mkdirs(t testing.TB, d string) string {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
