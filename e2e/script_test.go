// Package e2e holds the CLI acceptance scenarios (testscript/txtar): each file in
// testdata/script runs real zerg commands in a fresh temporary directory.
package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/zergrush/zerg/internal/cli"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/spec"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"zerg": func() { os.Exit(cli.Main()) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			// A predictable, colourless, hermetic environment for every scenario.
			env.Setenv("NO_COLOR", "1")
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_AUTHOR_NAME", "Zerg Test")
			env.Setenv("GIT_AUTHOR_EMAIL", "test@zerg.invalid")
			env.Setenv("GIT_COMMITTER_NAME", "Zerg Test")
			env.Setenv("GIT_COMMITTER_EMAIL", "test@zerg.invalid")
			// $CORPUS: the real task graphs kept in internal/spec/testdata.
			root, err := repoRoot()
			if err != nil {
				return err
			}
			env.Setenv("CORPUS", filepath.Join(root, "internal", "spec", "testdata", "corpus"))
			return os.MkdirAll(env.WorkDir+"/home", 0o755)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"gengraph":  cmdGenGraph,
			"genbytes":  cmdGenBytes,
			"gitinit":   cmdGitInit,
			"rulesrepo": cmdRulesRepo,
		},
		RequireExplicitExec: true,
	})
}

// gengraph N FILE: writes a valid task graph of N tasks in N/100 levels, each
// task depending on one task of the level below and owning one file.
func cmdGenGraph(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: gengraph N FILE")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), spec.Synthetic(n, 100), 0o644))
}

// genbytes SIZE FILE: writes SIZE bytes (suffix K or M allowed) of a JSON-looking
// prefix followed by filler, for oversized-input scenarios.
func cmdGenBytes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: genbytes SIZE FILE")
	}
	s := args[0]
	mult := 1
	switch {
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	}
	n, err := strconv.Atoi(s)
	ts.Check(err)
	buf := make([]byte, n*mult)
	copy(buf, `{"feature":"big","tasks":[],"pad":"`)
	for i := 35; i < len(buf)-2; i++ {
		buf[i] = 'x'
	}
	copy(buf[len(buf)-2:], `"}`)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), buf, 0o644))
}

// gitinit [DIR]: a git repository with one commit, so commands that need a repo have one.
func cmdGitInit(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! gitinit")
	}
	dir := ts.Getenv("WORK")
	if len(args) > 0 {
		dir = ts.MkAbs(args[0])
	}
	run := func(a ...string) {
		cmd := exec.CommandContext(context.Background(), "git", a...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+ts.Getenv("HOME"), "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			ts.Fatalf("git %v: %v\n%s", a, err, out)
		}
	}
	ts.Check(os.MkdirAll(dir, 0o755))
	run("init", "-q", "-b", "main")
	run("-c", "user.name=Zerg Test", "-c", "user.email=test@zerg.invalid", "commit", "-q", "--allow-empty", "-m", "initial")
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return fsx.ModuleRoot(dir)
}

// rulesrepo DIR: a git repository at DIR holding the security-rules snapshot
// (internal/security/testdata/secure-coding-rules, see its SOURCE.md),
// standing in for the unreachable upstream; sets $RULES_COMMIT to its commit,
// which scripts cannot capture.
func cmdRulesRepo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: rulesrepo DIR")
	}
	dir := ts.MkAbs(args[0])
	root, err := repoRoot()
	ts.Check(err)
	ts.Check(os.MkdirAll(dir, 0o755))
	archive := filepath.Join(root, "internal", "security", "testdata", "secure-coding-rules", "rules.tar.gz")
	if out, err := exec.CommandContext(context.Background(), "tar", "-xzf", archive, "-C", dir).CombinedOutput(); err != nil {
		ts.Fatalf("unpack the rules snapshot: %v\n%s", err, out)
	}
	git := func(a ...string) string {
		cmd := exec.CommandContext(context.Background(), "git", a...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+ts.Getenv("HOME"), "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			ts.Fatalf("git %v: %v\n%s", a, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("-c", "user.name=Zerg Test", "-c", "user.email=test@zerg.invalid", "commit", "-q", "-m", "rules snapshot")
	ts.Setenv("RULES_COMMIT", git("rev-parse", "HEAD"))
}
