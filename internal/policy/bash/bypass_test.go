package bash_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/policy"
	"github.com/zergrush/zerg/internal/policy/bash"
)

// The cases below come from an outside review of the Bash policy in
// subprocess mode. Each "bypass" was allowed by the policy before the fix
// that follows it in the history; the "guard" cases were already denied and
// stay so.

// bypassFixture is confineFixture plus what the bypasses need: a decoy
// outside/id_rsa inside the workspace, a relative symbolic link that points
// inside from where it is and outside once moved one level up
// (sub/deep/r -> ../../outside/id_rsa), a tree x/out/id_rsa to compare sub
// with, a file of names and a few scripts. The policy also allows the
// commands a task may add with HookSpec.BashAllow (sed, awk, jq, tar, ln,
// make), so their own option and script checks are exercised.
func bypassFixture(t testing.TB) (ws string, p *policy.Policy) {
	t.Helper()
	ws, outside, p := confineFixture(t)
	for _, d := range []string{filepath.Join(ws, "outside"), filepath.Join(ws, "x", "out")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{
		filepath.Join(ws, "outside", "id_rsa"):  "DECOY\n",
		filepath.Join(ws, "x", "out", "id_rsa"): "",
		filepath.Join(ws, "list"):               filepath.Join(outside, "id_rsa") + "\n",
		filepath.Join(ws, "sums"):               "0000  " + filepath.Join(outside, "id_rsa") + "\n",
		filepath.Join(ws, "o.json"):             `{"Replace":{}}`,
		filepath.Join(ws, "prog.sed"):           "r /etc/shadow\n",
		filepath.Join(ws, "prog.awk"):           "{ print }\n",
		filepath.Join(ws, "prog.jq"):            "env\n",
	} {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustSymlink(t, "../../outside/id_rsa", filepath.Join(ws, "sub", "deep", "r"))
	p.Bash.Allow = append(p.Bash.Allow, "sed", "awk", "jq", "tar", "ln", "make")
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return ws, p
}

type bashCase struct {
	cmd   string
	allow bool
	want  string // substring of the reason
	cwd   string // relative to the workspace; "" is the workspace
}

func runBashCases(t *testing.T, ws string, p *policy.Policy, cases []bashCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			d := p.Decide(hookInput(t, filepath.Join(ws, tc.cwd), "Bash", map[string]any{"command": tc.cmd}))
			if d.Allow != tc.allow {
				t.Fatalf("allow = %v, want %v (reason %q)", d.Allow, tc.allow, d.Reason)
			}
			if !strings.Contains(d.Reason, tc.want) {
				t.Fatalf("reason %q does not contain %q", d.Reason, tc.want)
			}
			if strings.Contains(d.Reason, "\n") {
				t.Fatalf("reason is not one line: %q", d.Reason)
			}
		})
	}
}

