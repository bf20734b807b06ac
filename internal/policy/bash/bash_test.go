package bash_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/policy"
	"github.com/zergrush/zerg/internal/policy/bash"
)

// confineFixture is a workspace with scripts, a subdirectory, a .git file, a
// symlink to a secret outside, and a secret outside next to it.
func confineFixture(t testing.TB) (ws, outside string, p *policy.Policy) {
	t.Helper()
	root := t.TempDir()
	ws = filepath.Join(root, "ws")
	outside = filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(ws, "bin"), filepath.Join(ws, "tests"), filepath.Join(ws, "sub", "deep"), outside, filepath.Join(root, "shared")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{
		filepath.Join(ws, "bin", "greet-all"):   "echo hi\n",
		filepath.Join(ws, "tests", "run.sh"):    "exit 0\n",
		filepath.Join(ws, "README.md"):          "readme\n",
		filepath.Join(ws, ".git"):               "gitdir: /elsewhere\n",
		filepath.Join(outside, "id_rsa"):        "SECRET\n",
		filepath.Join(root, "shared", "ctx.md"): "context\n",
	} {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustSymlink(t, filepath.Join(outside, "id_rsa"), filepath.Join(ws, "link"))
	mustSymlink(t, outside, filepath.Join(ws, "sub", "out"))
	p = &policy.Policy{
		Version: policy.Version, Workspace: ws, Allow: []string{"src/**"},
		ReadDirs: []string{filepath.Join(root, "shared")},
		Bash:     bash.Policy{Allow: bash.DefaultAllow(), Commands: []string{"go test ./... && curl -s http://127.0.0.1:1/health"}},
	}
	p.Bash.Allow = append(p.Bash.Allow, bash.ToolchainRules("go vet ./... && go test ./...")...)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return ws, outside, p
}

func TestDecideBash(t *testing.T) {
	ws, outside, p := confineFixture(t)
	secret := filepath.Join(outside, "id_rsa")
	cases := []struct {
		cmd   string
		allow bool
		want  string // substring of the reason
	}{
		// allowed: the demo's commands, read-only tools, in-workspace writes
		{"sh bin/greet-all", true, "allowed"},
		{"sh tests/run.sh", true, "allowed"},
		{"sh bin/shout-missing", false, "not an allowed command"},
		{"./tests/run.sh", true, "allowed"},
		{"bash -c 'sh tests/run.sh && echo ok'", true, "allowed"},
		{"ls -la", true, "allowed"},
		{"cat README.md | grep -n readme | wc -l", true, "allowed"},
		{"cat sub/../README.md", true, "allowed"},
		{"head -n 3 README.md; tail -n1 README.md", true, "allowed"},
		{"grep -rn 'func main' .", true, "allowed"},
		{"find . -name '*.go' -type f", true, "allowed"},
		{"echo hi > out.txt 2>&1", true, "allowed"},
		{"echo \"it's $(date)\"", true, "allowed"},
		{"mkdir -p gen && touch gen/a", true, "allowed"},
		{"cd sub && ls", true, "allowed"},
		{"(cd sub; cat deep/../../README.md)", false, "outside the workspace"}, // conservative: every cwd a cd may leave is tried
		{"(cd sub && cat deep/../../README.md)", true, "allowed"},              // after cd DIR &&, the chain runs in DIR only
		{"(cd sub && ls deep)", true, "allowed"},
		{"git status --porcelain && git diff HEAD -- README.md", true, "allowed"},
		{"git log --oneline -5", true, "allowed"},
		{"id -u > uid.txt", true, "allowed"},
		{"cat " + filepath.Join(ws, "README.md"), true, "allowed"},
		{"cat /dev/null > empty.txt", true, "allowed"},
		{"go test ./... 2>&1 | tail -20", true, "allowed"},
		{"go vet ./...", true, "allowed"},
		{"go test ./... && curl -s http://127.0.0.1:1/health", true, "the task's own command"},
		{"cat <<'EOF' > notes.txt\nsome $text `here`\nEOF", true, "allowed"},
		{"printf 'a\\n' # a comment", true, "allowed"},
		{"FOO=1 sh tests/run.sh", true, "allowed"},
		{"cat " + filepath.Join(filepath.Dir(ws), "shared", "ctx.md"), true, "allowed"},
		{"true\nls", true, "allowed"},
		{"ls \\\n  -la", true, "allowed"},

		// reads outside the workspace
		{"cat " + secret, false, "outside the workspace"},
		{"cat /etc/shadow", false, "outside the workspace"},
		{"cat ~/.ssh/id_rsa", false, "home directory"},
		{"cat ../outside/id_rsa", false, "outside the workspace"},
		{"cat link", false, "outside the workspace"},
		{"cat sub/out/id_rsa", false, "outside the workspace"},
		{"grep -r KEY /root", false, "outside the workspace"},
		{"ls /", false, "outside the workspace"},
		{"cat /proc/self/environ", false, "outside the workspace"},
		{"cat < /etc/passwd", false, "outside the workspace"},
		{"cat /etc/pass*", false, "outside the workspace"},
		{"head --file=/etc/passwd", false, "outside the workspace"},
		{"sort -o/tmp/x README.md", false, "outside the workspace"},
		{"cd .. && cat outside/id_rsa", false, "leaves the workspace"},
		{"cd sub; cat ../../outside/id_rsa", false, "outside the workspace"},
		{"cd sub | true; cat ../../outside/id_rsa", false, "outside the workspace"},
		{"cat $(echo " + secret + ")", false, "computed at run time"},
		{"cat `printf x`", false, "computed at run time"},

		// network, privilege, environment
		{"curl -s https://example.com", false, "network access"},
		{"ls && curl http://x", false, "network access"},
		{"echo $(curl http://x)", false, "network access"},
		{"wget http://x", false, "network access"},
		{"nc -l 8080", false, "network access"},
		{"/usr/bin/curl http://x", false, "network access"},
		{"sudo ls", false, "privilege change"},
		{"env", false, "environment"},
		{"printenv ANTHROPIC_API_KEY", false, "environment"},
		{"set", false, "environment"},
		{"echo $ANTHROPIC_API_KEY", false, "variables"},
		{"echo \"${HOME}\"", false, "parameter expansion"},
		{"cat /proc/1/environ", false, "outside"},
		{"PATH=/tmp ls", false, "setting PATH"},
		{"LD_PRELOAD=/tmp/x.so ls", false, "setting LD_PRELOAD"},

		// git
		{"git push origin main", false, "git push"},
		{"git -C . push", false, "git push"},
		{"git remote add x y", false, "git remote"},
		{"git config core.hooksPath x", false, "git config"},
		{"git -c core.pager=sh log", false, "git -c"},
		{"git commit -m x", true, "allowed"}, // no hook can run (TestBashGitHooks)
		{"git grep -Ofoo x", false, "not allowed"},

		// writes into protected places
		{"echo x > .git/hooks/pre-commit", false, "inside .git"},
		{"cp bin/greet-all .git/hooks/pre-commit", false, "inside .git"},
		{"echo {} > .claude/settings.json", false, "settings"},
		{"echo x > .claude/settings.json", false, "settings"},
		{"rm -rf .zerg", false, "inside .zerg"},
		{"tee .git/config < README.md", false, "inside .git"},
		{"echo x > /tmp/out", false, "outside the workspace"},
		{"rm -rf *", false, "a pattern"},

		// not parsable safely
		{"echo 'unterminated", false, "cannot be checked"},
		{"for f in *; do cat $f; done", false, "cannot be checked"},
		{"if true; then ls; fi", true, "allowed"},
		{"if true; then cat /etc/shadow; fi", false, "outside the workspace"},
		{"cat <(ls)", false, "process substitution"},
		{"echo $((1+2))", true, "allowed"},
		{"echo $((a[$(cat /etc/shadow)]))", false, "arithmetic"},
		{"echo $'\\x41'", false, "quoting"},
		{"ls &&", false, "must be followed by a statement"},
		{"; ls", false, "can only immediately follow a statement"},
		{"{ ls; }", true, "allowed"},
		{"{ cat /etc/shadow; }", false, "outside the workspace"},
		{"f() { ls; }", false, "cannot be checked"},
		{"eval ls", true, "allowed"},
		{"eval 'cat /etc/shadow'", false, "outside the workspace"},
		{"eval \"$(echo ls)\"", false, "computed"},
		{"xargs cat < README.md", false, "runs a command"},
		{"find . -exec cat README.md \\;", true, "allowed"},
		{"find . -exec cat {} \\;", true, "allowed"},
		{"find . -exec rm {} \\;", false, "only commands that read"},
		{"find / -exec cat {} \\;", false, "outside the workspace"},
		{"sh -c \"$X\"", false, "variables"},
		{"cat <<EOF\n$HOME\nEOF", false, "here-document"},
		{"cat <<EOF\nno end", false, "unclosed here-document"},
		{"python3 -c 'print(1)'", false, "not an allowed command"},
		{"make", false, "not an allowed command"},
		{"/tmp/evil", false, "outside the workspace"},
		{"link", false, "not an allowed command"},
	}
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			d := p.Decide(hookInput(t, ws, "Bash", map[string]any{"command": tc.cmd}))
			if d.Allow != tc.allow {
				t.Fatalf("allow = %v, want %v (reason %q)", d.Allow, tc.allow, d.Reason)
			}
			if !strings.Contains(d.Reason, tc.want) {
				t.Fatalf("reason %q does not contain %q", d.Reason, tc.want)
			}
			if strings.Contains(d.Reason, "\n") {
				t.Fatalf("reason is not one line: %q", d.Reason)
			}
			if !tc.allow && strings.Contains(d.Reason, "SECRET") {
				t.Fatalf("reason leaks file contents: %q", d.Reason)
			}
		})
	}
}

