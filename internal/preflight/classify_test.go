package preflight

import (
	"slices"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	facts := Facts{
		GoModule: "example.com/m",
		Planned:  []string{"lib/greet.sh", "internal/short/short.go", "src/newmod.py", "bin/tool"},
		OnPath:   func(n string) bool { return slices.Contains([]string{"go", "sh", "grep"}, n) },
		Exists:   func(rel string) bool { return slices.Contains([]string{"go.mod", "pkg"}, rel) },
	}
	cases := []struct {
		name, cmd, out string
		exit           int
		verdict        string
		want           []Problem
	}{
		{"passes", "go test ./...", "ok  example.com/m 0.1s", 0, Pass, nil},
		{"a test of the feature fails", "go test ./...", "--- FAIL: TestShort\nFAIL example.com/m/internal/short", 1, Expected, nil},
		{"the feature's own package is missing", "go test ./internal/short",
			"short_test.go:3:8: no required module provides package example.com/m/internal/short; to add it:", 1, Expected, nil},
		{"a module not in the cache", "go test ./...",
			"go: github.com/spf13/cast@v1.7.1: module lookup disabled by GOPROXY=off", 1, Environment,
			[]Problem{{Kind: MissingModule, Name: "github.com/spf13/cast@v1.7.1"}}},
		{"a module the go command tried to download", "go vet ./...",
			"go: downloading github.com/spf13/cast v1.5.0\ndep.go:3:8: module lookup disabled by GOPROXY=off", 1, Environment,
			[]Problem{{Kind: MissingModule, Name: "github.com/spf13/cast@v1.5.0"}}},
		{"a module cache the go command cannot write", "go test ./...",
			"go: downloading github.com/spf13/cast v1.5.0\ndep.go:3:8: open /root/go/pkg/mod/cache/download/github.com/spf13/cast/@v/v1.5.0.lock: permission denied", 1, Environment,
			[]Problem{{Kind: MissingModule, Name: "github.com/spf13/cast@v1.5.0"}}},
		{"a package no module provides", "go vet ./...",
			"x.go:4:2: cannot find module providing package github.com/foo/bar: import lookup disabled by -mod=vendor", 1, Environment,
			[]Problem{{Kind: MissingModule, Name: "github.com/foo/bar"}}},
		{"a missing go.sum entry", "go build ./...",
			"main.go:3:8: missing go.sum entry for module providing package github.com/foo/baz (imported by example.com/m); to add:", 1, Environment,
			[]Problem{{Kind: MissingModule, Name: "github.com/foo/baz"}}},
		{"a tool not on PATH", "golangci-lint run", "sh: 1: golangci-lint: not found", 127, Environment,
			[]Problem{{Kind: MissingTool, Name: "golangci-lint"}}},
		{"bash says command not found", "bash -c 'ruff check'", "bash: line 1: ruff: command not found", 127, Environment,
			[]Problem{{Kind: MissingTool, Name: "ruff"}}},
		{"a script the feature writes", "tool --x", "sh: 1: tool: not found", 127, Expected, nil},
		{"a function of a sourced file the feature writes", ". ./lib/greet.sh && greet Ada", "sh: 1: greet: not found", 127, Expected, nil},
		{"node package missing", "node --test", "Error: Cannot find module 'lodash'\nRequire stack:", 1, Environment,
			[]Problem{{Kind: MissingModule, Name: "lodash"}}},
		{"node relative module is the feature", "node --test", "Error: Cannot find module './short'", 1, Expected, nil},
		{"python package missing", "python3 -m pytest", "ModuleNotFoundError: No module named 'requests'", 1, Environment,
			[]Problem{{Kind: MissingModule, Name: "requests"}}},
		{"python module of the feature", "python3 -m pytest", "ModuleNotFoundError: No module named 'newmod'", 1, Expected, nil},
		{"python module of the repository", "python3 -m pytest", "ModuleNotFoundError: No module named 'pkg.sub'", 1, Expected, nil},
		{"network refused", "npm install", "npm ERR! getaddrinfo EAI_AGAIN registry.npmjs.org", 1, Environment,
			[]Problem{{Kind: Network, Name: "registry.npmjs.org"}}},
		{"curl", "curl -fsS https://example.com/x", "curl: (6) Could not resolve host: example.com", 6, Environment,
			[]Problem{{Kind: Network, Name: "example.com"}}},
		{"a full disk", "go build -o small/uuidgen ./cmd/uuidgen",
			"github.com/google/uuid/cmd/uuidgen: go build github.com/google/uuid/cmd/uuidgen: copying /tmp/go-build1180593923/b001/exe/a.out to /work/project/small/uuidgen: write /work/project/small/uuidgen: no space left on device\n", 1, Environment,
			[]Problem{{Kind: DiskFull, Name: "no space left"}}},
		// What no rule knows, the diagnostics engine does (real outputs,
		// from internal/diagnose's corpus).
		{"npm without its cache", "npm ci --offline",
			"npm error code ENOTCACHED\nnpm error request to http://npm.internal.invalid/supports-color failed: cache mode is 'only-if-cached' but no cached response is available.\n", 1, Environment,
			[]Problem{{Kind: "offline_cache_miss", Name: "offline_cache_miss"}}},
		{"a test that needs a terminal", "go test ./...",
			"--- FAIL: TestRedStringHasEscapes (0.00s)\n    color_test.go:9: RedString = \"error\", want \"\\x1b[31merror\\x1b[0m\"\nFAIL\nFAIL\tgithub.com/fatih/color\t0.003s\nFAIL\n", 1, Environment,
			[]Problem{{Kind: "terminal_dependent_output", Name: "terminal_dependent_output"}}},
		// The control: the engine's task patterns are the expected failure.
		{"a wrong value", "go test ./...",
			"--- FAIL: TestParse (0.00s)\n    parse_test.go:12: Parse(\"1s\") = 0, want 1000\nFAIL\nFAIL\texample.com/m\t0.01s\nFAIL\n", 1, Expected, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := facts
			f.Command = c.cmd
			verdict, probs, h := Diagnose(c.exit, c.out, f)
			if (c.exit == 0) != (h == nil) {
				t.Errorf("exit %d, diagnosis %v", c.exit, h)
			}
			if verdict != c.verdict {
				t.Fatalf("verdict %s, want %s (problems %+v)", verdict, c.verdict, probs)
			}
			if len(probs) != len(c.want) {
				t.Fatalf("problems %+v, want %+v", probs, c.want)
			}
			for i := range probs {
				if probs[i].Kind != c.want[i].Kind || probs[i].Name != c.want[i].Name {
					t.Fatalf("problem %+v, want %+v", probs[i], c.want[i])
				}
			}
		})
	}
}