// TestBashGluedOptionValues: a value glued to a short option inside a
// cluster (-rfFILE, -uoFILE, -vtDIR) is a path like any other.
func TestBashGluedOptionValues(t *testing.T) {
	ws, p := bypassFixture(t)
	runBashCases(t, ws, p, []bashCase{
		// bypass
		{cmd: "grep -rf/etc/shadow README.md", want: "outside the workspace"},
		{cmd: "grep -nf../outside/id_rsa README.md", want: "outside the workspace"},
		{cmd: "grep -nfsub/out/id_rsa README.md", want: "outside the workspace"},
		{cmd: "sort -uo/tmp/zerg-x README.md", want: "outside the workspace"},
		{cmd: "sort -uo../outside/x README.md", want: "outside the workspace"},
		{cmd: "cp -vt../outside README.md", want: "outside the workspace"},
		{cmd: "cp -vtsub/out README.md", want: "outside the workspace"},
		{cmd: "du -shX../outside/id_rsa .", want: "outside the workspace"},
		{cmd: "sed -ni'../outside/*' p README.md", want: "backup suffix"},
		{cmd: "tar -xC../outside -f a.tar", want: "tar -x"},
		// guard
		{cmd: "grep -f/etc/shadow README.md", want: "outside the workspace"},
		{cmd: "sort -o/tmp/x README.md", want: "outside the workspace"},
		{cmd: "cp -t/tmp README.md", want: "outside the workspace"},
		{cmd: "sort --output=../outside/x README.md", want: "outside the workspace"},
		{cmd: "grep --file=sub/out/id_rsa README.md", want: "outside the workspace"},
		{cmd: "git blame --contents=../outside/id_rsa README.md", want: "outside the workspace"},
		{cmd: "go build -o=/tmp/x .", want: "outside the workspace"},
		{cmd: "tar -C/etc -cf x.tar shadow", want: "leaves the workspace"},
		// still allowed
		{cmd: "grep -rn foo .", allow: true, want: "allowed"},
		{cmd: "sort -u -o sorted.txt README.md", allow: true, want: "allowed"},
		{cmd: "cut -d/ -f2 README.md", allow: true, want: "allowed"},
		{cmd: "sort -t/ -k2 README.md", allow: true, want: "allowed"},
		{cmd: "head -n5 README.md", allow: true, want: "allowed"},
		{cmd: "cp -vt sub README.md", allow: true, want: "allowed"},
	})
}

