package toolchain

import (
	"path"
	"slices"
	"strings"
)

// A verification runs a test runner of the repository's toolchain: an
// interpreter and its module (python3 -m pytest), a toolchain's own program
// (cargo test, go test, npm test), or a program a package's dependencies
// install in node_modules/.bin (jest, vitest, tsc). When that runner is
// missing, no model can write anything that passes: it is the machine's
// problem, found by zerg check before any model is called and never charged
// to a task (docs/toolchains.md, docs/check.md).

// NodeBins are programs a JavaScript project gets from its dependencies,
// in node_modules/.bin, not from the machine's PATH.
var NodeBins = []string{"jest", "vitest", "mocha", "ava", "tap", "tsc", "tsx", "ts-node", "eslint", "prettier",
	"playwright", "c8", "nyc", "tsup", "vite", "webpack", "rollup", "esbuild", "biome"}

// pythonTools are programs a Python project's tests or checks run, that a
// Python environment brings (pip install), beside the toolchain's own.
var pythonTools = []string{"nox", "black", "flake8", "pylint", "pyright", "hatch", "pdm", "isort", "coverage"}

// IsRunner reports whether name is a program of a known toolchain, or one a
// Python environment or cargo brings: a program the machine provides and no
// file of the repository decides. A package's program (NodeBins) is not one:
// the repository's package.json decides whether node_modules/.bin has it.
func IsRunner(name string) bool {
	for _, k := range known {
		if slices.Contains(k.commands, name) {
			return true
		}
	}
	return slices.Contains(pythonTools, name) || strings.HasPrefix(name, "cargo-")
}

// PythonModule is the interpreter and module of `python3 -m MODULE` in a
// command line ("", "" when it runs none); the first one wins.
func PythonModule(command string) (interpreter, module string) {
	words := strings.Fields(command)
	for i := 0; i+2 < len(words); i++ {
		w := strings.Trim(words[i], `"'`)
		base := path.Base(w)
		if (base == "python" || strings.HasPrefix(base, "python3") || strings.HasPrefix(base, "python2")) && words[i+1] == "-m" {
			return w, strings.Trim(words[i+2], `"'`)
		}
	}
	return "", ""
}
