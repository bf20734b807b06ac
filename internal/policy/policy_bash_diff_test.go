package policy

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The differential test of the hand-written parser (legacyParser) and the
// mvdan.cc/sh walker: the same command lines, in both modes, must get the
// same decisions (allow or deny; the reasons may differ).

// diffSeeds are the command lines of this package's tests (every string
// literal in its test files) and the Bash calls of the tool-call corpus.
func diffSeeds(t testing.TB) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, s := range diffConstructs {
		add(s)
	}
	files, _ := filepath.Glob("*_test.go")
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			if l, ok := n.(*ast.BasicLit); ok && l.Kind == token.STRING {
				if s, err := strconv.Unquote(l.Value); err == nil {
					add(s)
				}
			}
			return true
		})
	}
	f, err := os.Open("../cli/testdata/toolcalls/calls.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(zr)
	for dec.More() {
		var c struct {
			Tool  string `json:"tool"`
			Input struct {
				Command string `json:"command"`
			} `json:"input"`
		}
		if err := dec.Decode(&c); err != nil {
			t.Fatal(err)
		}
		if c.Tool == "Bash" {
			add(c.Input.Command)
		}
	}
	return out
}

// diffConstructs are the shell's constructs, each in a line of its own.
var diffConstructs = []string{
	"cat <(ls) >(wc)", "a=(x y) ls", "declare -a a=(1 2); echo ${a[0]}", "a[1]=x cat f", "case x in a|b) ls;; *) cat /etc/shadow;; esac",
	"[[ -f x && $(cat /etc/shadow) ]]", "f() { cat /etc/shadow; }; f", "function g { ls; }", "coproc cat /etc/shadow", "coproc n { ls; }",
	"cat <<E\n$(cat /etc/shadow)\nE", "cat <<'E'\n$(cat /etc/shadow)\nE", "cat <<-E\n\tx\n\tE", "cat <<< $(ls)", "cat <<< \"$HOME\"",
	"echo $'\\x63url'", "echo $\"x\"", "ls @(a|b)", "ls !(x)", "ls +(a)*", "echo {1..3}", "touch /etc/x{1..3}", "echo {a,b}{c,d}",
	"echo $((1+2))", "((x++))", "let x=1", "for ((i=0;i<3;i++)); do ls; done", "for x; do ls; done", "select x in a b; do ls; done",
	"until false; do ls; done", "while read l; do echo $l; done < f", "echo $(echo $(echo `ls`))", "echo `echo \\`ls\\``",
	"exec {fd}>out", "ls 3>&1 1>&2 2>&3", "ls &>/dev/null", "ls >| f", "ls <> f", "! cd x && ls", "time cd sub && cat f",
	"cd sub && cd deep && cat r", "(cd sub && ls) && cat f", "{ cd sub; } && cat f", "x=$(cd /; pwd) cat f", "export A=$(cat /etc/shadow)",
	"local x=1", "readonly y", "typeset -x z=2", "echo ${x:-$(cat /etc/shadow)}", "echo ${#x} ${x/a/b} ${!x} ${x:1:2}", "echo $0 $1 $@ $* $_",
	"echo $? $$ $! $# $-", "ls *.go [a-c]* x?", "ls x[/]y", "ls [[:alpha:]]", "cat ~/x ~root/y a=~/z", "cat $HOME/x ${HOME}/y",
	"ls \\\n -la", "echo 'a\nb' \"c\nd\"", "ls # comment && curl x", "ls; ; ls", "ls &&", "ls | | wc", "(", ")", "{ ls", "if ls; then",
	"if ls; then cd sub; elif false; then ls; else cd /; fi; cat f", "\x00", "ls\x00; curl x", "A+=", "A+= ls", "A+=x cat /etc/shadow", "<h}e{", "cat >{a,b}", "ls\rcurl x", "echo e\\", "sh -c 'cd sub && cat r'", "bash -c \"curl $(x)\"", "eval 'ls' \"x\"",
}

