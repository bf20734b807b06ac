package preflight

import (
	"slices"
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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := facts
			f.Command = c.cmd
			verdict, probs := Classify(c.exit, c.out, f)
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
