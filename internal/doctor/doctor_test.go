package doctor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/sandbox"
)

// A machine without a usable claude and git runs no mode; with them, the
// modes whose probe failed are not run, each with its reason, and the rest
// are.
func TestRunnableModes(t *testing.T) {
	rep := Report{Claude: ClaudeCheck{Found: true, Version: "2.1.197"}, Git: ToolCheck{Found: true},
		Sandbox: SandboxCheck{Error: "no bwrap"}, Container: ContainerCheck{Available: true}}
	run, not := RunnableModes(rep)
	if slices.Contains(run, "sandbox") || not["sandbox"] != "no bwrap" || !slices.Contains(run, "container") || !slices.Contains(run, "subprocess") || !slices.Contains(run, "tasks") {
		t.Errorf("run %v, not %v", run, not)
	}
	rep.Git.Found = false
	if run, not := RunnableModes(rep); len(run) != 0 || not["subprocess"] != NoClaudeAndGit {
		t.Errorf("without git: run %v, not %v", run, not)
	}
}

// Only the configured mode's required probe fails the doctor.
func TestRequiredProbePassed(t *testing.T) {
	rep := Report{Mode: "container", Container: ContainerCheck{Error: "no engine"}}
	if rep.RequiredProbePassed() {
		t.Error("container mode without an engine passed")
	}
	rep.Mode = "sandbox"
	if !rep.RequiredProbePassed() {
		t.Error("sandbox mode failed on the container's probe")
	}
	rep.Mode = "container"
	rep.Container = ContainerCheck{Available: true}
	if !rep.RequiredProbePassed() {
		t.Error("container mode with a container failed")
	}
}

func TestCheckTool(t *testing.T) {
	missing := func(string) (string, error) { return "", errors.New("no") }
	if tc := CheckTool(context.Background(), missing, nil, "bwrap"); tc.Found || tc.Error != "bwrap not found on PATH" {
		t.Errorf("missing: %+v", tc)
	}
	found := func(string) (string, error) { return "/usr/bin/git", nil }
	ver := func(_ context.Context, p string, args ...string) (string, error) {
		return p + " " + strings.Join(args, " "), nil
	}
	if tc := CheckTool(context.Background(), found, ver, "git", "--version"); !tc.Found || tc.Version != "/usr/bin/git --version" {
		t.Errorf("found: %+v", tc)
	}
	broken := func(context.Context, string, ...string) (string, error) { return "", errors.New("exit 1") }
	if tc := CheckTool(context.Background(), found, broken, "git"); !tc.Found || tc.Error != "exit 1" {
		t.Errorf("broken: %+v", tc)
	}
}

func TestToolVersion(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("SKIPPED: no sh")
	}
	if v, err := ToolVersion(context.Background(), sh, "-c", "echo ' one 1.2'; echo two"); err != nil || v != "one 1.2" {
		t.Errorf("version %q, %v", v, err)
	}
	if _, err := ToolVersion(context.Background(), sh, "-c", "exit 3"); err == nil || !strings.HasPrefix(err.Error(), "sh -c exit 3: ") {
		t.Errorf("a failing tool: %v", err)
	}
}

func TestLaunchProbe(t *testing.T) {
	if pc := LaunchProbe(nil, errors.New("no stub")); pc.OK || pc.Error != "no stub" {
		t.Errorf("could not run: %+v", pc)
	}
	pc := LaunchProbe(&cliprobe.Report{MaxTokens: 9, Models: []cliprobe.ModelReport{{Model: "sonnet", Resolved: []string{"claude-sonnet-5-5", "x"}}}}, nil)
	if !pc.OK || pc.MaxTokens != 9 || len(pc.Models) != 1 || pc.Models[0] != (ProbedModel{"sonnet", "claude-sonnet-5-5"}) {
		t.Errorf("passed: %+v", pc)
	}
	pc = LaunchProbe(&cliprobe.Report{Models: []cliprobe.ModelReport{{Model: "opus", Refused: &gateway.Refusal{Reason: "too big", Fix: "raise it"}}}}, nil)
	if pc.OK || pc.Refused != "model opus: too big" || pc.Fix != "raise it" {
		t.Errorf("refused: %+v", pc)
	}
	pc = LaunchProbe(&cliprobe.Report{Models: []cliprobe.ModelReport{{Model: "opus", Problem: "no request"}}}, nil)
	if pc.OK || pc.Error != "model opus: no request" {
		t.Errorf("problem: %+v", pc)
	}
}

func TestConfiguredClaude(t *testing.T) {
	cfg := config.Default()
	cfg.Claude.Path = "/opt/claude"
	if ConfiguredClaude(nil) != "" || ConfiguredClaude(&cfg) != "/opt/claude" {
		t.Error("claude.path")
	}
}

// The real probe tries the sandbox as the configured worker user when zerg
// runs as root, as nobody while that user does not exist, and as zerg's own
// user otherwise. The bound binary only has to be reachable: the probe runs
// `true`, not the init.
func TestProbeSandbox(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("SKIPPED: bubblewrap (bwrap) is not installed")
	}
	old := sandbox.Executable
	sandbox.Executable = func() (string, error) { return "/bin/true", nil }
	defer func() { sandbox.Executable = old }()
	cfg := config.Default()
	cfg.Security.WorkerUser = "zerg-doctor-nobody"
	sc := ProbeSandbox(context.Background(), &cfg)
	if !sc.Available || sc.Error != "" {
		t.Fatalf("probe: %+v", sc)
	}
	want := "(uid " // zerg's own user
	if os.Geteuid() == 0 {
		want = "nobody (uid 65534; the worker user zerg-doctor-nobody does not exist yet)"
	}
	if !strings.Contains(sc.User, want) {
		t.Fatalf("probed as %q, want %q", sc.User, want)
	}
}
