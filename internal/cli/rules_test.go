package cli

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/security"
)

var (
	rulesRepoOnce   sync.Once
	rulesRepoDir    string
	rulesRepoCommit string
)

// rulesTestRepo returns a git repository made from the rules snapshot kept
// in internal/security/testdata (see its SOURCE.md) and its commit. It is
// made once for the package's tests (under sharedDir); fetching only reads
// it, and callers must not change it.
func rulesTestRepo(t *testing.T) (string, string) {
	t.Helper()
	rulesRepoOnce.Do(func() {
		archive, err := filepath.Abs(filepath.Join("..", "security", "testdata", "secure-coding-rules", "rules.tar.gz"))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(sharedDir(t), "rules-upstream")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("tar", "-xzf", archive, "-C", dir).CombinedOutput(); err != nil {
			t.Fatalf("unpack the rules snapshot: %v\n%s", err, out)
		}
		g := gitx.New(dir)
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "snapshot"}} {
			if _, err := g.Run(context.Background(), args...); err != nil {
				t.Fatal(err)
			}
		}
		commit, err := g.RevParse(context.Background(), "HEAD")
		if err != nil {
			t.Fatal(err)
		}
		rulesRepoDir, rulesRepoCommit = dir, commit
	})
	if rulesRepoDir == "" {
		t.Fatal("the shared rules repository could not be made (see the first test that asked for it)")
	}
	return rulesRepoDir, rulesRepoCommit
}