// diffPolicies are the policies the lines are decided under: the bypass
// fixture's and the subprocess fixture's (subprocess mode), and sandbox
// mode's, all on one workspace.
func diffPolicies(t testing.TB) (ws string, ps []*Policy) {
	ws, bp := bypassFixture(t)
	sub := *bp
	sub.Bash.Allow = append(slices.Clone(bp.Bash.Allow), "uv", "python3", "npx", "npm", "mise", "bd", "*")
	root := filepath.Dir(ws)
	sub.Bash.Scratch = []string{mkdirs(t, filepath.Join(root, "attempt", "tmp"))}
	sub.Bash.SharedTmp = mkdirs(t, filepath.Join(root, "sharedtmp"))
	sb := &Policy{Version: Version, Workspace: ws, Allow: bp.Allow, ReadDirs: bp.ReadDirs,
		Bash: BashPolicy{Sandboxed: true, Scratch: sub.Bash.Scratch}}
	for _, p := range []*Policy{bp, &sub, sb} {
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	return ws, []*Policy{bp, &sub, sb}
}

type diffResult struct {
	allow      []bool
	reasons    []string
	toolchains []string
	programs   []string
}

func diffDecide(ws string, ps []*Policy, cmd string, legacy bool) diffResult {
	legacyParser = legacy
	defer func() { legacyParser = false }()
	var r diffResult
	raw := []byte(`{"command":` + quoteJSON(cmd) + `}`)
	for _, p := range ps {
		d := p.Decide(&HookInput{Cwd: ws, ToolName: "Bash", ToolInput: raw})
		r.allow = append(r.allow, d.Allow)
		r.reasons = append(r.reasons, d.Reason)
	}
	r.toolchains = ToolchainRules(cmd)
	r.programs = CommandPrograms(cmd)
	return r
}

// diffKnown are the lines the two decide differently, each with why the
// new decision is the right one.
var diffKnown = map[string]string{
	// The old parser kept the quotes of a braced word that is no list;
	// bash removes them ({Replace:{}}): only CommandPrograms' name differs.
	`{"Replace":{}}`: "quote removal in braces",
	// bash refuses the line (in is reserved); mvdan runs a command "in",
	// allowed only under the rule "*" and in sandbox mode, where bash's
	// syntax error means nothing runs.
	"in a directory of the shared": "bash syntax error",
	// The old parser did not take a descriptor number (2>&1) after a
	// compound command's redirection; bash does, and so does mvdan.
	"(cd x && y) > z 2>&1": "redirections after a subshell",
	// bash refuses an indexed assignment before a command, so does mvdan;
	// the old parser took a[1]=x for a command name (denied but in
	// sandbox mode, as now).
	"a[1]=x cat f": "indexed assignment",
	// Two brace lists in a word: the old parser refused them; mvdan's
	// expansion gives the four words bash does, each checked.
	"echo {a,b}{c,d}": "brace lists combined",
	// let is arithmetic: refused in subprocess mode now even under the
	// rule "*", which the old parser let run it as a command.
	"let x=1": "let refused",
	// {fd}> makes a descriptor and assigns a variable: bash's meaning,
	// refused in subprocess mode; the old parser took {fd} for a word.
	"exec {fd}>out": "variable descriptor",
	// bash reads ! before a redirection as the negation of a command of
	// redirections only (it reads the file 0); the old parser took ! for
	// a command name.
	"!<'0'": "negation before a redirection",
	// A JSON object is a brace list for bash (its commas): the old parser
	// kept it one word; both deny it but in sandbox mode, only
	// CommandPrograms' name differs.
	`{"session_id":"91792bfd-0000-4000-8000-000000000000","transcript_path":"/h/.claude/projects/-w/91792bfd.jsonl","cwd":"/w","prompt_id":"061c29f0","permission_mode":"acceptEdits","effort":{"level":"high"},"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/w/denied.txt","content":"hi from fake\n"},"tool_use_id":"toolu_fake0001"}`: "brace list with quotes",
}

// diffCheck fails when the new decision lets through what the old one
// refused (in any policy, or a program or toolchain rule the old one did
// not grant) and the line is no known difference. With ZERG_DIFF_LOG set,
// every difference is appended to the file it names instead, for review.
func diffCheck(t *testing.T, ws string, ps []*Policy, cmd string) {
	old := diffDecide(ws, ps, cmd, true)
	now := diffDecide(ws, ps, cmd, false)
	if slices.Equal(old.allow, now.allow) && slices.Equal(old.toolchains, now.toolchains) && slices.Equal(old.programs, now.programs) {
		return
	}
	if _, ok := diffKnown[cmd]; ok {
		return
	}
	looser := false
	for i := range old.allow {
		// Sandbox mode lets through what does not parse, the sandbox
		// bounds it; mvdan refuses a few lines bash would run (A[0 /),
		// as the old parser did others.
		unparsed := ps[i].Bash.Sandboxed && strings.Contains(now.reasons[i], ": not parsed (")
		looser = looser || now.allow[i] && !old.allow[i] && !unparsed
	}
	for _, x := range append(slices.Clone(now.toolchains), now.programs...) {
		looser = looser || !slices.Contains(old.toolchains, x) && !slices.Contains(old.programs, x)
	}
	msg := fmt.Sprintf("%q:\n  old %v %q tc=%v prog=%v\n  new %v %q tc=%v prog=%v", cmd,
		old.allow, old.reasons, old.toolchains, old.programs, now.allow, now.reasons, now.toolchains, now.programs)
	path := os.Getenv("ZERG_DIFF_LOG")
	if looser && path == "" {
		t.Error(msg)
		return
	}
	if path != "" {
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(f, "%s %s\n", map[bool]string{true: "LOOSER", false: "STRICTER"}[looser], msg)
			f.Close()
		}
	}
}

// TestOldVsNewSeeds decides every seed line both ways.
func TestOldVsNewSeeds(t *testing.T) {
	ws, ps := diffPolicies(t)
	for _, s := range diffSeeds(t) {
		diffCheck(t, ws, ps, strings.ReplaceAll(s, "@WS@", ws))
	}
}

// FuzzOldVsNew: mutated lines get the same decisions both ways.
func FuzzOldVsNew(f *testing.F) {
	for _, s := range diffSeeds(f) {
		f.Add(s)
	}
	ws, ps := diffPolicies(f)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 2048 {
			return
		}
		diffCheck(t, ws, ps, strings.ReplaceAll(s, "@WS@", ws))
	})
}
