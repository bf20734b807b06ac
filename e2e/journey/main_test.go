// Package journey holds the end-to-end tests of the journey around zerg
// rush: plan → design → rush → review → merge, rehearsed with a built zerg
// binary, the real pinned Claude Code CLI, real git and the scripted
// Messages API, on a copy of the bundled demo project.
package journey

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	e2ebin.Main(m, "e2e/journey", func(t e2ebin.Tools) {
		repoRoot, zergBin, claudeBin = t.Root, t.Zerg, t.Claude
	})
}

// project is a copy of the demo project in its own git repository, without
// its task graph: the journey designs it.
type project struct {
	t    *testing.T
	dir  string
	home string
	tmp  string
	base string
}

func newProject(t *testing.T) *project {
	t.Helper()
	tmp := e2ebin.Traversable(t, t.TempDir())
	p := &project{t: t, dir: filepath.Join(tmp, "repo"), home: filepath.Join(tmp, "home"), tmp: tmp}
	if err := os.CopyFS(p.dir, os.DirFS(filepath.Join(repoRoot, "examples", "demo"))); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(p.home, 0o755)
	// The demo turns the security rules off so that it never goes to the
	// network; the journey's review checks them (nothing is fetched here).
	cfgFile := filepath.Join(p.dir, ".zerg", "config.yaml")
	cfg, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	on := strings.Replace(string(cfg), "security_rules:\n  enabled: false\n", "", 1)
	if on == string(cfg) {
		t.Fatal("the demo config no longer turns the security rules off; update this test")
	}
	if err := os.WriteFile(cfgFile, []byte(on), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(p.dir, ".zerg", "specs", "demo")
	graph, err := os.ReadFile(filepath.Join(spec, "task-graph.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(spec, "task-graph.json"))
	demoScenario, err := os.ReadFile(filepath.Join(spec, "scenario.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	scenario := strings.Replace(string(demoScenario), "\ntasks:\n", "\ntasks:\n"+journeyTasks(t, graph, reviewFindings(`{"severity": "minor", "title": "tests/run.sh checks one name of each command", "file": "tests/run.sh", "line": 3}`)), 1)
	if scenario == string(demoScenario) {
		t.Fatal("no tasks: line in the demo scenario")
	}
	if err := os.WriteFile(filepath.Join(spec, "scenario.yaml"), []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, ".gitignore"), []byte(".zerg/runs/\n.zerg/cache/\n.zerg/audit.jsonl*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("init", "-q", "-b", "main")
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "demo project")
	p.base = p.git("rev-parse", "HEAD")
	return p
}

func (p *project) env() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
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

type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

func (p *project) zerg(args ...string) result {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, zergBin, args...)
	cmd.Dir = p.dir
	cmd.Env = p.env()
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	r := result{stdout: so.String(), stderr: se.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		p.t.Fatalf("zerg %v: %v", args, err)
	}
	return r
}

func (p *project) specFile(name string) string {
	return filepath.Join(p.dir, ".zerg", "specs", "demo", name)
}

func (p *project) read(path string) string {
	p.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		p.t.Fatal(err)
	}
	return string(b)
}

// yamlString renders s as a YAML double-quoted scalar (JSON's escapes are
// YAML's).
func yamlString(t *testing.T, s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}

// reviewFindings is the review session's answer with these findings.
func reviewFindings(findings ...string) string {
	return `{"findings": [` + strings.Join(findings, ", ") + `]}`
}

const requirementsDoc = `# Greeter: requirements

## Goal
Greet and shout the names of a list, from shell scripts with no dependency.

## Functional requirements
1. data/names.txt lists the names, one per line.
2. bin/greet-all prints "Hello, NAME!" for every name.
3. bin/shout prints every name upper-cased.
4. tests/run.sh checks both and exits non-zero on a mismatch.

## Acceptance criteria
- sh tests/run.sh passes on the merged branch.

## Open questions
- Should an empty names file print nothing or an error?
- Is the list ever longer than a few hundred names?
`

const designDoc = `# Greeter: design

Two libraries (lib/greet.sh, lib/upper.sh), the data file, two commands built on them, and a test script.
Level 1 writes the independent pieces, level 2 the commands, level 3 the tests and the usage notes' last line.
`

// badGraph is the demo graph broken twice: L2-shout and L2-greet-all depend
// on each other (a cycle) and L1-docs claims data/names.txt, which L1-names
// creates at the same level (an ownership clash).
func badGraph(t *testing.T, graph []byte) string {
	var g map[string]any
	if err := json.Unmarshal(graph, &g); err != nil {
		t.Fatal(err)
	}
	for _, x := range g["tasks"].([]any) {
		task := x.(map[string]any)
		switch task["id"] {
		case "L2-greet-all":
			task["dependencies"] = append(task["dependencies"].([]any), "L2-shout")
		case "L2-shout":
			task["dependencies"] = append(task["dependencies"].([]any), "L2-greet-all")
		case "L1-docs":
			files := task["files"].(map[string]any)
			files["modify"] = []any{"data/names.txt"}
		}
	}
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// journeyTasks are the scenario tasks of plan, design (an invalid graph in
// round 1, the repaired one in round 2) and review, put before the demo's
// rush tasks.
func journeyTasks(t *testing.T, graph []byte, review string) string {
	q := func(s string) string { return yamlString(t, s) }
	return fmt.Sprintf(`  - name: plan
    match: "Plan demo:"
    turns:
      - tools: [{name: Glob, input: {pattern: "**/*"}}]
      - tools: [{name: Write, input: {file_path: .zerg-draft/requirements.md, content: %s}}]
      - text: "Wrote the requirements with two open questions."

  - name: design-round-1
    match: "Design demo round 1:"
    turns:
      - tools: [{name: Read, input: {file_path: .zerg-draft/requirements.md}}]
      - tools:
          - {name: Write, input: {file_path: .zerg-draft/design.md, content: %s}}
          - {name: Write, input: {file_path: .zerg-draft/task-graph.json, content: %s}}
      - text: "Wrote the design and the task graph."

  - name: design-round-2
    match: "Design demo round 2:"
    turns:
      - tools: [{name: Read, input: {file_path: .zerg-draft/task-graph.json}}]
      - tools: [{name: Write, input: {file_path: .zerg-draft/task-graph.json, content: %s}}]
      - text: "Removed the cycle and gave data/names.txt a single owner."

  - name: review
    match: "Review demo:"
    turns:
      - tools: [{name: Read, input: {file_path: tests/run.sh}}]
      - text: %s

`, q(requirementsDoc), q(designDoc), q(badGraph(t, graph)), q(string(graph)), q(review))
}