// The control of the engine's cases above: the rules alone call npm's
// ENOTCACHED the feature's expected failure, as zerg check did before.
func TestRulesAloneMissTheOfflineCache(t *testing.T) {
	out := "npm error code ENOTCACHED\nnpm error request to http://npm.internal.invalid/supports-color failed: cache mode is 'only-if-cached' but no cached response is available.\n"
	if v, _ := classify(out, Facts{Command: "npm ci --offline"}); v != Expected {
		t.Fatalf("the rules say %s; the engine is not what tells it", v)
	}
	if v, _ := Classify(1, out, Facts{Command: "npm ci --offline"}); v != Environment {
		t.Fatalf("Classify says %s, want %s", v, Environment)
	}
}

// A missing test runner is the environment's, named in the user's terms;
// the outputs are what the tools print (internal/diagnose's corpus, and
// pyenv 2.6.30's shims).
func TestMissingRunners(t *testing.T) {
	pyenvShim := func(string) Resolved {
		return Resolved{Path: "/root/.pyenv/shims/python3", Real: "/root/.pyenv/versions/3.11.7/bin/python3"}
	}
	cases := []struct {
		name, cmd, out string
		exit           int
		facts          Facts
		verdict        string
		want           Problem // Kind, Name and a part of Why
	}{
		{"python3 on PATH is a pyenv shim without pytest", "python3 -m pytest -q",
			"/root/.pyenv/versions/3.11.7/bin/python3: No module named pytest\n", 1, Facts{Resolve: pyenvShim}, Environment,
			Problem{Kind: MissingModule, Name: "pytest", Why: "python3 on PATH is a pyenv shim (/root/.pyenv/shims/python3) whose interpreter, /root/.pyenv/versions/3.11.7/bin/python3 (pyenv's 3.11.7), has no pytest; install pytest for it (/root/.pyenv/versions/3.11.7/bin/python3 -m pip install pytest"}},
		{"a virtual environment without mypy", "/tmp/diag-venv-bare/bin/python3 -m mypy settings",
			"/tmp/diag-venv-bare/bin/python3: No module named mypy\n", 1,
			Facts{Resolve: func(p string) Resolved { return Resolved{Path: p, Real: p, Venv: true} }}, Environment,
			Problem{Kind: MissingModule, Name: "mypy", Why: "is the virtual environment's /tmp/diag-venv-bare/bin/python3, which has no mypy"}},
		{"pyenv's shim of a program the selected Python lacks", "nox -s tests",
			"pyenv: nox: command not found\n\nThe `nox' command exists in these Python versions:\n  3.12.1\n\nNote: See 'pyenv help global' for tips on allowing multiple\n      Python versions to be found at the same time.\n", 127,
			Facts{OnPath: func(string) bool { return true }}, Environment,
			Problem{Kind: MissingTool, Name: "nox", Why: "nox on PATH is a pyenv shim, and the Python pyenv selects has no nox (the versions that have it: 3.12.1)"}},
		{"a cargo subcommand", "cargo nextest run",
			"error: no such command: `nextest`\n\nhelp: a command with a similar name exists: `test`\n", 101, Facts{}, Environment,
			Problem{Kind: MissingTool, Name: "cargo-nextest", Why: "cargo has no nextest subcommand here"}},
		{"npm test without node_modules", "npm test",
			"\n> semver@7.6.3 test\n> jest\n\nsh: 1: jest: not found\n", 127, Facts{OnPath: func(string) bool { return false }}, Environment,
			Problem{Kind: MissingTool, Name: "jest", Why: "the workspace, a clone of the repository, has no node_modules: install them in the command first (npm ci --offline"}},
		{"node_modules/.bin named by path", "node_modules/.bin/tsc --noEmit",
			"/bin/bash: line 1: node_modules/.bin/tsc: No such file or directory\n", 127, Facts{}, Environment,
			Problem{Kind: MissingTool, Name: "tsc", Why: "no node_modules"}},
		// The controls: a module of the repository is the feature's.
		{"python -m of the project's own module", "python3 -m settings.main",
			"/usr/bin/python3: No module named settings.main\n", 1, Facts{Exists: func(rel string) bool { return rel == "settings" }}, Expected, Problem{}},
		{"python -m of a module the graph plans", "python3 -m pytest -q",
			"/usr/bin/python3: No module named pytest\n", 1, Facts{Planned: []string{"pytest.py"}}, Expected, Problem{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.facts
			f.Command = c.cmd
			verdict, probs := Classify(c.exit, c.out, f)
			if verdict != c.verdict {
				t.Fatalf("verdict %s, want %s (%+v)", verdict, c.verdict, probs)
			}
			if c.want.Kind == "" {
				return
			}
			if len(probs) == 0 || probs[0].Kind != c.want.Kind || probs[0].Name != c.want.Name || !strings.Contains(probs[0].Why, c.want.Why) {
				t.Fatalf("problems %+v\nwant %+v", probs, c.want)
			}
			// At run time only what no worker's change can cause is certain:
			// not a package's program, which package.json decides.
			node := c.want.Name == "jest" || c.want.Name == "tsc"
			if p, ok := MissingRunner(c.cmd, c.out); ok == node || ok && p.Name != c.want.Name {
				t.Errorf("MissingRunner: %+v, %v", p, ok)
			}
		})
	}
	if p, ok := MissingRunner("sh tests/run.sh", "tests/run.sh: 3: greet: not found\n"); ok {
		t.Errorf("a function of the feature is a missing runner: %+v", p)
	}
}
