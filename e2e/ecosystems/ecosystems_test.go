// Package ecosystems holds the end-to-end tests of zerg on a small project
// of each ecosystem users bring (Python with pytest, Rust with cargo test
// --offline, TypeScript with tsc and node's test runner): a two-level
// feature delivered through sandbox mode by the scripted model with the real
// CLI, a buggy first attempt fixed on retry by the diagnosis, and the
// project's own test suite green on the integration branch; and a test
// runner missing from the machine, found by zerg check before any model is
// called. The projects are in testdata (written for these tests); the
// toolchains are the machine's: Debian's python3-pytest, cargo, node, and
// the npm cache make test fills (docs/toolchains.md).
package ecosystems

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/e2e/e2ebin"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

var zergBin, claudeBin, repoRoot string

func TestMain(m *testing.M) {
	e2ebin.Main(m, "e2e/ecosystems", func(t e2ebin.Tools) {
		repoRoot, zergBin, claudeBin = t.Root, t.Zerg, t.Claude
	})
}

// project is a copy of one of testdata's projects in its own repository.
type project struct {
	t         *testing.T
	dir, home string
	feature   string
	base      string
	env       []string // zerg's and git's environment
	suiteEnv  []string // the environment the test runs the project's own suite with
}

// newProject copies testdata/<name>, commits it on main, and gives zerg an
// environment of its own (HOME, workspaces) with extra on top.
func newProject(t *testing.T, name, feature string, extra ...string) *project {
	t.Helper()
	tmp := e2ebin.Traversable(t, t.TempDir())
	p := &project{t: t, dir: filepath.Join(tmp, "repo"), home: filepath.Join(tmp, "home"), feature: feature}
	if err := os.CopyFS(p.dir, os.DirFS(filepath.Join(repoRoot, "e2e", "ecosystems", "testdata", name))); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.home, 0o755); err != nil {
		t.Fatal(err)
	}
	appendFile(t, filepath.Join(p.dir, ".gitignore"), ".zerg/runs/\n.zerg/cache/\n.zerg/audit.jsonl*\n")
	path := pathWithout(os.Getenv("PATH"), "/.pyenv/")
	p.env = append([]string{
		"PATH=" + path,
		"HOME=" + p.home,
		"ZERG_CLAUDE=" + claudeBin,
		"ZERG_WORKSPACES=" + filepath.Join(p.home, "workspaces"),
		"NO_COLOR=1",
		"LANG=C.UTF-8",
	}, extra...)
	p.suiteEnv = append(os.Environ(), "PATH="+path)
	p.git("init", "-q", "-b", "main")
	p.git("add", "-A")
	p.git("commit", "-q", "-m", name+" project")
	p.base = p.git("rev-parse", "HEAD")
	return p
}