// TestBashOptionsThatReadFiles: options, names lists, scripts and programs
// through which an allowed command reads, writes or runs what the path check
// never saw.
func TestBashOptionsThatReadFiles(t *testing.T) {
	ws, p := bypassFixture(t)
	runBashCases(t, ws, p, []bashCase{
		// bypass: names of files to read taken from a file or stdin
		{cmd: "printf '/etc/passwd\\0' | wc --files0-from=-", want: "files0-from"},
		{cmd: "wc --files0=list", want: "files0-from"},
		{cmd: "du --files0-from=list", want: "files0-from"},
		{cmd: "sort --files0-from=list", want: "files0-from"},
		{cmd: "find . -files0-from list", want: "files0-from"},
		{cmd: "file -f list", want: "not allowed"},
		{cmd: "file --files-from=list", want: "not allowed"},
		{cmd: "sha256sum -c sums", want: "not allowed"},
		{cmd: "md5sum --check sums", want: "not allowed"},
		// bypass: commands treated as pure that read a file
		{cmd: "date -f ../outside/id_rsa", want: "outside the workspace"},
		{cmd: "date --file=sub/out/id_rsa", want: "outside the workspace"},
		{cmd: "date -r /etc/shadow", want: "outside the workspace"},
		{cmd: "test -f ../outside/id_rsa", want: "outside the workspace"},
		{cmd: "\\[ -r /etc/shadow \\]", want: "outside the workspace"},
		{cmd: "echo $(printf '/etc/*')", want: "unquoted"},
		// bypass: following symbolic links out of the workspace
		{cmd: "grep -nR SECRET .", want: "not allowed"},
		{cmd: "grep --der -n SECRET .", want: "not allowed"},
		{cmd: "du -L sub", want: "not allowed"},
		{cmd: "du --dereference sub", want: "not allowed"},
		{cmd: "ls -RL sub", want: "not allowed"},
		{cmd: "ls -R --dereference sub", want: "not allowed"},
		{cmd: "cp -rL sub copy", want: "not allowed"},
		{cmd: "chmod -RL u+w sub", want: "not allowed"},
		{cmd: "diff -r sub x", want: "symbolic link"},
		{cmd: "diff -rN sub x", want: "symbolic link"},
		// bypass: options that run a program or read a file mapping
		{cmd: "sort --compress-prog=sh -S 1 README.md", want: "not allowed"},
		{cmd: "go build -overlay=o.json .", want: "not allowed"},
		{cmd: "go test --toolexec=sh ./...", want: "not allowed"},
		{cmd: "git grep -nOecho x", want: "not allowed"},
		{cmd: "git grep --open-files=echo x", want: "not allowed"},
		{cmd: "make -p", want: "not allowed"},
		{cmd: "make --eval='x:'", want: "not allowed"},
		// bypass: sed scripts
		{cmd: "sed 'r /etc/shadow' README.md", want: "sed script"},
		{cmd: "sed -n 'R sub/out/id_rsa' README.md", want: "sed script"},
		{cmd: "sed -n 'w ../outside/x' README.md", want: "sed script"},
		{cmd: "sed 's/a/b/w /tmp/x' README.md", want: "sed script"},
		{cmd: "sed '1e id' README.md", want: "sed script"},
		{cmd: "sed 's/a/id/e' README.md", want: "sed script"},
		{cmd: "sed -e p -e 'W /tmp/x' README.md", want: "sed script"},
		{cmd: "sed 's/[/]/p;#/w /tmp/x' README.md", want: "sed script"},
		{cmd: "sed -f prog.sed README.md", want: "not allowed"},
		// bypass: awk programs
		{cmd: "awk 'BEGIN{while((getline l < \"/etc/shadow\")>0) print l}'", want: "awk program"},
		{cmd: "awk '{print > \"/tmp/x\"}' README.md", want: "awk program"},
		{cmd: "awk '{print \"a;b\" > \"/tmp/x\"}' README.md", want: "awk program"},
		{cmd: "awk '{print /\"/ > \"/tmp/x\" \"\"}' README.md", want: "awk program"},
		{cmd: "awk '{print | \"sh\"}' README.md", want: "awk program"},
		{cmd: "awk 'BEGIN{system(\"id\")}'", want: "awk program"},
		{cmd: "awk 'BEGIN{print ENVIRON[\"ANTHROPIC_API_KEY\"]}'", want: "awk program"},
		{cmd: "awk -f prog.awk README.md", want: "not allowed"},
		// bypass: jq programs
		{cmd: "jq -n env", want: "jq program"},
		{cmd: "jq -n '$ENV.ANTHROPIC_API_KEY'", want: "jq program"},
		{cmd: "jq -n '\"\\(env)\"'", want: "jq program"},
		{cmd: "jq -n -f prog.jq", want: "not allowed"},
		{cmd: "jq -n -L . 'import \"x\" as $x; $x'", want: "not allowed"},
		// bypass: tar
		{cmd: "tar -cf x.tar -C sub out/id_rsa", want: "outside the workspace"},
		{cmd: "tar -chf x.tar sub", want: "not allowed"},
		{cmd: "tar -cf x.tar -T list", want: "not allowed"},
		{cmd: "tar -xf a.tar --to-command=sh", want: "not allowed"},
		{cmd: "tar -I sh -cf x.tar README.md", want: "not allowed"},
		{cmd: "tar -cf host:x.tar README.md", want: "remote"},
		// guard
		{cmd: "jq -n --rawfile x sub/out/id_rsa '$x'", want: "outside the workspace"},
		{cmd: "grep --dereference-recursive x .", want: "not allowed"},
		{cmd: "find . -fprint x", want: "not allowed"},
		{cmd: "git diff --ext-diff", want: "not allowed"},
		// still allowed
		{cmd: "sed -n 1,20p README.md", allow: true, want: "allowed"},
		{cmd: "sed -n '/readme/,/end/p' README.md", allow: true, want: "allowed"},
		{cmd: "sed -i 's/a/b/g' README.md", allow: true, want: "allowed"},
		{cmd: "sed -e 's,/usr/local,/opt,' -e '$d' README.md", allow: true, want: "allowed"},
		{cmd: "sed ':a;N;$!ba;s/\\n/ /g' README.md", allow: true, want: "allowed"},
		{cmd: "sed '1i header' README.md", allow: true, want: "allowed"},
		{cmd: "sed -n 's/[]]/x/p' README.md", allow: true, want: "allowed"},
		{cmd: "awk '{print $1}' README.md", allow: true, want: "allowed"},
		{cmd: "awk -F: '$2 > 3 {print ($1 > 2), $1}' README.md", allow: true, want: "allowed"},
		{cmd: "jq -r '.env' o.json", allow: true, want: "allowed"},
		{cmd: "jq -n --arg x /etc/passwd '$x'", allow: true, want: "allowed"},
		{cmd: "tar -czf out.tgz README.md sub/deep", allow: true, want: "allowed"},
		{cmd: "tar -tzf out.tgz", allow: true, want: "allowed"},
		{cmd: "date +%Y/%m/%d", allow: true, want: "allowed"},
		{cmd: "date -d '2024-01-01 10:00' +%s", allow: true, want: "allowed"},
		{cmd: "test -f README.md && echo yes", allow: true, want: "allowed"},
		{cmd: "test -n \"$(git status --porcelain)\"", allow: true, want: "allowed"},
		{cmd: "echo \"$(git rev-parse HEAD)\"", allow: true, want: "allowed"},
		{cmd: "wc -l README.md", allow: true, want: "allowed"},
		{cmd: "du -sh sub", allow: true, want: "allowed"},
		{cmd: "ls -R sub", allow: true, want: "allowed"},
		{cmd: "diff -u README.md list", allow: true, want: "allowed"},
		{cmd: "diff -r bin tests", allow: true, want: "allowed"},
		{cmd: "grep -rn /api/v1 .", allow: true, want: "allowed"},
		{cmd: "grep -n -e /etc/passwd README.md", allow: true, want: "allowed"},
		{cmd: "go test -run 'TestA|TestB' -count=1 ./...", allow: true, want: "allowed"},
		{cmd: "tr -d / < README.md", allow: true, want: "allowed"},
	})
}