// projectRepo makes an empty git repository with a config pinning the rules
// at source@commit (sha256 when not empty) and makes it the working directory.
func projectRepo(t *testing.T, source, commit, sha string) string {
	t.Helper()
	root := t.TempDir()
	if _, err := gitx.New(root).Run(context.Background(), "init", "-q"); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("security_rules:\n  url: %s\n  commit: %s\n", source, commit)
	if sha != "" {
		cfg += fmt.Sprintf("  sha256: %q\n", sha)
	}
	if err := os.MkdirAll(filepath.Join(root, ".zerg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".zerg", "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	return root
}

func runZergRules(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRulesCommandsExitCodes(t *testing.T) {
	src, commit := rulesTestRepo(t)
	root := projectRepo(t, src, commit, "")

	if code, _, stderr := runZergRules("rules", "update", "--commit", "main"); code != ExitUsage || !strings.Contains(stderr, "branch and tag names are refused") {
		t.Fatalf("branch: exit %d, stderr %q; want 2 and the refusal", code, stderr)
	}
	if code, _, stderr := runZergRules("rules", "verify"); code != ExitFailed || !strings.Contains(stderr, "run zerg rules update") {
		t.Fatalf("verify before fetching: exit %d, stderr %q", code, stderr)
	}
	if code, stdout, stderr := runZergRules("rules", "update"); code != ExitOK || !strings.Contains(stdout, "fetched rules "+commit) {
		t.Fatalf("update: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, _ := runZergRules("rules", "verify"); code != ExitOK || !strings.Contains(stdout, "ok, 84 files") {
		t.Fatalf("verify: exit %d %q", code, stdout)
	}
	if code, stdout, _ := runZergRules("rules", "show", "a.go"); code != ExitOK || !strings.Contains(stdout, "rules/languages/go/CLAUDE.md") || strings.Contains(stdout, "python") {
		t.Fatalf("show: exit %d %q", code, stdout)
	}
	p := filepath.Join(security.RulesCacheDir(root, commit), "rules", "_core", "owasp-2025.md")
	if err := os.WriteFile(p, []byte("# nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runZergRules("rules", "verify"); code != ExitFailed || !strings.Contains(stderr, "rules/_core/owasp-2025.md was edited") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("verify after an edit: exit %d, stderr %q; want 1 and one line naming the file", code, stderr)
	}
}

func TestAuditVerifyExitCodes(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	path := filepath.Join(dir, "audit.jsonl")
	a, err := security.OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := a.Record(security.AuditHookDenied, map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	if code, stdout, _ := runZergRules("audit", "verify", "audit.jsonl"); code != ExitOK || !strings.Contains(stdout, "intact, 3 entries") {
		t.Fatalf("intact: exit %d %q", code, stdout)
	}
	if code, stdout, _ := runZergRules("audit", "show", "audit.jsonl", "--kind", "hook_denied"); code != ExitOK || strings.Count(stdout, "hook_denied") != 3 {
		t.Fatalf("show: exit %d %q", code, stdout)
	}
	data, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(path, []byte(lines[0]+lines[1]), 0o644); err != nil { // drop the last line
		t.Fatal(err)
	}
	code, stdout, stderr := runZergRules("audit", "verify", "audit.jsonl")
	if code != ExitFailed || stdout != "" || !strings.Contains(stderr, "line 3: missing") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("truncated: exit %d, stdout %q, stderr %q; want exit 1 and one line naming line 3", code, stdout, stderr)
	}
}

func initEnvFor(t *testing.T, root string) (*initEnv, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &initEnv{ctx: context.Background(), a: newApp(&out, &errb), root: root}, &errb
}

func TestInitRulesStep(t *testing.T) {
	src, commit := rulesTestRepo(t)
	root := projectRepo(t, src, commit, "")
	step := rulesStep()
	env, stderr := initEnvFor(t, root)
	if err := step.check(env); err != nil {
		t.Fatal(err)
	}
	r := &initReport{}
	if err := step.apply(env, r); err != nil {
		t.Fatal(err)
	}
	rel := ".zerg/cache/rules/" + commit + "/"
	if len(r.Created) != 1 || r.Created[0] != rel || stderr.Len() != 0 {
		t.Fatalf("first init: report %+v, stderr %q", r, stderr)
	}
	if _, err := security.VerifyRules(security.RulesCacheDir(root, commit), ""); err != nil {
		t.Fatal(err)
	}
	entries, err := security.ReadAudit(security.AuditPath(root))
	if err != nil || len(entries) != 1 || entries[0].Type != security.AuditRulesFetched {
		t.Fatalf("audit entries %+v, err %v; want one rules_fetched", entries, err)
	}
	// Idempotent: an intact cache is reported and not fetched again.
	r = &initReport{}
	if err := step.apply(env, r); err != nil {
		t.Fatal(err)
	}
	if len(r.Existing) != 1 || len(r.Created) != 0 {
		t.Fatalf("second init: %+v", r)
	}
}

func TestInitRulesStepWithoutNetwork(t *testing.T) {
	commit := strings.Repeat("ab", 20)
	root := projectRepo(t, "file:///nonexistent/rules", commit, "")
	env, stderr := initEnvFor(t, root)
	r := &initReport{}
	if err := rulesStep().apply(env, r); err != nil {
		t.Fatalf("init must go on when the rules cannot be fetched: %v", err)
	}
	if !strings.Contains(stderr.String(), "warning: the security rules were not fetched") || !strings.Contains(stderr.String(), "zerg rules update") {
		t.Errorf("stderr %q: want a warning naming zerg rules update", stderr)
	}
	if len(r.lines) != 1 || !strings.HasPrefix(r.lines[0], "skipped") || len(r.Created) != 0 {
		t.Errorf("report %+v", r)
	}
	// Nothing half-written: the cache directory holds at most the lock.
	err := filepath.WalkDir(filepath.Join(root, ".zerg", "cache"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != ".lock" {
			t.Errorf("left %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestInitRulesStepChecksumMismatchFails(t *testing.T) {
	src, commit := rulesTestRepo(t)
	root := projectRepo(t, src, commit, strings.Repeat("0", 64))
	env, _ := initEnvFor(t, root)
	err := rulesStep().apply(env, &initReport{})
	if err == nil || !strings.Contains(err.Error(), strings.Repeat("0", 64)) {
		t.Fatalf("err = %v, want a checksum mismatch naming the pinned value", err)
	}
	if _, err := os.Stat(security.RulesCacheDir(root, commit)); err == nil {
		t.Error("a mismatching fetch was installed")
	}
}
