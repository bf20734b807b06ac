// Package toolchain finds the toolchains a repository is built with, from
// its files, and says what a sandboxed worker, its verification and the
// gates need of the host to use them offline: the user's package caches and
// toolchain installs, read-only, and warm build caches of zerg's own
// (docs/toolchains.md).
package toolchain

import (
	"os"
	"path/filepath"
	"slices"
)

// Toolchain is one toolchain a repository uses.
type Toolchain struct {
	// Name is the toolchain's name in the config (toolchains.off) and in
	// zerg's messages: go, node, python, rust, elixir, make, mise.
	Name string
	// Evidence is the file at the repository's root it was detected from.
	Evidence string
	// Commands are the programs it brings, the names a worker runs: the
	// subprocess-mode policy allows them.
	Commands []string
}

// known lists every toolchain zerg detects, in the order Detect reports
// them, with the files that reveal it (the first found is the evidence).
var known = []struct {
	name     string
	files    []string
	commands []string
}{
	{"go", []string{"go.mod", "go.work"}, []string{"go", "gofmt"}},
	{"node", []string{"package.json", "package-lock.json", "pnpm-lock.yaml", "yarn.lock", "bun.lockb"},
		[]string{"node", "npm", "npx", "pnpm", "yarn", "bun", "corepack"}},
	{"python", []string{"pyproject.toml", "uv.lock", "requirements.txt", "requirements-dev.txt", "setup.py", "setup.cfg", "Pipfile", "tox.ini"},
		[]string{"python", "python3", "pip", "pip3", "uv", "uvx", "pytest", "tox", "ruff", "mypy", "poetry"}},
	{"rust", []string{"Cargo.toml", "Cargo.lock"}, []string{"cargo", "rustc", "rustfmt", "rustup"}},
	{"elixir", []string{"mix.exs", "mix.lock"}, []string{"mix", "elixir", "erl", "iex"}},
	{"make", []string{"Makefile", "GNUmakefile", "makefile"}, []string{"make"}},
	{"mise", []string{"mise.toml", ".mise.toml", ".tool-versions"}, []string{"mise", "asdf"}},
}

// Names are the names of every toolchain Detect knows, for config checks.
func Names() []string {
	n := make([]string, len(known))
	for i, k := range known {
		n[i] = k.name
	}
	return n
}

// Detect returns the toolchains whose files are at root, in a fixed order.
// Only the root is looked at: that is where every tool looks first, and a
// nested project (testdata, examples) does not make a toolchain needed.
func Detect(root string) []Toolchain {
	var found []Toolchain
	for _, k := range known {
		for _, f := range k.files {
			if fi, err := os.Lstat(filepath.Join(root, f)); err == nil && fi.Mode().IsRegular() {
				found = append(found, Toolchain{Name: k.name, Evidence: f, Commands: slices.Clone(k.commands)})
				break
			}
		}
	}
	return found
}

// Has reports whether tcs holds the toolchain called name.
func Has(tcs []Toolchain, name string) bool {
	return slices.ContainsFunc(tcs, func(t Toolchain) bool { return t.Name == name })
}
