package rush

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckNamesWhatTheEnvironmentLacks: on a project whose Go code needs a
// module no cache holds and whose gate needs a tool no PATH has, zerg check
// names each in one line and exits 1, and zerg rush stops with the same
// lines before a single request reaches the model. The control is the demo
// as it is: every failure there is the feature's, and the check passes.
func TestCheckNamesWhatTheEnvironmentLacks(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("SKIPPED: no go command on this machine")
	}
	p := newProject(t, func(dir string) {
		write := func(rel, s string) {
			if err := os.WriteFile(filepath.Join(dir, rel), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// A module path no cache on any machine holds.
		write("go.mod", "module example.com/greeter\n\ngo 1.22\n\nrequire example.invalid/nowhere v1.2.3\n")
		write("go.sum", "example.invalid/nowhere v1.2.3 h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\nexample.invalid/nowhere v1.2.3/go.mod h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n")
		write("dep.go", "package greeter\n\nimport _ \"example.invalid/nowhere\"\n")
		// An npm dependency no cache holds: npm ci --offline says ENOTCACHED,
		// which no rule of zerg check knows; the diagnostics engine does.
		write("package.json", `{"name": "greeter", "version": "1.0.0", "dependencies": {"zerg-test-not-cached": "1.0.0"}}`)
		write("package-lock.json", `{"name": "greeter", "version": "1.0.0", "lockfileVersion": 3, "requires": true,
 "packages": {"": {"name": "greeter", "version": "1.0.0", "dependencies": {"zerg-test-not-cached": "1.0.0"}},
  "node_modules/zerg-test-not-cached": {"version": "1.0.0", "resolved": "https://registry.npmjs.org/zerg-test-not-cached/-/zerg-test-not-cached-1.0.0.tgz",
   "integrity": "sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="}}}`)
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
			return strings.Replace(s, "\ngates:\n", "\ngates:\n  - name: build\n    command: go build ./...\n  - name: lint\n    command: zerg-test-no-such-linter run\n  - name: deps\n    command: npm ci --offline --no-audit --no-fund\n", 1)
		})
	})
	r := p.zerg("check", "demo")
	if r.code != 1 {
		t.Fatalf("zerg check: exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "  toolchains: go") {
		t.Errorf("check output does not name the go toolchain it found from go.mod:\n%s", r.stdout)
	}
	for _, want := range []string{
		"PROBLEM   gate build: missing module example.invalid/nowhere@v1.2.3",
		"PROBLEM   gate lint: missing tool zerg-test-no-such-linter",
		"PROBLEM   gate deps: offline_cache_miss",
	} {
		if n := strings.Count(r.stdout, want); n != 1 {
			t.Errorf("check output has %d lines with %q, want 1:\n%s", n, want, r.stdout)
		}
	}
	var rep struct {
		Problems int `json:"problems"`
		Results  []struct {
			Verdict string `json:"verdict"`
		} `json:"results"`
	}
	j := p.zerg("check", "demo", "--json")
	if err := json.Unmarshal([]byte(j.stdout), &rep); err != nil || j.code != 1 || rep.Problems != 3 {
		t.Fatalf("check --json: exit %d, %d problems (%v)\n%s", j.code, rep.Problems, err, j.stdout)
	}
	if !strings.Contains(j.stdout, `"duration_ms"`) || strings.Contains(j.stdout, `"seconds"`) {
		t.Errorf("check --json: durations are not *_ms (docs/json.md):\n%s", j.stdout)
	}

	r = p.zerg("rush", "demo", "--rehearse")
	if r.code != 1 || !strings.Contains(r.stderr, "missing tool zerg-test-no-such-linter") || !strings.Contains(r.stderr, "the environment lacks") {
		t.Fatalf("rush: exit %d, want 1 naming the problems\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if data, err := os.ReadFile(filepath.Join(p.dir, ".zerg", "runs", "demo", "mockapi.jsonl")); err == nil && len(strings.TrimSpace(string(data))) > 0 {
		t.Fatalf("the model got requests although the check failed:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(p.dir, ".zerg", "runs", "demo", "events.jsonl")); err == nil {
		t.Fatal("the rush started a run although the check failed")
	}
	p.assertUserUntouched()
}

// The control: the demo's verification commands all fail on the base for
// want of the feature, which is expected, and its rush goes on.
func TestCheckOfTheDemoIsClean(t *testing.T) {
	t.Parallel()
	p := newProject(t, nil)
	r := p.zerg("check", "demo")
	if r.code != 0 || !strings.Contains(r.stdout, "no environment problem") || strings.Contains(r.stdout, "PROBLEM") {
		t.Fatalf("zerg check of the demo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "expected  verification L1-names") {
		t.Fatalf("the demo's first task is not an expected failure:\n%s", r.stdout)
	}
}

// TestCheckUsesTheUsersPyenv: a Python project's verification in the
// sandbox runs the interpreter the user's PATH finds in pyenv (which lives in
// the hidden home), not the system's. The control turns the toolchain off:
// the same command then finds the system's python3.
func TestCheckUsesTheUsersPyenv(t *testing.T) {
	t.Parallel()
	root := os.Getenv("PYENV_ROOT")
	if root == "" {
		home, _ := os.UserHomeDir()
		root = filepath.Join(home, ".pyenv")
	}
	py, err := exec.LookPath("python3")
	if err != nil || !strings.HasPrefix(py, root+"/") {
		t.Skip("SKIPPED: python3 on PATH is not pyenv's on this machine")
	}
	graph := `{"feature":"demo","version":"2.0","tasks":[{"id":"L1-py","title":"Python","level":1,"description":"x",
 "files":{"create":["py.txt"],"modify":[],"read":[]},
 "verification":{"command":"python3 -c 'import sys; assert sys.prefix.startswith(\"` + root + `/\"), sys.prefix'","timeout_seconds":60},
 "estimate_minutes":1}]}`
	p := newProject(t, func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "pyproject.toml"), []byte("[project]\nname = \"demo\"\nversion = \"0.1\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".zerg", "specs", "demo", "task-graph.json"), []byte(graph), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	verdict := func() (string, result) {
		t.Helper()
		// The test's HOME is its own: the user's pyenv is found through
		// PYENV_ROOT, as pyenv's own setup exports it.
		r := p.zergEnv(append(p.env(), "PYENV_ROOT="+root), "check", "demo", "--json")
		var rep struct {
			Results []struct {
				Names   []string `json:"names"`
				Verdict string   `json:"verdict"`
			} `json:"results"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("check --json: %v\n%s\n%s", err, r.stdout, r.stderr)
		}
		for _, res := range rep.Results {
			if len(res.Names) > 0 && res.Names[0] == "L1-py" {
				return res.Verdict, r
			}
		}
		t.Fatalf("no result for L1-py:\n%s", r.stdout)
		return "", r
	}
	if v, r := verdict(); v != "pass" {
		t.Fatalf("the verification does not pass with pyenv's python: %s\n%s\n%s", v, r.stdout, r.stderr)
	}
	editFile(t, filepath.Join(p.dir, ".zerg", "config.yaml"), func(s string) string {
		return s + "\ntoolchains:\n  off: [python]\n"
	})
	p.git("commit", "-qam", "python off")
	if v, r := verdict(); v == "pass" {
		t.Fatalf("control: with the python toolchain off the sandbox still found pyenv's python\n%s", r.stdout)
	}
}