// TestBashSymlinkRepoint: a symbolic link is judged when it is read through,
// from where it is then; making one that points outside, re-pointing one, or
// moving or copying one (a relative link means something else elsewhere) is
// refused, and so is reading through a link the same command line makes.
func TestBashSymlinkRepoint(t *testing.T) {
	ws, p := bypassFixture(t)
	runBashCases(t, ws, p, []bashCase{
		// bypass: the link target is relative to the link, not to the shell
		{cmd: "ln -s ../outside/id_rsa ../l4", cwd: "sub", want: "link target"},
		{cmd: "ln -s .. ../up && cat ../up/outside/id_rsa", cwd: "sub", want: "link target"},
		{cmd: "ln -s README.md x1; ln -sf sub x1", want: "re-point"},
		{cmd: "ln sub/deep/r hard", want: "symbolic link"},
		{cmd: "ln -s sub dd && cat dd/out/id_rsa", want: "does not exist yet"},
		// bypass: moving or copying links in the line, then reading through them
		{cmd: "mv sub x2 && cat x2/out/id_rsa", want: "symbolic link"},
		{cmd: "cp -r sub y && cat y/out/id_rsa", want: "symbolic link"},
		{cmd: "cp -a sub y", want: "symbolic link"},
		{cmd: "mv sub/deep/r sub/r && cat sub/r", want: "symbolic link"},
		{cmd: "cp -P sub/deep/r sub/r2 && cat sub/r2", want: "symbolic link"},
		{cmd: "cp -s README.md y", want: "not allowed"},
		// bypass: ".." after a link is resolved from where the link points
		{cmd: "cat sub/out/../outside/id_rsa", want: "outside the workspace"},
		{cmd: "grep -n SECRET sub/out/../outside/id_rsa", want: "outside the workspace"},
		// guard
		{cmd: "ln -s /etc x", want: "absolute"},
		{cmd: "ln -s sub/out x", want: "link target"},
		{cmd: "cat link", want: "outside the workspace"},
		{cmd: "mv link l2", want: "symbolic link"},
		// still allowed
		{cmd: "ln -s README.md readme-link", allow: true, want: "allowed"},
		{cmd: "ln -s ../README.md sub/readme-link", allow: true, want: "allowed"},
		{cmd: "cp -r sub/deep/.. copy", want: "symbolic link"},
		{cmd: "mv README.md README.txt", allow: true, want: "allowed"},
		{cmd: "cp -r tests tests2 && cat tests2/run.sh", allow: true, want: "allowed"},
		{cmd: "mkdir -p build && cd build && ls", allow: true, want: "allowed"},
		{cmd: "touch a && mv a b", allow: true, want: "allowed"},
	})
	// A link re-pointed by a move between two commands is judged again
	// when it is read.
	if err := os.Rename(filepath.Join(ws, "sub", "deep", "r"), filepath.Join(ws, "sub", "r")); err != nil {
		t.Fatal(err)
	}
	runBashCases(t, ws, p, []bashCase{
		{cmd: "cat sub/r", want: "outside the workspace"},
		{cmd: "cat r", cwd: "sub", want: "outside the workspace"},
	})
}

