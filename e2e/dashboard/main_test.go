// Package dashboard holds the browser tests of zerg dashboard: a built
// zerg binary rehearses the demo project (the real pinned Claude Code CLI,
// the scripted Messages API), the dashboard serves it, and headless
// Chromium (the Debian package), driven from Go with chromedp, reads the
// page as a person would.
package dashboard

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/e2e/e2ebin"
)

var (
	zergBin   string
	claudeBin string
	repoRoot  string
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == eveArg { // a role of the red team's other account
		os.Exit(eveMain(os.Args[2:]))
	}
	e2ebin.Main(m, "e2e/dashboard", func(t e2ebin.Tools) {
		repoRoot, zergBin, claudeBin = t.Root, t.Zerg, t.Claude
	})
}

// chromium is the browser's path, or the test stops: skipped when it is
// missing, failed under make test (ZERG_E2E_BROWSER=required), which
// installs it, so that a suite that never ran is not taken for a pass.
func chromium(t *testing.T) string {
	t.Helper()
	stop := t.Skipf
	if os.Getenv("ZERG_E2E_BROWSER") == "required" {
		stop = t.Fatalf
	}
	for _, name := range []string{os.Getenv("ZERG_CHROMIUM"), "chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	stop("chromium is not installed: make chromium (as root) installs it (apt-get install chromium)")
	return ""
}

// artefacts is where screenshots are kept after the test: $ZERG_ARTEFACTS,
// else testdata/out (ignored by git); t.TempDir would delete them.
func artefacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ZERG_ARTEFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "out")
	}
	dir = filepath.Join(dir, "dashboard")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// project is a copy of the demo project in its own git repository.
type project struct {
	t    *testing.T
	dir  string
	home string
	// pathPrefix goes before PATH (a desktop's xdg-open, in the red team's
	// test).
	pathPrefix string
}

func newProject(t *testing.T, scenario func(string) string) *project {
	t.Helper()
	tmp := e2ebin.Traversable(t, t.TempDir())
	p := &project{t: t, dir: filepath.Join(tmp, "repo"), home: filepath.Join(tmp, "home")}
	if err := os.CopyFS(p.dir, os.DirFS(filepath.Join(repoRoot, "examples", "demo"))); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(p.home, 0o755)
	sc := filepath.Join(p.dir, ".zerg", "specs", "demo", "scenario.yaml")
	b, err := os.ReadFile(sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sc, []byte(scenario(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, ".gitignore"), []byte(".zerg/runs/\n.zerg/cache/\n.zerg/audit.jsonl*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("init", "-q", "-b", "main")
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "demo project")
	return p
}

func (p *project) env() []string {
	path := os.Getenv("PATH")
	if p.pathPrefix != "" {
		path = p.pathPrefix + ":" + path
	}
	return []string{
		"PATH=" + path,
		"HOME=" + p.home,
		"ZERG_CLAUDE=" + claudeBin,
		"ZERG_WORKSPACES=" + filepath.Join(p.home, "workspaces"),
		"NO_COLOR=1",
		"LANG=C.UTF-8",
	}
}

func (p *project) git(args ...string) string {
	p.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=t@example.invalid"}, args...)...)
	cmd.Dir = p.dir
	cmd.Env = append(p.env(), "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// zerg runs zerg to its end and returns its exit code and outputs.
func (p *project) zerg(args ...string) (int, string, string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, zergBin, args...)
	cmd.Dir = p.dir
	cmd.Env = p.env()
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, so.String(), se.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), so.String(), se.String()
	}
	p.t.Fatalf("zerg %v: %v", args, err)
	return 0, "", ""
}

// start starts zerg in the background; stop ends it (SIGINT, then kill)
// and returns its output.
func (p *project) start(args ...string) (cmd *exec.Cmd, out *bytes.Buffer) {
	p.t.Helper()
	cmd = exec.Command(zergBin, args...)
	cmd.Dir = p.dir
	cmd.Env = p.env()
	out = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
			}
		}
	})
	return cmd, out
}