// pathWithout is PATH without the directories that contain part: the
// tests choose which Python the commands find.
func pathWithout(path, part string) string {
	var keep []string
	for _, d := range filepath.SplitList(path) {
		if !strings.Contains(d, part) {
			keep = append(keep, d)
		}
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

func appendFile(t *testing.T, file, s string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func (p *project) git(args ...string) string {
	p.t.Helper()
	return e2ebin.Git(p.t, p.dir, p.env, args...)
}

func (p *project) zerg(args ...string) e2ebin.Result {
	p.t.Helper()
	return e2ebin.Command(p.t, 10*time.Minute, p.dir, p.env, zergBin, args...)
}

// feature is what an ecosystem's test checks of its delivered feature.
type feature struct {
	retried    string   // the task whose first attempt is buggy
	failedTest string   // the test that attempt fails, named in its diagnosis
	suite      []string // the project's own test suite, run on the integration branch
	suiteSays  string   // a line of the suite's output that says it passed
}

// deliver rushes the project's feature in sandbox mode with the scripted
// model and checks the promise: delivered, the buggy attempt failed as a
// test assertion naming its test, the retry's prompt carried that
// diagnosis and passed, and the project's own suite passes on the
// integration branch.
func (p *project) deliver(f feature) {
	t := p.t
	t.Helper()
	r := p.zerg("rush", p.feature, "--rehearse")
	if r.Code != 0 || !strings.Contains(r.Stdout, p.feature+": DELIVERED (rehearsal)") || !strings.Contains(r.Stdout, "tasks: 3 of 3 merged") {
		t.Fatalf("zerg rush %s --rehearse: exit %d\nstdout:\n%s\nstderr:\n%s", p.feature, r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "no environment problem") {
		t.Errorf("the rush's check found a problem or did not run:\n%s", r.Stderr)
	}

	// The retried task: a test assertion, then a success.
	paths, err := run.PathsFor(context.Background(), p.dir, p.feature)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := eventlog.Read(paths.Events)
	if err != nil {
		t.Fatal(err)
	}
	var fins []runstate.AttemptFinished
	for _, e := range evs {
		if e.Type == runstate.EvAttemptFinished && e.Task == f.retried {
			var d runstate.AttemptFinished
			if err := e.Decode(&d); err != nil {
				t.Fatal(err)
			}
			fins = append(fins, d)
		}
	}
	if len(fins) != 2 || fins[0].Reason != "verification_failed" || fins[1].Class != "success" {
		t.Fatalf("%s's attempts: %+v; want a failed verification, then a success", f.retried, fins)
	}
	var diag struct {
		Hypotheses []struct {
			Pattern    string   `json:"pattern"`
			Confidence float64  `json:"confidence"`
			Evidence   []string `json:"evidence"`
		} `json:"hypotheses"`
	}
	d := p.zerg("diagnose", p.feature, f.retried, "--attempt", "1", "--json")
	if err := json.Unmarshal([]byte(d.Stdout), &diag); err != nil || len(diag.Hypotheses) == 0 {
		t.Fatalf("zerg diagnose %s %s --attempt 1: exit %d, %v\n%s%s", p.feature, f.retried, d.Code, err, d.Stdout, d.Stderr)
	}
	top := diag.Hypotheses[0]
	if top.Pattern != "test_assertion" || top.Confidence < 0.5 || len(top.Evidence) == 0 || !strings.Contains(top.Evidence[0], f.failedTest) {
		t.Errorf("the first attempt's diagnosis: %+v; want test_assertion, sure enough for the retry prompt, its first evidence naming %s", top, f.failedTest)
	}
	// The retry was told: the diagnosis line of its prompt names the test.
	prompt, err := os.ReadFile(filepath.Join(paths.AttemptDir(f.retried, 2), "prompt.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^Diagnosis: test_assertion \(\d+% sure\): .*` + regexp.QuoteMeta(f.failedTest)).Match(prompt) {
		t.Errorf("the retry's prompt carries no diagnosis naming %s:\n%s", f.failedTest, prompt)
	}

	// The project's own suite, on a checkout of the integration branch.
	wt := filepath.Join(t.TempDir(), "integration")
	p.git("worktree", "add", "-q", "--detach", wt, run.IntegrationBranch(p.feature))
	cmd := exec.Command(f.suite[0], f.suite[1:]...)
	cmd.Dir = wt
	cmd.Env = p.suiteEnv
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), f.suiteSays) {
		t.Errorf("the project's own suite on the integration branch: %v\n%s", err, out)
	}
	p.git("worktree", "remove", "--force", wt)

	// The user's branch and working tree are as they were.
	if head := p.git("rev-parse", "HEAD"); head != p.base {
		t.Errorf("the user's HEAD moved: %s → %s", p.base, head)
	}
	if st := p.git("status", "--porcelain"); st != "" {
		t.Errorf("the user's working tree changed:\n%s", st)
	}
}

// TestPythonFeatureDelivered: slugkit (pytest) gets make_slug over two
// levels; its first attempt makes the slug unique after cutting it, its
// own test fails, and the retry, told which test and why, fixes it.
func TestPythonFeatureDelivered(t *testing.T) {
	t.Parallel()
	if err := exec.Command("/usr/bin/python3", "-c", "import pytest").Run(); err != nil {
		t.Fatalf("Debian's python3-pytest is missing (%v): make test installs it (apt-get install python3-pytest)", err)
	}
	p := newProject(t, "python", "shortslug")
	p.deliver(feature{retried: "L2-api", failedTest: "test_suffix_counts_in_max_len",
		suite: []string{"/usr/bin/python3", "-m", "pytest", "-q"}, suiteSays: "11 passed"})
}

// TestRustFeatureDelivered: wordcase (cargo test --offline) gets a kebab
// case and a command; the command's first attempt prints snake_case for
// kebab, its test's assert! with a message fails, and the retry fixes it.
func TestRustFeatureDelivered(t *testing.T) {
	t.Parallel()
	cargo, home := cargoEnv(t)
	p := newProject(t, "rust", "kebab", cargo...)
	p.suiteEnv = append(p.suiteEnv, "HOME="+home)
	p.deliver(feature{retried: "L2-cli", failedTest: "kebab_command",
		suite: []string{"cargo", "test", "--offline"}, suiteSays: "test result: ok. 5 passed"})
}

// TestTypeScriptFeatureDelivered: tinyfmt (tsc, node --test) gets a
// summary line; its first attempt swaps formatPercent's arguments, node's
// test runner reports the assertion inside its suite, and the retry fixes
// it. Its dependencies come from the npm cache, offline, as a user's would.
func TestTypeScriptFeatureDelivered(t *testing.T) {
	t.Parallel()
	cache := npmCache(t)
	p := newProject(t, "typescript", "humanize", "npm_config_cache="+cache)
	p.suiteEnv = append(p.suiteEnv, "npm_config_cache="+cache)
	p.deliver(feature{retried: "L2-summary", failedTest: "says size, time and progress",
		suite: []string{"sh", "-c", "npm ci --offline --no-audit --no-fund --loglevel=error && npx tsc -p . && node --test dist/test/"}, suiteSays: "# pass 7"})
}

// cargoEnv is what cargo needs of the user's home under the test's own
// HOME: the rustup toolchains and cargo's home, where they are.
func cargoEnv(t *testing.T) (env []string, home string) {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	cargoHome := os.Getenv("CARGO_HOME")
	if cargoHome == "" {
		cargoHome = filepath.Join(home, ".cargo")
	}
	rustupHome := os.Getenv("RUSTUP_HOME")
	if rustupHome == "" {
		rustupHome = filepath.Join(home, ".rustup")
	}
	if _, err := exec.LookPath("cargo"); err != nil {
		t.Fatalf("no cargo on PATH (%v): the Rust test needs the machine's toolchain (rustup's, under %s)", err, cargoHome)
	}
	env = []string{"CARGO_HOME=" + cargoHome}
	if _, err := os.Stat(rustupHome); err == nil {
		env = append(env, "RUSTUP_HOME="+rustupHome)
	}
	return env, home
}

// npmCache is the invoking user's npm cache, which must hold what
// tinyfmt's lockfile names (make test's ecosystems step puts it there):
// checked by an offline install, so that a missing package fails here,
// named, rather than as the rush's check.
func npmCache(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("npm", "config", "get", "cache").Output()
	if err != nil {
		t.Fatalf("npm config get cache: %v", err)
	}
	cache := strings.TrimSpace(string(out))
	dir := t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, "e2e", "ecosystems", "testdata", "typescript", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("npm", "ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_cache="+cache)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the npm cache %s lacks tinyfmt's dependencies (make ecosystems fills it): %v\n%s", cache, err, out)
	}
	return cache
}

// pyenvRoot makes a PYENV_ROOT of the vendored pyenv (e2e/testdata/pyenv)
// whose one Python, selected globally, is a virtual environment of the
// machine's python3: without pytest, or with the system's site packages
// (Debian's pytest) when withPytest.
func pyenvRoot(t *testing.T, withPytest bool) (root, version string) {
	t.Helper()
	root = filepath.Join(e2ebin.Traversable(t, t.TempDir()), "pyenv")
	if err := os.CopyFS(root, os.DirFS(filepath.Join(repoRoot, "e2e", "testdata", "pyenv"))); err != nil {
		t.Fatal(err)
	}
	version = "3-nopytest"
	args := []string{"-m", "venv", "--without-pip"}
	if withPytest {
		version = "3-system"
		args = append(args, "--system-site-packages")
	}
	if out, err := exec.Command("/usr/bin/python3", append(args, filepath.Join(root, "versions", version))...).CombinedOutput(); err != nil {
		t.Fatalf("python3 -m venv: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(root, "version"), []byte(version+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rehash := exec.Command(filepath.Join(root, "bin", "pyenv"), "rehash")
	rehash.Env = append(os.Environ(), "PYENV_ROOT="+root)
	if out, err := rehash.CombinedOutput(); err != nil {
		t.Fatalf("pyenv rehash: %v\n%s", err, out)
	}
	return root, version
}

// TestCheckFindsPyenvWithoutPytest: python3 on PATH is a pyenv shim whose
// Python has no pytest, and the verifications run python3 -m pytest. zerg
// check names that in the user's terms (not "expected") and exits 1; the
// rush stops on it before a single request reaches the model. The control
// is the same pyenv selecting a Python that has pytest: no problem.
func TestCheckFindsPyenvWithoutPytest(t *testing.T) {
	t.Parallel()
	root, version := pyenvRoot(t, false)
	pyenvPath := func(p *project) {
		p.env[0] = "PATH=" + filepath.Join(root, "shims") + ":" + filepath.Join(root, "bin") + ":" + strings.TrimPrefix(p.env[0], "PATH=")
	}
	p := newProject(t, "python", "shortslug", "PYENV_ROOT="+root)
	pyenvPath(p)
	r := p.zerg("check", "shortslug")
	want := "PROBLEM   verification L1-truncate: missing module pytest: python3 on PATH is a pyenv shim (" + filepath.Join(root, "shims", "python3") +
		") whose interpreter, " + filepath.Join(root, "versions", version, "bin", "python3") + " (pyenv's " + version + "), has no pytest"
	if r.Code != 1 || !strings.Contains(r.Stdout, want) {
		t.Fatalf("zerg check: exit %d, want 1 with\n%s\nstdout:\n%s\nstderr:\n%s", r.Code, want, r.Stdout, r.Stderr)
	}
	if strings.Contains(r.Stdout, "expected  verification") {
		t.Errorf("a verification was judged expected although no pytest can run it:\n%s", r.Stdout)
	}
	r = p.zerg("rush", "shortslug", "--rehearse")
	if r.Code != 1 || !strings.Contains(r.Stderr, "missing module pytest: python3 on PATH is a pyenv shim") {
		t.Fatalf("zerg rush: exit %d, want 1 naming the missing pytest\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if data, err := os.ReadFile(filepath.Join(p.dir, ".zerg", "runs", "shortslug", "mockapi.jsonl")); err == nil && len(bytes.TrimSpace(data)) > 0 {
		t.Fatalf("the model got requests although the check failed:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(p.dir, ".zerg", "runs", "shortslug", "events.jsonl")); err == nil {
		t.Fatal("the rush started a run although the check failed")
	}

	// The control: the same pyenv, its Python with the system's pytest.
	root, _ = pyenvRoot(t, true)
	c := newProject(t, "python", "shortslug", "PYENV_ROOT="+root)
	pyenvPath(c)
	r = c.zerg("check", "shortslug")
	if r.Code != 0 || strings.Contains(r.Stdout, "PROBLEM") || !strings.Contains(r.Stdout, "expected  verification L1-truncate") {
		t.Fatalf("control: zerg check with pytest in pyenv's Python: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestCheckFindsChecksThatCannotFail: a verification made to pass whatever
// happens (`… || true`) is a warning of graph validate and of check, named
// with its construct; a task that modifies a file and whose verification
// passes on the base is warned of too; --strict makes both failures.
func TestCheckFindsChecksThatCannotFail(t *testing.T) {
	t.Parallel()
	p := newProject(t, "python", "shortslug")
	graph := filepath.Join(p.dir, ".zerg", "specs", "shortslug", "task-graph.json")
	b, err := os.ReadFile(graph)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), `"python3 -m pytest -q tests/test_unique.py"`, `"python3 -m pytest -q tests/test_unique.py || true"`, 1)
	// A task that modifies slug.py, checked by the suite that passes already.
	s = strings.Replace(s, `"files": {"create": ["slugkit/truncate.py", "tests/test_truncate.py"], "modify": []`,
		`"files": {"create": [], "modify": ["slugkit/slug.py"]`, 1)
	s = strings.Replace(s, `"python3 -m pytest -q tests/test_truncate.py"`, `"python3 -m pytest -q tests/test_slug.py"`, 1)
	if err := os.WriteFile(graph, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("commit", "-qam", "hasty graph")
	v := p.zerg("graph", "validate", "shortslug")
	if v.Code != 0 || !strings.Contains(v.Stderr, "task L1-unique: verification.command: \"python3 -m pytest -q tests/test_unique.py || true\" can never fail (`|| true` makes its status 0") {
		t.Errorf("graph validate: exit %d\n%s\n%s", v.Code, v.Stdout, v.Stderr)
	}
	if v := p.zerg("graph", "validate", "--strict", "shortslug"); v.Code != 2 {
		t.Errorf("graph validate --strict: exit %d, want 2", v.Code)
	}
	r := p.zerg("check", "shortslug")
	if r.Code != 0 || !strings.Contains(r.Stdout, "WARNING   task L1-unique: its verification `python3 -m pytest -q tests/test_unique.py || true` can never fail (`|| true`") ||
		!strings.Contains(r.Stdout, "WARNING   task L1-truncate: its verification `python3 -m pytest -q tests/test_slug.py` passes on the base already, though the task modifies slugkit/slug.py") {
		t.Errorf("zerg check: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := p.zerg("check", "--strict", "shortslug"); r.Code != 1 {
		t.Errorf("zerg check --strict: exit %d, want 1", r.Code)
	}
}