// TestBashGlobExpansion: a pattern is expanded against the filesystem when
// the command is judged, and every directory the shell lists and every match
// is checked, not just the part before the first wildcard.
func TestBashGlobExpansion(t *testing.T) {
	ws, p := bypassFixture(t)
	runBashCases(t, ws, p, []bashCase{
		// bypass
		{cmd: "cat sub/o*/id_rsa", want: "outside the workspace"},
		{cmd: "cat l?nk", want: "outside the workspace"},
		{cmd: "cat lin[k]", want: "outside the workspace"},
		{cmd: "cat li[!x]k", want: "outside the workspace"},
		{cmd: "grep -n SECRET *", want: "outside the workspace"},
		{cmd: "ls sub/o*", want: "outside the workspace"},
		{cmd: "echo sub/out/*", want: "outside the workspace"},
		{cmd: "cat .*/outside/id_rsa", want: "outside the workspace"},
		{cmd: "wc -c sub/*/id_rsa", want: "outside the workspace"},
		// guard
		{cmd: "cat /etc/sha*", want: "outside the workspace"},
		{cmd: "cat ../*/id_rsa", want: "outside the workspace"},
		{cmd: "cat {/etc/shadow,x}", want: "outside the workspace"},
		{cmd: "cat ~/.ssh/*", want: "home directory"},
		{cmd: "cat $HOME/.ssh/id_rsa", want: "variables"},
		{cmd: "rm -f sub/*", want: "a pattern"},
		{cmd: "cat < sub/o*/id_rsa", want: "computed"},
		// still allowed
		{cmd: "cat *.md", allow: true, want: "allowed"},
		{cmd: "ls tests/*.sh bin/*", allow: true, want: "allowed"},
		{cmd: "ls -d sub/d*", allow: true, want: "allowed"},
		{cmd: "echo *", allow: true, want: "allowed"},
		{cmd: "grep -n readme *.md", allow: true, want: "allowed"},
		{cmd: "find . -name '*.go'", allow: true, want: "allowed"},
		{cmd: "cat nomatch*", allow: true, want: "allowed"},
	})
}