func TestDecideBashCwd(t *testing.T) {
	ws, outside, p := confineFixture(t)
	// The shell's directory comes from the hook input; outside the workspace
	// every command is refused, inside a subdirectory paths resolve from it.
	if d := p.Decide(hookInput(t, outside, "Bash", map[string]any{"command": "ls"})); d.Allow {
		t.Fatalf("ls from outside allowed: %s", d.Reason)
	}
	if d := p.Decide(hookInput(t, filepath.Join(ws, "sub"), "Bash", map[string]any{"command": "cat ../README.md"})); !d.Allow {
		t.Fatalf("cat ../README.md from sub denied: %s", d.Reason)
	}
	if d := p.Decide(hookInput(t, filepath.Join(ws, "sub"), "Bash", map[string]any{"command": "cat ../../outside/id_rsa"})); d.Allow {
		t.Fatal("escape from sub allowed")
	}
	if d := p.Decide(hookInput(t, "", "Bash", map[string]any{"command": "ls"})); d.Allow {
		t.Fatal("no cwd allowed")
	}
	if d := p.Decide(hookInput(t, ws, "Bash", map[string]any{"description": "x"})); d.Allow {
		t.Fatal("no command allowed")
	}
}

func TestDecideBashUnrestricted(t *testing.T) {
	ws, _, p := confineFixture(t)
	p.Bash = bash.Policy{Unrestricted: true}
	if d := p.Decide(hookInput(t, ws, "Bash", map[string]any{"command": "curl x; env"})); !d.Allow {
		t.Fatalf("unrestricted denied: %s", d.Reason)
	}
}

