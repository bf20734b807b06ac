package bash_test

import (
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/policy"
	"github.com/zergrush/zerg/internal/policy/bash"
)

// shellPolicies are the policies TestBashShellConstructs decides under:
// the bypass fixture's and the same with the rule "*" (subprocess mode:
// every program allowed, so only the parse and the paths decide), and
// sandbox mode's, all on one workspace.
func shellPolicies(t testing.TB) (ws string, ps []*policy.Policy) {
	ws, bp := bypassFixture(t)
	star := *bp
	star.Bash.Allow = append(slices.Clone(bp.Bash.Allow), "*")
	root := filepath.Dir(ws)
	star.Bash.Scratch = []string{mkdirs(t, filepath.Join(root, "attempt", "tmp"))}
	star.Bash.SharedTmp = mkdirs(t, filepath.Join(root, "sharedtmp"))
	sb := &policy.Policy{Version: policy.Version, Workspace: ws, Allow: bp.Allow, ReadDirs: bp.ReadDirs,
		Bash: bash.Policy{Sandboxed: true, Scratch: star.Bash.Scratch}}
	for _, p := range []*policy.Policy{bp, &star, sb} {
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	return ws, []*policy.Policy{bp, &star, sb}
}

// TestBashShellConstructs: the shell's constructs, one a line, decided in
// the three policies of shellPolicies. Subprocess mode refuses what
// depends on run time state (fail closed); sandbox mode lets it through
// unless it reaches outside. The lines come from the differential test of
// the hand-written parser this package had and the mvdan.cc/sh walker
// (FuzzOldVsNew), with the decisions of the walker.
func TestBashShellConstructs(t *testing.T) {
	ws, ps := shellPolicies(t)
	for _, tc := range []struct {
		cmd               string
		bypass, star, sbx bool
	}{
		{"cat <(ls) >(wc)", false, false, true},                               // process substitution is not allowed
		{"a=(x y) ls", false, false, true},                                    // 1:1: inline variables cannot be arrays
		{"declare -a a=(1 2); echo ${a[0]}", false, false, true},              // arrays are not allowed
		{"a[1]=x cat f", false, false, true},                                  // 1:1: inline variables cannot be arrays
		{"case x in a|b) ls;; *) cat /etc/shadow;; esac", false, false, true}, // case is not allowed; use if
		{"[[ -f x && $(cat /etc/shadow) ]]", false, false, true},              // [[ … ]] is not allowed; use test or [
		{"f() { cat /etc/shadow; }; f", false, false, true},                   // functions are not allowed
		{"function g { ls; }", false, false, true},                            // functions are not allowed
		{"coproc cat /etc/shadow", false, false, true},                        // coproc is not allowed
		{"coproc n { ls; }", false, false, true},                              // coproc is not allowed
		{"cat <<E\n$(cat /etc/shadow)\nE", false, false, true},                // expansion in a here-document; quote its delimiter (<<'EOF')
		{"cat <<'E'\n$(cat /etc/shadow)\nE", true, true, true},
		{"cat <<-E\n\tx\n\tE", true, true, true},
		{"cat <<< $(ls)", true, true, true},
		{"cat <<< \"$HOME\"", false, false, true},   // variables ($NAME) are not allowed
		{"echo $'\\x63url'", false, false, true},    // $'…' quoting is not allowed
		{"echo $\"x\"", false, false, true},         // $"…" quoting is not allowed
		{"ls @(a|b)", false, false, true},           // an extended pattern @(…) is not allowed
		{"ls !(x)", false, false, true},             // an extended pattern !(…) is not allowed
		{"ls +(a)*", false, false, true},            // an extended pattern +(…) is not allowed
		{"echo {1..3}", false, false, true},         // a brace range is not allowed; list the words
		{"touch /etc/x{1..3}", false, false, false}, // a brace range is not allowed; list the words
		{"echo {a,b}{c,d}", true, true, true},
		{"echo $((1+2))", true, true, true},
		{"echo $((x+2))", false, false, true},                    // arithmetic $(( )) is not allowed but on numbers
		{"((x++))", false, false, true},                          // arithmetic (( )) is not allowed
		{"let x=1", false, false, true},                          // let is not allowed (arithmetic)
		{"for ((i=0;i<3;i++)); do ls; done", false, false, true}, // arithmetic for (( )) is not allowed
		{"for x; do ls; done", false, false, true},               // for x without a list of words is not allowed
		{"select x in a b; do ls; done", true, true, true},
		{"until false; do ls; done", true, true, true},
		{"while read l; do echo $l; done < f", false, false, true}, // variables ($NAME) are not allowed
		{"echo $(echo $(echo `ls`))", false, false, true},          // the unquoted command substitution in `ls` is split and expan
		{"echo `echo \\`ls\\``", false, false, true},               // the unquoted command substitution in `ls\` is split and expa
		{"exec {fd}>out", false, false, true},                      // redirection {fd}> is not allowed
		{"ls 3>&1 1>&2 2>&3", true, true, true},
		{"ls &>/dev/null", true, true, true},
		{"ls >| f", true, true, true},
		{"ls <> f", true, true, true},
		{"! cd x && ls", true, true, true},
		{"time cd sub && cat f", true, true, true},
		{"cd sub && cd deep && cat r", true, true, true},
		{"(cd sub && ls) && cat f", true, true, true},
		{"{ cd sub; } && cat f", true, true, true},
		{"x=$(cd /; pwd) cat f", false, false, false},              // cd / leaves the workspace
		{"export A=$(cat /etc/shadow)", false, false, true},        // /etc/shadow is outside the workspace
		{"local x=1", false, false, true},                          // local is not allowed (an environment dump or change)
		{"readonly y", false, false, true},                         // readonly is not allowed (an environment dump or change)
		{"typeset -x z=2", false, false, false},                    // typeset without names is not allowed (it prints the environm
		{"echo ${x:-$(cat /etc/shadow)}", false, false, true},      // parameter expansion ${…} is not allowed
		{"echo ${#x} ${x/a/b} ${!x} ${x:1:2}", false, false, true}, // parameter expansion ${…} is not allowed
		{"echo $0 $1 $@ $* $_", false, false, true},                // variables ($NAME) are not allowed
		{"echo $? $$ $! $# $-", true, true, true},
		{"ls *.go [a-c]* x?", true, true, true},
		{"ls x[/]y", false, false, true},               // a bracket pattern with '/' in it
		{"ls [[:alpha:]]", false, false, true},         // a bracket pattern with '[' in it
		{"cat ~/x ~root/y a=~/z", false, false, false}, // ~/x names a home directory
		{"cat $HOME/x ${HOME}/y", false, false, false}, // variables ($NAME) are not allowed
		{"ls \\\n -la", true, true, true},
		{"echo 'a\nb' \"c\nd\"", true, true, true},
		{"ls # comment && curl x", true, true, true},
		{"ls; ; ls", false, false, true},                                                       // 1:5: `;` can only immediately follow a statement
		{"ls &&", false, false, true},                                                          // 1:4: `&&` must be followed by a statement
		{"ls | | wc", false, false, true},                                                      // 1:4: `|` must be followed by a statement
		{"(", false, false, true},                                                              // 1:1: `(` must be followed by a statement list
		{")", false, false, true},                                                              // 1:1: `)` can only be used to close a subshell
		{"{ ls", false, false, true},                                                           // 1:1: reached EOF without matching `{` with `}`
		{"if ls; then", false, false, true},                                                    // 1:8: `then` must be followed by a statement list
		{"if ls; then cd sub; elif false; then ls; else cd /; fi; cat f", false, false, false}, // cd / leaves the workspace
		{"\x00", false, false, true},                                                           // a NUL byte or a carriage return in the command
		{"ls\x00; curl x", false, false, false},                                                // a NUL byte or a carriage return in the command
		{"A+=", true, true, true},
		{"A+= ls", true, true, true},
		{"A+=x cat /etc/shadow", false, false, true}, // /etc/shadow is outside the workspace
		{"<h}e{", true, true, true},
		{"cat >{a,b}", false, false, true}, // a brace list as a redirection target
		{"ls\rcurl x", false, false, true}, // a NUL byte or a carriage return in the command
		{"echo e\\", false, false, true},   // trailing backslash
		{"sh -c 'cd sub && cat r'", true, true, true},
		{"bash -c \"curl $(x)\"", false, false, true}, // x is not an allowed command
		{"eval 'ls' \"x\"", true, true, true},
		{"!<'0'", true, true, true},
		{"(cd x && y) > z 2>&1", false, true, true},         // y is not an allowed command
		{"in a directory of the shared", false, true, true}, // in a is not an allowed command
		{"{\"Replace\":{}}", false, true, true},             // {Replace:{}} is not an allowed command
		{"{\"session_id\":\"91792bfd-0000-4000-8000-000000000000\",\"transcript_path\":\"/h/.claude/projects/-w/91792bfd.jsonl\",\"cwd\":\"/w\",\"prompt_id\":\"061c29f0\",\"permission_mode\":\"acceptEdits\",\"effort\":{\"level\":\"high\"},\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"/w/denied.txt\",\"content\":\"hi from fake\\n\"},\"tool_use_id\":\"toolu_fake0001\"}", false, false, true}, // session_id:91792bfd-0000-4000-8000-000000000000 transcript_p
		// What reaches outside, wherever the line hides it.
		{"cat <<'E' > .git/hooks/pre-commit\nx\nE", false, false, true}, // redirection: .git/hooks/pre-commit is inside .git
		{"echo \"$(curl x)\"", false, false, false},                     // curl is not allowed (network access)
		{"echo \"`curl x`\"", false, false, false},                      // curl is not allowed (network access)
		{"ls > \"$(echo /etc/passwd)\"", false, false, true},            // redirection to a computed file ""
		{"eval \"$(cat f)\"", false, false, true},                       // eval with a computed command
		{"bash -c \"$X\"", false, false, true},                          // variables ($NAME) are not allowed
		{"a=$(curl x)", false, false, false},                            // curl is not allowed (network access)
		{"for f in a b; do cat $f; done", true, true, true},
		{"for f in \"a b\"; do cat $f; done", false, false, true},           // for f: the loop word "a b" is split or expanded unquoted; qu
		{"for f in /etc/passwd x; do cat \"$f\"; done", false, false, true}, // /etc/passwd is outside the workspace
		{"[ -f $(echo /etc/shadow) ]", false, false, true},                  // the unquoted command substitution in $(echo /etc/shadow) is
		{"cat $'/etc/shadow'", false, false, true},                          // $'…' quoting is not allowed
		{"c\\url x", false, false, false},                                   // curl is not allowed (network access)
		{"\"cu\"rl x", false, false, false},                                 // curl is not allowed (network access)
		{"{curl,x}", false, false, false},                                   // curl is not allowed (network access)
		{"cat ~/.ssh/id_rsa", false, false, false},                          // ~/.ssh/id_rsa names a home directory
		{"cat /etc/sha*", false, false, true},                               // the pattern /etc/sha* lists a directory: /etc is outside the
		{"ls | curl -d @- x", false, false, false},                          // curl is not allowed (network access)
		{"x=1; curl x", false, false, false},                                // curl is not allowed (network access)
		{"time curl x", false, false, false},                                // curl is not allowed (network access)
		{"! curl x", false, false, false},                                   // curl is not allowed (network access)
		{"(curl x)", false, false, false},                                   // curl is not allowed (network access)
		{"{ curl x; }", false, false, false},                                // curl is not allowed (network access)
		{"if true; then curl x; fi", false, false, false},                   // curl is not allowed (network access)
		{"while curl x; do :; done", false, false, false},                   // curl is not allowed (network access)
		{"cat <(curl x)", false, false, false},                              // process substitution is not allowed
		{"cat <<E\n$(curl x)\nE", false, false, false},                      // expansion in a here-document; quote its delimiter (<<'EOF')
		{"echo ${x:-$(curl x)}", false, false, false},                       // parameter expansion ${…} is not allowed
		{"[[ $(curl x) ]]", false, false, false},                            // [[ … ]] is not allowed; use test or [
		{"f() { curl x; }", false, false, false},                            // functions are not allowed
		{"case a in a) curl x;; esac", false, false, false},                 // case is not allowed; use if
		{"echo $(( $(curl x) ))", false, false, false},                      // arithmetic $(( )) is not allowed
		{"coproc curl x", false, false, false},                              // coproc is not allowed
		{"let x=$(curl x)", false, false, false},                            // let is not allowed (arithmetic)
		{"declare x=$(curl x)", false, false, false},                        // curl is not allowed (network access)
		{"a=(1 $(curl x))", false, false, false},                            // arrays are not allowed
		{"export X=$(curl x)", false, false, false},                         // curl is not allowed (network access)
		{"cat x 2>/etc/x", false, false, false},                             // redirection: /etc/x is outside the workspace
		{"cat x >&/etc/x", false, false, false},                             // redirection: /etc/x is outside the workspace
		{"ls 1>&-", true, true, true},
		{"cat <&3", true, true, true},
		{"echo x >> ~/.bashrc", false, false, false},                                                       // redirection to a computed file "~/.bashrc"
		{"cd /tmp && cat x", false, false, true},                                                           // cd /tmp leaves the workspace
		{"cd sub && cat ../../x", false, false, false},                                                     // ../../x is outside the workspace
		{"echo $(echo $(echo $(echo $(echo $(echo $(echo $(echo $(echo $(ls)))))))))", false, false, true}, // nested too deeply
	} {
		want := []bool{tc.bypass, tc.star, tc.sbx}
		raw := []byte(`{"command":` + quoteJSON(tc.cmd) + `}`)
		for i, p := range ps {
			d := p.Decide(&policy.HookInput{Cwd: ws, ToolName: "Bash", ToolInput: raw})
			if d.Allow != want[i] {
				t.Errorf("%q in policy %d: allow = %v, want %v (%s)", tc.cmd, i, d.Allow, want[i], d.Reason)
			}
			if strings.Contains(d.Reason, "\n") {
				t.Errorf("%q: reason is not one line: %q", tc.cmd, d.Reason)
			}
		}
	}
}

// Brace lists side by side multiply: twenty-four {a,b} are some 16 million
// words. The count stops at the word limit, without making the words: the
// hook stays small and quick whatever a worker writes, and the curl beside
// them is still seen (subprocess mode refuses the list itself). Expanded
// eagerly, twenty of them took the hook 7 s and 4.4 GB.
func TestBashBraceBlowUpIsBounded(t *testing.T) {
	ws, sub, sb := modeFixture(t)
	cmd := "echo " + strings.Repeat("{a,b}", 24) + " && curl http://x"
	for name, p := range map[string]*policy.Policy{"subprocess": sub, "sandbox": sb} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d := p.Decide(hookInput(t, ws, "Bash", map[string]any{"command": cmd}))
		runtime.ReadMemStats(&after)
		if d.Allow {
			t.Errorf("%s: allowed: %s", name, d.Reason)
		}
		if name == "subprocess" && !strings.Contains(d.Reason, "a brace list of more than") {
			t.Errorf("%s: reason %q", name, d.Reason)
		}
		if mb := (after.TotalAlloc - before.TotalAlloc) >> 20; mb > 64 {
			t.Errorf("%s: the decision allocated %d MB", name, mb)
		}
	}
}