// TestBashShellForms: redirections, wrappers and quoting that could hide a
// command or a file from the check.
func TestBashShellForms(t *testing.T) {
	ws, p := bypassFixture(t)
	runBashCases(t, ws, p, []bashCase{
		// guard
		{cmd: "cat <(cat /etc/shadow)", want: "process substitution"},
		{cmd: "cat < <(cat /etc/shadow)", want: "process substitution"},
		{cmd: "cat <<< \"$(cat /etc/shadow)\"", want: "outside the workspace"},
		{cmd: "exec 3</etc/shadow", want: "outside the workspace"},
		{cmd: "cat 0</etc/shadow", want: "outside the workspace"},
		{cmd: "cat 0<../outside/id_rsa", want: "outside the workspace"},
		{cmd: "cat <> ../outside/id_rsa", want: "outside the workspace"},
		{cmd: "(cat) < sub/out/id_rsa", want: "outside the workspace"},
		{cmd: "cat <&3 3</etc/shadow", want: "outside the workspace"},
		{cmd: "echo x > /dev/tcp/127.0.0.1/80", want: "outside the workspace"},
		{cmd: "env cat /etc/shadow", want: "outside the workspace"},
		{cmd: "/usr/bin/env cat /etc/shadow", want: "outside the workspace"},
		{cmd: "nice cat /etc/shadow", want: "outside the workspace"},
		{cmd: "timeout 5 cat /etc/shadow", want: "outside the workspace"},
		{cmd: "env PATH=/tmp cat README.md", want: "setting PATH"},
		{cmd: "env -S 'cat README.md'", want: "not allowed"},
		{cmd: "xargs cat < list", want: "not allowed"},
		{cmd: "command -p cat /etc/shadow", want: "outside the workspace"},
		{cmd: "builtin cd /", want: "leaves the workspace"},
		{cmd: "\\cat /etc/shadow", want: "outside the workspace"},
		{cmd: "c''at /etc/shadow", want: "outside the workspace"},
		{cmd: "\"c\"at /etc/shadow", want: "outside the workspace"},
		{cmd: "$'\\x63at' /etc/shadow", want: "quoting"},
		{cmd: "sh -c 'cat /etc/shadow'", want: "outside the workspace"},
		{cmd: "bash -c \"cd sub && cat out/id_rsa\"", want: "outside the workspace"},
		{cmd: "sh -ec 'cat /etc/shadow'", want: "outside the workspace"},
		{cmd: "echo 'cat /etc/shadow' | sh", want: "not an allowed command"},
		{cmd: "POSIXLY_CORRECT=1 grep x README.md", want: "setting POSIXLY_CORRECT"},
		{cmd: "TAR_OPTIONS=--to-command=sh tar -xf a.tar", want: "setting TAR_OPTIONS"},
		// still allowed
		{cmd: "cat README.md | head", allow: true, want: "allowed"},
		{cmd: "go test ./... 2>&1 | tail -5", allow: true, want: "allowed"},
		{cmd: "sh tests/run.sh", allow: true, want: "allowed"},
		{cmd: "ls -la", allow: true, want: "allowed"},
		{cmd: "cat <<< hello", allow: true, want: "allowed"},
		{cmd: "/usr/bin/env cat README.md", allow: true, want: "allowed"},
		{cmd: "nice -n 5 cat README.md", allow: true, want: "allowed"},
		{cmd: "timeout 5 cat README.md", allow: true, want: "allowed"},
	})
}