func TestDecideBashRules(t *testing.T) {
	ws, _, p := confineFixture(t)
	p.Bash = bash.Policy{Allow: []string{"git log", "go test ./...", "sh {script}", "*"}}
	// "*" allows any command name, but never the hard-denied ones.
	for cmd, allow := range map[string]bool{
		"git log":              true,
		"go test ./...":        true,
		"make all":             true,
		"curl x":               false,
		"git push":             false,
		"sh -c 'curl x'":       false,
		"cat /etc/passwd":      false,
		"sh bin/greet-all arg": true,
	} {
		if d := p.Decide(hookInput(t, ws, "Bash", map[string]any{"command": cmd})); d.Allow != allow {
			t.Errorf("%q: allow %v, want %v (%s)", cmd, d.Allow, allow, d.Reason)
		}
	}
	p.Bash = bash.Policy{Allow: []string{"go test ./..."}}
	if d := p.Decide(hookInput(t, ws, "Bash", map[string]any{"command": "go test ./x"})); d.Allow {
		t.Error("rule words are exact unless they are patterns")
	}
	if d := p.Decide(hookInput(t, ws, "Bash", map[string]any{"command": "go test ./... -run X"})); !d.Allow {
		t.Errorf("rules are prefixes: %s", d.Reason)
	}
}

func TestToolchainRules(t *testing.T) {
	for line, want := range map[string]string{
		"go test ./...":                 "go build",
		"sh tests/run.sh && make check": "make",
		"python3 -m pytest -q":          "pytest",
		"npm test":                      "npm run",
		"cargo test":                    "cargo clippy",
	} {
		got := bash.ToolchainRules(line)
		found := false
		for _, r := range got {
			found = found || r == want
		}
		if !found {
			t.Errorf("bash.ToolchainRules(%q) = %v, want %q in it", line, got, want)
		}
	}
	if got := bash.ToolchainRules("sh tests/run.sh | grep ok"); len(got) != 0 {
		t.Errorf("no toolchain: %v", got)
	}
	if got := bash.ToolchainRules("echo '"); got != nil {
		t.Errorf("unparsable: %v", got)
	}
}

func TestValidateBashRules(t *testing.T) {
	ws := t.TempDir()
	for _, bp := range []bash.Policy{{Allow: []string{" "}}, {Allow: []string{"ls ["}}, {Commands: []string{""}}} {
		p := &policy.Policy{Version: policy.Version, Workspace: ws, Bash: bp}
		if err := p.Validate(); err == nil {
			t.Errorf("%+v validated", bp)
		}
	}
	for _, p := range []*policy.Policy{
		{Version: policy.Version, Workspace: ws, ReadDirs: []string{"rel"}},
		{Version: policy.Version, Workspace: ws, Protected: []string{"rel"}},
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v validated", p)
		}
	}
}

// FuzzParseBash: the parser never panics, and whatever it accepts is
// judged without panicking.
func FuzzParseBash(f *testing.F) {
	for _, s := range []string{"ls -la", "a && b || c; d | e &", "echo \"$(cat <<'E'\nx\nE\n)\"", "`a \\`b\\``", "(cd x && y) > z 2>&1", "x=1 y=$(z) w"} {
		f.Add(s)
	}
	ws := f.TempDir()
	p := &policy.Policy{Version: policy.Version, Workspace: ws, Bash: bash.Policy{Allow: bash.DefaultAllow()}}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = bash.ParseBash(s, 0)
		raw := `{"command":` + quoteJSON(s) + `}`
		_ = p.Decide(&policy.HookInput{Cwd: ws, ToolName: "Bash", ToolInput: []byte(raw)})
	})
}

func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