// TestBashImplicitPaths: paths a command makes up from its operands (diff
// DIR FILE reads DIR/FILE and compares directories entry by entry, cp SRC
// DIR writes DIR/SRC) and names a C-locale shell matches byte by byte.
func TestBashImplicitPaths(t *testing.T) {
	ws, p := bypassFixture(t)
	if err := os.WriteFile(filepath.Join(ws, "x", "link"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "y"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join(filepath.Dir(ws), "outside", "id_rsa"), filepath.Join(ws, "y", "\u00e9"))
	runBashCases(t, ws, p, []bashCase{
		// bypass
		{cmd: "diff . x", want: "symbolic link"},
		{cmd: "diff -q x .", want: "symbolic link"},
		{cmd: "diff x/link .", want: "symbolic link"},
		{cmd: "cp x/link .", want: "outside the workspace"},
		{cmd: "cp -t . x/link", want: "outside the workspace"},
		{cmd: "cat y/??", want: "outside the workspace"},
		// guard
		{cmd: "cat y/?", want: "outside the workspace"},
		{cmd: "cp -r x/out sub", want: "outside the workspace"},
		// still allowed
		{cmd: "diff x/link README.md", allow: true, want: "allowed"},
		{cmd: "diff tests bin", allow: true, want: "allowed"},
		{cmd: "cp README.md sub/deep", allow: true, want: "allowed"},
	})
}

// TestBashShellVariablesSetByTheLine: a line may not set a variable the
// shell gives a meaning to, through a for loop or printf -v: with CDPATH=/
// bash's `cd etc` goes to /etc, so `cat passwd` there read /etc/passwd
// while the check judged sub/etc/passwd. zsh's path and cdpath are PATH and
// CDPATH. Loops over other names, and printf to standard output, stay
// allowed.
func TestBashShellVariablesSetByTheLine(t *testing.T) {
	ws, p, _, _ := subFixture(t)
	runBashCases(t, ws, p, []bashCase{
		{cmd: "for CDPATH in /; do cd etc && cat passwd; done", want: "the loop would set CDPATH"},
		{cmd: "select CDPATH in /; do cd etc && cat passwd; done", want: "the loop would set CDPATH"},
		{cmd: "for cdpath in /; do cd etc && cat passwd; done", want: "the loop would set cdpath"},
		{cmd: "for IFS in 1; do ls; done", want: "the loop would set IFS"},
		{cmd: "for path in /tmp; do ls; done", want: "the loop would set path"},
		{cmd: "for PATH in bin; do ls; done", want: "the loop would set PATH"},
		{cmd: "for GIT_DIR in /etc; do git status; done", want: "the loop would set GIT_DIR"},
		{cmd: "printf -v CDPATH / ; cd etc && cat passwd", want: "printf -v sets a shell variable"},
		{cmd: "printf -vCDPATH /; cd etc && cat passwd", want: "printf -v sets a shell variable"},
		{cmd: "command printf -v CDPATH %s /; cd etc && cat passwd", want: "printf -v sets a shell variable"},
		{cmd: "printf \"$(echo -v)\" CDPATH /; cd etc && cat passwd", want: "printf -v sets a shell variable"},
		// the twins that stay allowed
		{cmd: "for f in README.md; do cat \"$f\"; done", allow: true, want: "allowed"},
		{cmd: "for dir in sub bin; do ls \"$dir\"; done", allow: true, want: "allowed"},
		{cmd: "for line in a b; do echo \"$line\"; done", allow: true, want: "allowed"},
		{cmd: "printf '%s\\n' a b", allow: true, want: "allowed"},
		{cmd: "printf -- -v", allow: true, want: "allowed"},
		{cmd: "printf \"%s\\n\" \"$(cat README.md)\"", allow: true, want: "allowed"},
	})
}

// TestBashBSDUserland: on macOS sed and tar are BSD's. BSD sed's -i takes
// the next word as its backup suffix, so `sed -i ” '1w FILE' f` writes
// FILE, where GNU sed (and the check, reading it the GNU way) takes ” for
// the script and '1w FILE' for a file in the workspace; -l takes no value
// there. With bsdUserland a sed line must pass both readings. BSD tar's
// @ARCHIVE operand adds another archive's members, wherever it is: refused
// everywhere (for GNU tar it is a file named @…).
func TestBashBSDUserland(t *testing.T) {
	ws, p := bypassFixture(t)
	defer bash.SetBSDUserland(false)()
	runBashCases(t, ws, p, []bashCase{
		{cmd: "sed -i 's/a/b/' README.md", allow: true, want: "allowed"},
		{cmd: "sed -i '' '1w /etc/x' README.md", allow: true, want: "allowed"}, // GNU sed: the script is '', the files '1w /etc/x' and README.md
		{cmd: "tar -cf out.tar @/etc/x.tar", want: "members of another archive"},
		{cmd: "tar -cf out.tar README.md", allow: true, want: "allowed"},
	})
	defer bash.SetBSDUserland(true)()
	runBashCases(t, ws, p, []bashCase{
		{cmd: "sed -i '' '1w /etc/x' README.md", want: "as the BSD sed of macOS reads it"},
		{cmd: "sed -i '' 'r /etc/passwd' README.md", want: "as the BSD sed of macOS reads it"},
		{cmd: "sed -i '' -e 's/a/b/w /etc/x' README.md", want: "as the BSD sed of macOS reads it"},
		{cmd: "sed -l 'w /etc/x' p README.md", want: "as the BSD sed of macOS reads it"},
		{cmd: "sed -ni '' 'w /etc/x' README.md", want: "as the BSD sed of macOS reads it"},
		{cmd: "sed -i '' s/a/b/ /etc/passwd", want: "outside the workspace"},
		{cmd: "sed -i '/../../../etc/x' s/a/b/ README.md", want: "the backup README.md/../../../etc/x"},
		{cmd: "sed -i 's/a/b/' README.md", want: "as the BSD sed of macOS reads it"}, // BSD sed: the suffix s/a/b/, the script README.md
		{cmd: "sed -z s/a/b/ README.md", want: "as the BSD sed of macOS reads it"},
		{cmd: "tar -cf out.tar @/etc/x.tar", want: "members of another archive"},
		// the twins that stay allowed
		{cmd: "sed -i '' 's/a/b/' README.md", allow: true, want: "allowed"},
		{cmd: "sed -i.bak 's/a/b/' README.md", allow: true, want: "allowed"},
		{cmd: "sed -E -n -e '1,5p' -e '/x/d' README.md", allow: true, want: "allowed"},
		{cmd: "sed -n '1,5p' README.md", allow: true, want: "allowed"},
		{cmd: "cat README.md | sed 's/a/b/'", allow: true, want: "allowed"},
		{cmd: "tar -cf out.tar README.md", allow: true, want: "allowed"},
	})
}

// TestBashZshReadings: Claude Code runs its Bash tool with zsh when SHELL
// names no bash and zsh is installed (every Mac), and some lines bash
// parses read otherwise there (each checked with zsh 5.9): >! and >>!
// overwrite the file that follows (bash writes a file named !…), path and
// cdpath are PATH and CDPATH, =ls is /usr/bin/ls, 010 is 10. The check
// parses bash and refuses what zsh would read differently.
func TestBashZshReadings(t *testing.T) {
	ws, p, _, _ := subFixture(t)
	runBashCases(t, ws, p, []bashCase{
		{cmd: "echo x >! /etc/cronx", want: "zsh reads >! as a redirection"},
		{cmd: "echo x >>! /etc/cronx", want: "zsh reads >>! as a redirection"},
		{cmd: "echo x &>! /etc/cronx", want: "zsh reads &>! as a redirection"},
		{cmd: "echo x >!/etc/cronx", want: "zsh reads >! as a redirection"},
		{cmd: "cdpath=/; cd etc && cat passwd", want: "setting cdpath is not allowed"},
		{cmd: "cdpath=/ cd etc", want: "setting cdpath is not allowed"},
		{cmd: "path=bin; ls", want: "setting path is not allowed"},
		{cmd: "cat =ls", want: "zsh reads a word starting with = as the path of a program"},
		{cmd: "A==ls cat README.md", want: "zsh reads a word starting with ="},
		{cmd: "echo $((010))", want: "arithmetic"},
		// the twins that stay allowed
		{cmd: "echo x > out.txt", allow: true, want: "allowed"},
		{cmd: "echo x >| out.txt", allow: true, want: "allowed"},
		{cmd: "echo x > '!x'", allow: true, want: "allowed"},
		{cmd: "[ a == b ] || [ a = b ] || echo differ", allow: true, want: "allowed"},
		{cmd: "echo '=ls' \"=x\" \\=y a=b", allow: true, want: "allowed"},
		{cmd: "mypath=sub ls", allow: true, want: "allowed"},
		{cmd: "echo $((10))", allow: true, want: "allowed"},
	})
}
